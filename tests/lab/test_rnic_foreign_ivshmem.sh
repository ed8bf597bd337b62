#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
#
# rnic binds the generic ivshmem PCI ID (1af4:1110), so it must leave any
# ivshmem device that is not an rnic alone (issue 4, PCI): a VM with a
# plain ivshmem-plain device whose shared memory holds someone else's
# data loads rnic; rnic logs exactly one line saying it does not bind,
# binds nothing, creates no netdev or ib_device, and not one byte of the
# shared memory changes (compared on the host before and after).
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic foreign ivshmem"
T0="$(lab__now_us)"
lab_start rnic_foreign || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_foreign"
	exit 1
}
# the boot, 7 checks.
lab_plan 8 1
check_init
preflight rnic

# Another user's shared memory: 1 MiB of a recognisable, non-zero pattern.
SHM="/dev/shm/rnic-lab-$LAB_RUN-plain"
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 3) & 0xff for i in range(1 << 20)))' >"$SHM"
before="$(sha256sum <"$SHM")"

lab_vm 1 --qemu-arg -object \
	--qemu-arg "memory-backend-file,id=foreign,size=1M,mem-path=$SHM,share=on" \
	--qemu-arg -device --qemu-arg "ivshmem-plain,memdev=foreign"
boot_vms 1

# shellcheck disable=SC2016 # expanded in the guest
{
	check "the guest sees the ivshmem device 1af4:1110" \
		lab_exec 1 --timeout 30 'lspci -n -d 1af4:1110 | grep 1110 >/dev/null' || true
	# The netdevs before, to compare with after.
	check "modprobe rnic succeeds" \
		lab_exec 1 --timeout 90 'ls /sys/class/net >/tmp/net.before && modprobe rnic' || true
	check "exactly one dmesg line: not an rnic, not binding" \
		lab_exec 1 --timeout 30 '[ "$(dmesg | grep -c "ivshmem device without rnic signature.*not binding")" = 1 ]' || true
	check "the device has no driver" \
		lab_exec 1 --timeout 30 'd=$(lspci -D -n -d 1af4:1110 | cut -d" " -f1); [ -n "$d" ] && [ -e /sys/bus/pci/devices/$d ] && [ ! -e /sys/bus/pci/devices/$d/driver ]' ||
		true
	# No netdev appeared (the list is what it was before the load), and
	# none hangs off the device; no ib_device at all.
	check "no ib_device and no rnic netdev" \
		lab_exec 1 --timeout 30 'ls /sys/class/net >/tmp/net.after || exit 1
			cmp /tmp/net.before /tmp/net.after || exit 1
			d=$(lspci -D -n -d 1af4:1110 | cut -d" " -f1)
			[ -n "$d" ] && [ ! -e /sys/bus/pci/devices/$d/net ] &&
				[ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]' || true
	check "rmmod rnic" lab_exec 1 --timeout 60 'rmmod rnic' || true
}
check "the shared memory is byte-for-byte unchanged" \
	[ "$(sha256sum <"$SHM")" = "$before" ] || true

lab_stop
echo "# test_rnic_foreign_ivshmem: $(lab_elapsed "$T0") s"
exit "$fail"
