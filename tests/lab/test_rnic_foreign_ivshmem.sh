#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
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

SUITE="rnic foreign ivshmem"
T0="$(lab__now_us)"
lab_start rnic_foreign || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_foreign"
	exit 1
}
LOG="$LAB_DIR/vm1/commands.log"
fail=0

# Another user's shared memory: 1 MiB of a recognisable, non-zero pattern.
SHM="/dev/shm/rnic-lab-$LAB_RUN-plain"
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 3) & 0xff for i in range(1 << 20)))' >"$SHM"
before="$(sha256sum <"$SHM")"

lab_vm 1 --qemu-arg -object \
	--qemu-arg "memory-backend-file,id=foreign,size=1M,mem-path=$SHM,share=on" \
	--qemu-arg -device --qemu-arg "ivshmem-plain,memdev=foreign"
if ! lab_wait_ready 1; then
	lab_not_ok "$SUITE: vm1 boots to the agent" "$LAB_DIR/vm1/console.log"
	exit 1
fi

check() {
	local what="$1"
	shift
	if "$@" >>"$LAB_DIR/checks.log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$LAB_DIR/checks.log"
		fail=1
	fi
}

check "the guest sees the ivshmem device 1af4:1110" \
	lab_exec 1 --timeout 30 'lspci -n -d 1af4:1110 | grep -q 1110'
check "modprobe rnic succeeds" lab_exec 1 --timeout 90 'modprobe rnic'
check "exactly one dmesg line: not an rnic, not binding" \
	lab_exec 1 --timeout 30 '[ "$(dmesg | grep -c "ivshmem device without rnic signature.*not binding")" = 1 ]'
check "the device has no driver" \
	lab_exec 1 --timeout 30 'd=$(lspci -D -n -d 1af4:1110 | cut -d" " -f1); [ ! -e /sys/bus/pci/devices/$d/driver ]'
check "no ib_device and no rnic netdev" \
	lab_exec 1 --timeout 30 '[ ! -e /sys/class/infiniband/rnic0 ] && ! ls -l /sys/class/net | grep -q 1110'
check "rmmod rnic is clean" lab_exec 1 --timeout 60 'rmmod rnic && ! dmesg | grep -E "BUG|WARNING"'
check "the shared memory is byte-for-byte unchanged" \
	[ "$(sha256sum <"$SHM")" = "$before" ]

lab_stop
echo "# test_rnic_foreign_ivshmem: $(lab_elapsed "$T0") s"
exit "$fail"
