#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole rnic test suite, from a fresh Debian 12 machine (as root):
#
#   bash scripts/test.sh
#
# Stages: dependencies (apt), module build and static checks, rnicsim unit
# tests (under ASan and UBSan), the debug kernel (KASAN, lockdep, kmemleak,
# KUnit; cached), KUnit in it under QEMU, DKMS install for the Debian 6.12
# lab kernel, the debug kernel and Debian 12's default 6.1 kernel, lab
# tests (VMs under QEMU) on the kernels each test names in its
# "# lab-kernels:" line. Every check prints one "ok - ..." or "not ok - ..."
# line; the run ends with "N passed, N failed" and exits non-zero if
# anything failed. Full logs: $RNIC_TEST_DIR.
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
export RNIC_TEST_DIR=${RNIC_TEST_DIR:-/tmp/rnic-test}
cd "$REPO" || exit 1

# The machine's lab lock (scripts/lab/README.md).
LAB_LOCK=${RNIC_LAB_LOCK:-/tmp/rnic-lab-cpu.lock}
PASS=0
FAIL=0
TIMES=()

# run_stage NAME TIMEOUT: run stage_NAME in a child (so timeout can end
# it), echo its ok/not ok lines, count them; a failing stage that printed
# no "not ok" counts as one failure.
run_stage() {
	start_stage "$1" "$2" 0
	wait "$!"
	finish_stage "$1"
}

# start_stage NAME TIMEOUT NICE: start stage_NAME in the background at
# that niceness; finish_stage NAME collects it.
start_stage() {
	local name=$1 tmo=$2
	echo "== $name" >&2
	echo "$SECONDS" >"$RNIC_TEST_DIR/$name.t0"
	(
		nice -n "$3" timeout --foreground -k 30 "$tmo" \
			bash "$REPO/scripts/test.sh" --stage "$name" \
			>"$RNIC_TEST_DIR/$name.log" 2>&1
		echo "$? $tmo $SECONDS" >"$RNIC_TEST_DIR/$name.rc"
	) &
}

# finish_stage NAME: wait for a stage start_stage started, print its
# ok/not ok lines and count them; its status.
finish_stage() {
	local name=$1 log="$RNIC_TEST_DIR/$1.log" rc tmo t1 ok nok
	while [ ! -s "$RNIC_TEST_DIR/$name.rc" ]; do
		wait -n 2>/dev/null || sleep 1
	done
	read -r rc tmo t1 <"$RNIC_TEST_DIR/$name.rc"
	ok=$(grep -c '^ok - ' "$log")
	nok=$(grep -c '^not ok - ' "$log")
	grep -E '^(not )?ok - ' "$log"
	if [ "$rc" != 0 ] && [ "$nok" = 0 ]; then
		if [ "$rc" = 124 ]; then
			echo "not ok - $name: timed out after ${tmo}s (see $log)"
		else
			echo "not ok - $name: exit $rc: $(grep -v '^ok - ' "$log" | tail -1) (see $log)"
		fi
		nok=1
	fi
	PASS=$((PASS + ok))
	FAIL=$((FAIL + nok))
	TIMES+=("$(printf '%-18s %5d s  (%d ok, %d not ok)' "$name" \
		$((t1 - $(cat "$RNIC_TEST_DIR/$name.t0"))) "$ok" "$nok")")
	return "$rc"
}

# A check made of one command: ok when it exits 0.
one_check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		return 1
	fi
}

stage_deps() { one_check "deps: scripts/install-deps.sh" bash scripts/install-deps.sh; }

