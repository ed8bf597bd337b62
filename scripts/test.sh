#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole rnic test suite, from a fresh Debian 12 machine (as root):
#
#   bash scripts/test.sh
#
# Stages: dependencies (apt), module build and static checks, rnicsim unit
# tests, KUnit (in a KUnit kernel under QEMU), DKMS install for the Debian
# 6.12 lab kernel, lab tests (VMs under QEMU). Every check prints one
# "ok - ..." or "not ok - ..." line; the run ends with "N passed, N failed"
# and exits non-zero if anything failed. Full logs: $RNIC_TEST_DIR.
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
export RNIC_TEST_DIR=${RNIC_TEST_DIR:-/tmp/rnic-test}
cd "$REPO" || exit 1

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

stage_rnicsim() { make -C tools/rnicsim test; }

stage_kunit() { bash scripts/kunit.sh; }

stage_dkms() { one_check "dkms: add/build/install for the lab kernel" bash scripts/dkms-install.sh; }

stage_lab() {
	local t rc=0
	for t in tests/lab/test_*.sh; do
		[ -e "$t" ] || continue
		echo "-- $t" >&2
		bash "$t" || rc=1
	done
	return $rc
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
	run_stage kunit 2400
	run_stage dkms 600 && run_stage lab 2400
fi

echo
echo "stage times:"
printf '  %s\n' "${TIMES[@]}"
echo "  total              $((SECONDS - T0)) s"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
