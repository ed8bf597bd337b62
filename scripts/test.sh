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
# lab kernel and the debug kernel, lab tests (VMs under QEMU) on the
# kernels each test names in its "# lab-kernels:" line. Every check prints
# one "ok - ..." or "not ok - ..." line; the run ends with "N passed, N
# failed" and exits non-zero if anything failed. Full logs: $RNIC_TEST_DIR.
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
	local name=$1 tmo=$2 log="$RNIC_TEST_DIR/$1.log" t0=$SECONDS rc
	echo "== $name" >&2
	timeout --foreground -k 30 "$tmo" bash "$REPO/scripts/test.sh" \
		--stage "$name" >"$log" 2>&1
	rc=$?
	local ok nok
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
	TIMES+=("$(printf '%-18s %5d s  (%d ok, %d not ok)' "$name" $((SECONDS - t0)) "$ok" "$nok")")
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

stage_build() {
	local kver kdir
	kver=$(cat /var/cache/rnic/kver) || return 1
	kdir=/lib/modules/$kver/build
	one_check "build: rnic.ko against $kver headers" make KDIR="$kdir" modules
	one_check "build: make check (W=1, sparse, checkpatch --strict)" make KDIR="$kdir" check
	one_check "build: modinfo documents every parameter" scripts/check-modinfo.sh rnic.ko
	make KDIR="$kdir" clean >/dev/null 2>&1
	one_check "build: rnicsim" make -C tools/rnicsim
}

# Under ASan and UBSan: the random-corruption and malformed-input tests
# find over-reads only there.
stage_rnicsim() { make -C tools/rnicsim test-asan; }

stage_debugkernel() {
	one_check "debug kernel: built and installed (scripts/debug-kernel.config)" \
		bash scripts/debug-kernel.sh
}

stage_kunit() { bash scripts/kunit.sh; }

# Under the lab lock: a lab test running elsewhere on this machine loads
# the modules DKMS is about to replace.
stage_dkms() {
	one_check "dkms: add/build/install for the lab kernel and the debug kernel" \
		flock "$LAB_LOCK" bash scripts/dkms-install.sh "$(cat /var/cache/rnic/kver)" \
		"$(cat /var/cache/rnic/debug-kver)"
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
	RNIC_LAB_KVER="$kver" bash "$t" >"$log" 2>&1
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

stage_lab() {
	local t k kernels
	mkdir -p "$RNIC_TEST_DIR/lab"
	# The lab runs alone on this machine (2 cores: another lab at once
	# would make both time out): other runs of the suite and developers'
	# lab tests take the same lock.
	exec 8>"$LAB_LOCK"
	flock 8
	for t in tests/lab/test_*.sh; do
		[ -e "$t" ] || continue
		# RNIC_LAB_TESTS="test_a test_b": only those (a developer's run).
		case " ${RNIC_LAB_TESTS:-$(basename "$t" .sh)} " in
		*" $(basename "$t" .sh) "*) ;;
		*) continue ;;
		esac
		kernels="$(sed -n 's/^# lab-kernels: *//p' "$t" | head -1)"
		[ -n "$kernels" ] || kernels=stock
		for k in $kernels; do
			case "$k" in
			stock) lab_test "$t" stock "$(cat /var/cache/rnic/kver)" ;;
			debug) lab_test "$t" debug "$(cat /var/cache/rnic/debug-kver)" ;;
			*) echo "not ok - lab: $t: unknown kernel '$k' in its lab-kernels line" ;;
			esac
		done
	done
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
	run_stage build 900
	run_stage rnicsim 600
	run_stage debugkernel 3000
	run_stage kunit 900
	run_stage dkms 900 && run_stage lab 4200
fi

echo
echo "stage times:"
printf '  %s\n' "${TIMES[@]}"
echo "  total              $((SECONDS - T0)) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