# In a copy of the tree: the stage runs beside the lab, and "make clean"
# or a W=1 rebuild must not touch what DKMS and KUnit copy from.
stage_build() {
	local kver kdir tree="$RNIC_TEST_DIR/tree"
	# Kbuild compiles, and runs sparse on, one file at a time unless
	# told otherwise: this stage kept one core of two busy (213 s).
	export MAKEFLAGS="-j$(nproc)"
	rm -rf "$tree" && mkdir -p "$tree/tools" &&
		cp -a "$REPO/Makefile" "$REPO/Kbuild" "$REPO/drivers" "$REPO/include" \
			"$REPO/kunit" "$REPO/scripts" "$REPO/Documentation" "$tree/" &&
		cp -a "$REPO/tools/rnic_perf" "$REPO/tools/rnic_scale" "$tree/tools/" &&
		cd "$tree" || return 1
	kver=$(cat /var/cache/rnic/kver) || return 1
	kdir=/lib/modules/$kver/build
	# One compile per kernel: make check's W=1 + sparse build is also
	# the build of the modules (a plain "make" before it was a third
	# compile whose result nothing read).
	one_check "build: make check (W=1, sparse, checkpatch --strict)" make KDIR="$kdir" check
	one_check "build: rnic.ko, rnic_perf.ko and rnic_scale.ko against $kver headers" \
		test -s rnic.ko -a -s tools/rnic_perf/rnic_perf.ko -a -s tools/rnic_scale/rnic_scale.ko
	one_check "build: modinfo documents every parameter" scripts/check-modinfo.sh rnic.ko
	# Debian 12's default kernel (drivers/rnic_compat.h) stays clean too;
	# checkpatch and the import check do not depend on the kernel.
	kver=$(cat /var/cache/rnic/kver61) || return 1
	one_check "build: W=1 + sparse against Debian 12's $kver headers" \
		make KDIR="/lib/modules/$kver/build" check-build
}

# The model the lab runs; its unit tests are stage rnicsim_tests.
stage_rnicsim() { one_check "build: rnicsim" make -C tools/rnicsim; }

# Under ASan and UBSan: the random-corruption and malformed-input tests
# find over-reads only there.
stage_rnicsim_tests() { make -C tools/rnicsim test-asan; }

stage_debugkernel() {
	one_check "debug kernel: built and installed (scripts/debug-kernel.config)" \
		bash scripts/debug-kernel.sh
}

stage_kunit() { bash scripts/kunit.sh; }

# Under the lab lock: a lab test running elsewhere on this machine loads
# the modules DKMS is about to replace.
# dkms-install.sh also builds the userspace provider (its imports checked
# against Debian 12's libibverbs, its unit tests run) and installs it.
stage_dkms() {
	one_check "dkms: add/build/install for the lab kernel, the debug kernel and Debian 12's 6.1; librnic provider installed" \
		flock "$LAB_LOCK" bash scripts/dkms-install.sh "$(cat /var/cache/rnic/kver)" \
		"$(cat /var/cache/rnic/debug-kver)" "$(cat /var/cache/rnic/kver61)"
	one_check "dkms: Debian's libibverbs gives librnic rnic devices and nothing else (fake sysfs)" \
		bash scripts/rdma-core.sh match-test
}

# lab_test FILE LABEL KVER: run one lab test on one kernel; its TAP lines
# gain the label ("lab(debug): ...").  A test must print its plan
# ("1..N") and N ok/not ok lines: one that stopped early (set -e, a VM
# that died) fails here even if every line it printed was ok.
lab_test() {
	local t="$1" label="$2" kver="$3" name log rc plan n
	name="$(basename "$t" .sh)"
	log="$RNIC_TEST_DIR/lab/$name-$label.log"
	echo "-- $t on $label ($kver)" >&2
	# Each kernel's run has its own VM logs: a test may run on two
	# kernels at once.
	RNIC_LAB_DIR="${RNIC_LAB_DIR:-/tmp/rnic-lab}/$label" RNIC_LAB_KVER="$kver" \
		bash "$t" >"$log" 2>&1
	rc=$?
	sed -nE "s/^(not )?ok - lab: /\1ok - lab($label): /p" "$log"
	grep '^# ' "$log" >&2
	plan="$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$log" | head -1)"
	n="$(grep -cE '^(not )?ok - ' "$log")"
	if [ -z "$plan" ]; then
		echo "not ok - lab($label): $name: prints its TAP plan (see $log)"
	elif [ "$n" != "$plan" ]; then
		echo "not ok - lab($label): $name: planned $plan checks, printed $n (see $log)"
	elif [ "$rc" != 0 ] && ! grep -q '^not ok - ' "$log"; then
		echo "not ok - lab($label): $name: exit $rc with every check ok (see $log)"
	fi
}

