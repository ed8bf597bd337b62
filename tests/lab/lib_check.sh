#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The check helper, preflight and boot loop of the lab tests; source after
# scripts/lab/lab.sh.  Not a test itself: the runner takes only
# tests/lab/test_*.sh.
#
#   check_init [DIR]            per-check logs in DIR (default
#                               $LAB_DIR/checks), fail=0; perf_checks_init
#                               is the same
#   check WHAT CMD...           one TAP line for CMD: its stdout and stderr
#                               go to $OUT/N.log, which a "not ok" line
#                               names; on failure fail=1 and status 1
#   need WHAT CMD...            check, and exit 1 if it fails: for steps
#                               without which nothing below means anything
#   preflight WHAT...           rnic, rnic_perf, rnic_scale: DKMS-installed for the
#                               kernel the lab boots (lab_kver); rnicsim:
#                               built (built now if missing).  Else one
#                               "not ok" line and exit 1
#   boot_vms [--timeout S] N... wait for each VM: one line per VM, then
#                               exit 1 if any did not boot
#   check_vms "N..." WHAT CMD...
#                               the check "vmN: WHAT" of "CMD... N" for
#                               each VM N, run in all of them at once
#
# A test prints its plan (lab_plan) right after lab_start and then exactly
# that many lines, whatever fails: so a non-fatal check is written
# "check ... || true" (the status is for "if check ..." and "|| exit 1"),
# and a loop of checks has a fixed count.

# check_init [DIR]: start counting checks; their logs go to DIR.
check_init() {
	OUT="${1:-$LAB_DIR/checks}"
	mkdir -p "$OUT"
	# The test's verdict: it ends with exit "$fail".
	# shellcheck disable=SC2034
	fail=0
	nchk=0
}
# shellcheck disable=SC2120 # the name lib_perf.sh gave check_init
perf_checks_init() { check_init "$@"; }

check() {
	local what="$1" f t0 rc=0
	shift
	nchk=$((nchk + 1))
	f="$OUT/$nchk.log"
	t0="$(lab__now_us)"
	# Not in a subshell: a command may set variables for later checks.
	"$@" >"$f" 2>&1 || rc=$?
	# A boot check's time is boot time (lab_wait_ready counts it).
	[ "$1" = lab_wait_ready ] || lab__acct check "$t0"
	check__time "$t0" "$what"
	if [ "$rc" = 0 ]; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$f"
		# shellcheck disable=SC2034 # read by the test's exit
		fail=1
		return 1
	fi
}

need() { check "$@" || exit 1; }

# check__time START_US WHAT: the check's wall time, in $OUT/times ("SECONDS
# WHAT"): scripts/test.sh's breakdown lists the longest checks of a run.
check__time() {
	echo "$(lab_elapsed "$1") $SUITE: $2" >>"$OUT/times"
}

# check_vms "N..." WHAT CMD...: the check "vmN: WHAT" of "CMD... N" for
# every VM N, run in all of them at once, each in a subshell (so CMD sets
# no variable for later checks); the lines follow in the order given.  A
# modprobe rnic is 6-10 s of a debug guest's vCPU: one VM after the other
# left a host core idle that long.  Status 1 if any failed.
check_vms() {
	local vms what="$2" n i t0 rc=0 pids=() base="$nchk"
	read -r -a vms <<<"$1"
	shift 2
	t0="$(lab__now_us)"
	for i in "${!vms[@]}"; do
		("$@" "${vms[$i]}") >"$OUT/$((base + i + 1)).log" 2>&1 &
		pids+=($!)
	done
	for i in "${!vms[@]}"; do
		nchk=$((base + i + 1))
		n="${vms[$i]}"
		if wait "${pids[$i]}"; then
			lab_ok "$SUITE: vm$n: $what"
		else
			lab_not_ok "$SUITE: vm$n: $what" "$OUT/$nchk.log"
			# shellcheck disable=SC2034 # read by the test's exit
			fail=1
			rc=1
		fi
	done
	lab__acct check "$t0"
	check__time "$t0" "vm${vms[*]}: $what"
	return "$rc"
}


# preflight WHAT...: what the test needs from the host, each checked or
# built; a missing piece is one "not ok" line and the end of the test.
preflight() {
	local kver what
	kver="$(lab_kver)" || exit 1
	for what in "$@"; do
		case "$what" in
		rnicsim)
			# Another part of the tree: build it if the binary is missing.
			if [ ! -x "$LAB_RNICSIM" ] &&
				! make -C "$LAB_REPO/tools/rnicsim" >"$LAB_DIR/rnicsim-build.log" 2>&1; then
				lab_not_ok "$SUITE: rnicsim builds" "$LAB_DIR/rnicsim-build.log"
				exit 1
			fi
			;;
		rnic | rnic_perf | rnic_scale)
			# RNIC_PERF_KO, RNIC_SCALE_KO: the test insmods that file
			# instead.
			[ "$what" = rnic_perf ] && [ -n "${RNIC_PERF_KO:-}" ] && continue
			[ "$what" = rnic_scale ] && [ -n "${RNIC_SCALE_KO:-}" ] && continue
			if ! modinfo -k "$kver" -n "$what" 2>/dev/null | grep -q "/updates/dkms/"; then
				lab_not_ok "$SUITE: $what is DKMS-installed for $kver (run scripts/dkms-install.sh $kver)" \
					"/lib/modules/$kver"
				exit 1
			fi
			;;
		*)
			lab_not_ok "$SUITE: preflight: unknown requirement '$what'" "$0"
			exit 1
			;;
		esac
	done
}

# boot_vms [--timeout S] N...: VMs started with lab_vm, in the order given.
# Every VM gets its line even if an earlier one failed: it tells whether
# the failure is one VM's or the lab's.
boot_vms() {
	local wait_args=() n bad=0
	if [ "${1:-}" = --timeout ]; then
		wait_args=(--timeout "$2")
		shift 2
	fi
	for n in "$@"; do
		check "vm$n boots to the agent" lab_wait_ready "$n" "${wait_args[@]}" || bad=1
	done
	[ "$bad" = 0 ] || exit 1
}
