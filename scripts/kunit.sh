#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the KUnit suites in the lab's debug kernel (scripts/debug-kernel.sh:
# KUnit, KASAN, lockdep, kmemleak, ...): build rnic.ko and rnic_kunit.ko
# against it, boot it under QEMU with a busybox initramfs that loads
# them, and parse the module's KTAP with the kernel's own kunit.py.
# Everything the kernel printed from insmod to rmmod, and a kmemleak scan
# after rmmod, are swept like a lab VM's console (scripts/lab/lab.sh).
# Prints TAP-style ok/not ok lines per test case and exits non-zero on
# any failure or on missing KTAP.
#
# Usage: scripts/kunit.sh [--build-only]
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
CACHE=${RNIC_CACHE:-/var/cache/rnic}
OUT=${RNIC_KUNIT_OUT:-/tmp/rnic-kunit}

die() { echo "kunit: $*" >&2; exit 1; }

mkdir -p "$CACHE"
# One run at a time: the module build dir, the initramfs and the console
# log are shared; a second run waits for the first.
exec 9>"$CACHE/kunit.lock"
flock 9

SRC="$("$REPO/scripts/linux-source.sh")" || die "stage linux-source failed"
read -r _ KB < <("$REPO/scripts/debug-kernel.sh") ||
	die "stage debug kernel failed; see $CACHE/debug-kernel-build.log"
[ -n "$KB" ] || die "stage debug kernel: no build directory"
mkdir -p "$OUT"
# shellcheck source=scripts/lab/lab.sh
. "$REPO/scripts/lab/lab.sh"

[ "${1:-}" = "--build-only" ] && exit 0