# How long each lab test took in the last run on this machine ("NAME-LABEL
# WALL CPU": seconds of wall time, and of host CPU time its QEMUs,
# rnicsims and captures used, from its "# lab: time:" lines): the lab
# starts the longest first.  A test this machine has not run yet takes
# its figures from tests/lab/lab-times (a warm run's on a 2-core
# machine), so that a cold run starts the longest first too.
LAB_TIMES=/var/cache/rnic/lab-times
LAB_TIMES_DEFAULT="$REPO/tests/lab/lab-times"
# How many VMs may run at once: one per host core. The guests are
# single-vCPU TCG, so two one-VM tests share a 2-core machine without
# slowing each other. More does not pay, although a two-VM test keeps
# only 0.6-1.4 cores busy and the host is ~75% busy through the lab:
# admitting tests while their CPU time over wall time summed to the
# cores (2026-11-28) kept the host 93% busy, but the tests used 18% more
# CPU time (2364 -> 2791 s), the lab took as long (2208 s, 2132-2282
# before) and the niced build stage 1547 s instead of 463; at 2.5 cores
# (2026-11-27) 30-55% more CPU each. The two cores do not add up: two
# CPU-bound processes at once ran at 100% and 57% of one alone.
LAB_VMS=${RNIC_LAB_VMS:-$(nproc)}

# lab_weight FILE: the VMs a test keeps busy at once: its "# lab-weight:"
# line if it has one (a test whose lab_vm lines are scenarios run one
# after another), else the lab_vm lines it has, at most 2 (a third VM,
# like netdev's virtio peer, mostly idles); a test that starts its VMs in
# a loop counts 2.
lab_weight() {
	local n
	n="$(sed -n 's/^# lab-weight: *\([12]\)$/\1/p' "$1" | head -1)"
	[ -z "$n" ] || { echo "$n"; return; }
	n="$(grep -cE '^[[:space:]]*lab_vm [0-9]' "$1")"
	if [ "$n" = 1 ]; then echo 1; else echo 2; fi
}

# lab_est NAME-LABEL: the test's wall time in the last run here, else in
# the repository's figures; nothing if neither has it.
lab_est() {
	cat "$LAB_TIMES" "$LAB_TIMES_DEFAULT" 2>/dev/null |
		awk -v n="$1" '$1 == n { print $2; exit }'
}

stage_lab() {
	local t k kver kernels name est queue=() job used=0 w i
	local -A run_w=() run_job=()
	mkdir -p "$RNIC_TEST_DIR/lab"
	# The lab runs alone on this machine (2 cores: another lab at once
	# would make both time out): other runs of the suite and developers'
	# lab tests take the same lock.
	exec 8>"$LAB_LOCK"
	flock 8
	for t in tests/lab/test_*.sh; do
		[ -e "$t" ] || continue
		name="$(basename "$t" .sh)"
		# RNIC_LAB_TESTS="test_a test_b": only those (a developer's run).
		case " ${RNIC_LAB_TESTS:-$name} " in
		*" $name "*) ;;
		*) continue ;;
		esac
		kernels="$(sed -n 's/^# lab-kernels: *//p' "$t" | head -1)"
		[ -n "$kernels" ] || kernels=stock
		for k in $kernels; do
			case "$k" in
			# A comparison script others' checks cover: run by hand.
			none) break ;;
			stock) kver="$(cat /var/cache/rnic/kver)" ;;
			debug) kver="$(cat /var/cache/rnic/debug-kver)" ;;
			*)
				echo "not ok - lab: $t: unknown kernel '$k' in its lab-kernels line"
				continue
				;;
			esac
			est="$(lab_est "$name-$k")"
			queue+=("${est:-600} $(lab_weight "$t") $t $k $kver")
		done
	done
	mapfile -t queue < <(printf '%s\n' "${queue[@]}" | sort -rn)
	: >"$RNIC_TEST_DIR/lab/times"
	# The host's CPU time (/proc/stat: busy and all jiffies) over the stage.
	local -a cpu0 cpu1
	read -r -a cpu0 < <(lab_host_cpu)
	touch "$RNIC_TEST_DIR/lab/started"
	# First fit, longest first: start every job that fits beside the
	# running ones, then wait for one to end and print its lines whole.
	while [ "${#queue[@]}" -gt 0 ] || [ "${#run_w[@]}" -gt 0 ]; do
		for i in "${!queue[@]}"; do
			read -r est w t k kver <<<"${queue[$i]}"
			if [ "$used" -eq 0 ] || [ $((used + w)) -le "$LAB_VMS" ]; then
				name="$(basename "$t" .sh)-$k"
				(
					s=$SECONDS
					lab_test "$t" "$k" "$kver" >"$RNIC_TEST_DIR/lab/$name.tap" \
						2>"$RNIC_TEST_DIR/lab/$name.info"
					echo "$name $((SECONDS - s)) $(lab_cpu_of "$RNIC_TEST_DIR/lab/$name.info")" \
						>>"$RNIC_TEST_DIR/lab/times"
				) &
				run_w[$!]=$w
				run_job[$!]=$name
				used=$((used + w))
				unset "queue[$i]"
			fi
		done
		queue=("${queue[@]}")
		wait -n
		for job in "${!run_w[@]}"; do
			kill -0 "$job" 2>/dev/null && continue
			wait "$job"
			name="${run_job[$job]}"
			cat "$RNIC_TEST_DIR/lab/$name.info" >&2
			cat "$RNIC_TEST_DIR/lab/$name.tap"
			used=$((used - run_w[$job]))
			unset "run_w[$job]" "run_job[$job]"
		done
	done
	# Keep the figures of tests that ran this time, and the others'. (No
	# file yet is no failure: under pipefail it kept the file from ever
	# being written, and the lab from ever starting the longest first.)
	{
		cat "$RNIC_TEST_DIR/lab/times"
		cat "$LAB_TIMES" 2>/dev/null || true
	} | awk '!seen[$1]++' >"$LAB_TIMES.new" && mv "$LAB_TIMES.new" "$LAB_TIMES"
	sort -k2 -rn "$RNIC_TEST_DIR/lab/times" | sed 's/^/# lab time: /' >&2
	read -r -a cpu1 < <(lab_host_cpu)
	lab_breakdown $((cpu1[0] - cpu0[0])) $((cpu1[1] - cpu0[1])) \
		>"$RNIC_TEST_DIR/lab/breakdown"
}

# lab_cpu_of INFO: the host CPU seconds a lab test's labs used, from the
# "# lab: time:" line each lab_stop prints (0 if none did).
lab_cpu_of() {
	awk '/^# lab: time: / { for (i = 4; i <= NF; i++) if ($i ~ /^cpu=/) c += substr($i, 5) }
		END { printf "%d\n", c }' "$1"
}

# lab_host_cpu: the host's busy and total jiffies so far (/proc/stat).
lab_host_cpu() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}