# Build the modules out of tree into a scratch copy so the repo's own
# objects (built against the Debian headers) are never mixed with these.
MB="$OUT/modbuild"
rm -rf "$MB"
mkdir -p "$MB"
cp -a "$REPO/Kbuild" "$REPO/drivers" "$REPO/include" "$REPO/kunit" "$MB/"
# every module the Kbuild names must be there (tools/rnic_perf, ...)
mkdir -p "$MB/tools"
for d in "$REPO"/tools/*/; do
	[ -f "$d/Kbuild" ] && cp -a "${d%/}" "$MB/tools/"
done
make -C "$KB" M="$MB" -j"$(nproc)" modules >"$OUT/module-build.log" 2>&1 ||
	die "stage module build failed; see $OUT/module-build.log"
for m in rnic.ko rnic_kunit.ko; do
	[ -f "$MB/$m" ] || die "stage module build: $m not built; see $OUT/module-build.log"
done

# The initramfs: static busybox plus the two modules. The init script
# dumps the kernel log between markers after rmmod, with a marker of its
# own in the log before rnic_kunit loads, so the host can cut out exactly
# the module's KTAP (the boot itself prints an empty "1..0" document
# first, and kunit.py parses only the first document it sees).
IR="$OUT/initramfs"
rm -rf "$IR"
mkdir -p "$IR"/{bin,proc,sys,dev}
cp /bin/busybox "$IR/bin/busybox"
for a in sh mount insmod rmmod dmesg cat echo reboot sleep; do
	ln -s busybox "$IR/bin/$a"
done
cp "$MB/rnic.ko" "$MB/rnic_kunit.ko" "$IR/"
cat >"$IR/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Quiet console (it is slow under TCG); the whole log is dumped below.
dmesg -n 1
insmod /rnic.ko || echo "RNIC-KUNIT-ERROR insmod rnic.ko failed"
echo "RNIC-KUNIT-MARK" >/dev/kmsg
insmod /rnic_kunit.ko || echo "RNIC-KUNIT-ERROR insmod rnic_kunit.ko failed"
rmmod rnic_kunit || echo "RNIC-KUNIT-ERROR rmmod rnic_kunit failed"
rmmod rnic || echo "RNIC-KUNIT-ERROR rmmod rnic failed"
echo "RNIC-KUNIT-BEGIN"
dmesg
echo "RNIC-KUNIT-END"
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	echo "RNIC-KMEMLEAK-BEGIN"
	cat /sys/kernel/debug/kmemleak
	echo "RNIC-KMEMLEAK-END"
fi
reboot -f
INIT
chmod +x "$IR/init"
(cd "$IR" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$OUT/initramfs.gz"

t0=$SECONDS
# no_timer_check: the IO-APIC timer check fails when the host leaves the
# vCPU waiting ~67 ms during it (KUnit runs beside the lab), and the boot
# panics (scripts/lab/lab.sh says more). log_buf_len: the KTAP is read
# back from dmesg, and a case that fails a few hundred times used to push
# the start of it out of the default buffer ("no KTAP output").
timeout 600 qemu-system-x86_64 -accel tcg -m 1024 -nographic -no-user-config \
	-nodefaults -serial stdio -no-reboot \
	-kernel "$KB/arch/x86/boot/bzImage" -initrd "$OUT/initramfs.gz" \
	-append "console=ttyS0 panic=-1 loglevel=4 kunit.enable=1 no_timer_check log_buf_len=8M" \
	>"$OUT/console.log" 2>&1 ||
	die "stage boot failed or timed out; see $OUT/console.log"
echo "kunit: VM ran in $((SECONDS - t0)) s" >&2

sed -n '/RNIC-KUNIT-BEGIN/,/RNIC-KUNIT-END/p' "$OUT/console.log" |
	sed '1d;$d' | tr -d '\r' >"$OUT/dmesg.log"
sed -n '/RNIC-KMEMLEAK-BEGIN/,/RNIC-KMEMLEAK-END/p' "$OUT/console.log" |
	sed '1d;$d' | tr -d '\r' >"$OUT/kmemleak.txt"
# A test that passes while the kernel reports a bug is not a pass: any
# finding from boot to rmmod (KASAN, lockdep, WARNING, ...) fails the run.
if hit="$(cat "$OUT/console.log" "$OUT/dmesg.log" | grep -a -m1 -E "$LAB_SWEEP_RE")"; then
	echo "not ok - kunit: kernel log clean from boot to rmmod: $(echo "$hit" | tr -d '\r' | cut -c1-160) (see $OUT/dmesg.log)"
	kernel_bad=1
else
	echo "ok - kunit: kernel log clean from boot to rmmod (no WARNING/BUG/KASAN/UBSAN/lockdep/... report)"
fi
if grep -q '^unreferenced object' "$OUT/kmemleak.txt"; then
	echo "not ok - kunit: kmemleak after rmmod: $(grep -c '^unreferenced object' "$OUT/kmemleak.txt") unreferenced objects (see $OUT/kmemleak.txt)"
	kernel_bad=1
else
	echo "ok - kunit: kmemleak after rmmod reports nothing"
fi
grep -q "RNIC-KUNIT-ERROR" "$OUT/console.log" &&
	die "stage module load: $(grep -m1 RNIC-KUNIT-ERROR "$OUT/console.log"); see $OUT/console.log"
sed -n '/RNIC-KUNIT-MARK/,$p' "$OUT/dmesg.log" | sed '1d' >"$OUT/ktap.log"
[ -s "$OUT/ktap.log" ] || die "stage ktap: no KTAP output; see $OUT/console.log"

# kunit.py strips the dmesg timestamps itself; --raw_output is not wanted,
# we want its verdict.
rm -f "$OUT/results.json"
python3 "$SRC/tools/testing/kunit/kunit.py" parse --json="$OUT/results.json" \
	"$OUT/ktap.log" >"$OUT/parse.log" 2>&1 && prc=0 || prc=$?
cat "$OUT/parse.log" >&2

# One TAP line per test case, from kunit.py's own verdicts (its JSON): a
# skipped case is not a pass.
python3 - "$OUT/results.json" "$OUT/ktap.log" <<'PY'
import json, sys
ktap = sys.argv[2]
try:
    root = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    root = {"sub_groups": [], "test_cases": []}
n = 0
def walk(group, prefix):
    global n
    for case in group.get("test_cases", []):
        name = prefix + case["name"]
        n += 1
        if case["status"] == "PASS":
            print(f"ok - kunit: {name}")
        elif case["status"] == "SKIP":
            print(f"not ok - kunit: {name} SKIPPED (see {ktap})")
        else:
            print(f"not ok - kunit: {name} {case['status']} (see {ktap})")
    for sub in group.get("sub_groups", []):
        walk(sub, prefix + sub["name"] + ".")
walk(root, "")
if n == 0:
    print(f"not ok - kunit: no test cases found in KTAP (see {ktap})")
    sys.exit(1)
PY
[ "$prc" = 0 ] || die "kunit.py parse reported failure (exit $prc); see $OUT/parse.log"
[ -z "${kernel_bad:-}" ] || die "kernel reported a problem; see $OUT/console.log"