# lab_breakdown BUSY ALL: the lab stage's time table: per test (longest
# first) its wall time and, from its "# lab: time:" line (lab.sh's
# lab__time_line), the time booting VMs, in checks, stopping (sweeps,
# kmemleak), the rest, and the host CPU time it used; the sums; how busy
# the host's cores were over the stage (BUSY of ALL jiffies); and the
# guest commands that took longest (vm*/commands.log).
lab_breakdown() {
	local f name
	printf '%-34s %7s %7s %7s %7s %7s %7s\n' "lab test" wall boot checks stop other cpu
	for f in "$RNIC_TEST_DIR"/lab/*.info; do
		[ -e "$f" ] || continue
		name="$(basename "$f" .info)"
		awk -v name="$name" -v wall="$(awk -v n="$name" '$1 == n { print $2 }' "$RNIC_TEST_DIR/lab/times")" '
			/^# lab: time: / {
				for (i = 4; i <= NF; i++) {
					split($i, kv, "=")
					t[kv[1]] += kv[2]
				}
			}
			END {
				printf "%-34s %7d %7.0f %7.0f %7.0f %7.0f %7.0f\n", name, wall,
					t["boot"], t["check"], t["stop"], t["other"], t["cpu"]
			}' "$f"
	done | sort -k2 -rn | awk '
		{ print; for (i = 2; i <= 8; i++) sum[i] += $i }
		END {
			printf "%-34s %7d %7d %7d %7d %7d %7d\n", "sum", sum[2], sum[3],
				sum[4], sum[5], sum[6], sum[7]
		}'
	[ "$2" -gt 0 ] &&
		printf 'lab stage: host CPU %d%% busy (%d of %d core-seconds)\n' \
			$(($1 * 100 / $2)) $(($1 / $(getconf CLK_TCK))) $(($2 / $(getconf CLK_TCK)))
	echo "longest guest commands (s, test, command):"
	find "${RNIC_LAB_DIR:-/tmp/rnic-lab}" -name commands.log \
		-newer "$RNIC_TEST_DIR/lab/started" 2>/dev/null |
		while read -r f; do
			sed -nE "s|^=== [^ ]+ \(([0-9.]+) s, status [^)]*\): (.{0,90}).*|\1 ${f#"${RNIC_LAB_DIR:-/tmp/rnic-lab}"/} \2|p" "$f"
		done | sort -rn | awk 'NR <= 15' | sed 's|/commands.log||'
	# lib_check.sh's check__time lines: "SECONDS SUITE: WHAT".
	echo "longest checks (s, kernel, check):"
	find "${RNIC_LAB_DIR:-/tmp/rnic-lab}" -name times -path '*/checks/*' \
		-newer "$RNIC_TEST_DIR/lab/started" 2>/dev/null |
		while read -r f; do
			f2="${f#"${RNIC_LAB_DIR:-/tmp/rnic-lab}"/}"
			sed -E "s|^([0-9.]+) (.{0,100}).*|\1 ${f2%%/*} \2|" "$f"
		done | sort -rn | awk 'NR <= 25'
}

if [ "${1:-}" = --stage ]; then
	"stage_$2"
	exit
fi

rm -rf "$RNIC_TEST_DIR"
mkdir -p "$RNIC_TEST_DIR"
T0=$SECONDS
run_stage deps 1800 || echo "deps failed: nothing else can run"
if [ "$FAIL" = 0 ]; then
	run_stage debugkernel 3000
	run_stage rnicsim 600
	run_stage dkms 900
	# The lab keeps the host ~75% busy (its guests wait for each
	# other): the static checks and the model's unit tests run beside
	# it, niced so that the VMs have the cores first (~260 s of a
	# 2-core machine's time when they ran before it), and KUnit's VM
	# beside it at the lab's priority.
	start_stage build 4800 15
	start_stage rnicsim_tests 4800 15
	start_stage kunit 900 0
	# The lab takes ~2800 s on this 2-core machine (warm, 2026-11-28,
	# the build checks, model tests and KUnit beside it), most of it the
	# debug kernel's; the other stages ~30 s warm, plus ~800 s for the
	# debug kernel when cold.  4800 s is as much as CI's 90 minutes (5400 s)
	# leave them.
	run_stage lab 4800
	finish_stage build
	finish_stage rnicsim_tests
	finish_stage kunit
fi

echo
echo "stage times:"
printf '  %s\n' "${TIMES[@]}"
echo "  total              $((SECONDS - T0)) s"
if [ -s "$RNIC_TEST_DIR/lab/breakdown" ]; then
	echo
	echo "lab breakdown (s):"
	sed 's/^/  /' "$RNIC_TEST_DIR/lab/breakdown"
fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
