#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
# shellcheck disable=SC2317 # functions are called through check
#
# rnicsim as a PCI device: a VM with an rnic NIC (ivshmem-doorbell served by
# its own rnicsim) sees, from inside the guest, 1af4:1110 with its three
# BARs (BAR2 = rnicsim's --shm-size) and reads rnic's signature block
# through BAR2.  The expected magic, ABI and the block's layout come from
# include/rnic_hw.h itself (compiled into a tiny helper), never a copy.
# rnicsim serves ABI 2.0 alone: abi_major is 2.0's major and abi_compat
# has its bit only.
# The rnic driver is not loaded: the guest reads the device raw.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic pci"
T0="$(lab__now_us)"
lab_start rnic_pci || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_pci"
	exit 1
}
# the header's layout, the boot, 4 BAR checks, 5 signature checks.
lab_plan 11 1
check_init
preflight rnicsim

# What the header says: constants and the signature block's field offsets.
cat >"$LAB_DIR/sig_layout.c" <<'C'
#include <stddef.h>
#include <stdio.h>
#include "rnic_hw.h"
#include "rnic_hw_rdma.h"
int main(void)
{
	printf("SIG_OFF=%u MAGIC=%u ABI_MAJOR=%u ABI_COMPAT=%u OFF_MAGIC=%zu "
	       "OFF_ABI_MAJOR=%zu OFF_ABI_COMPAT=%zu "
	       "OFF_SHM_SIZE=%zu OFF_MAC=%zu OFF_VERSION=%zu VERSION_LEN=%u\n",
	       (unsigned)RNIC_SIG_OFF, (unsigned)RNIC_SIG_MAGIC,
	       (unsigned)RNIC_ABI2_MAJOR,
	       (unsigned)(1u << RNIC_ABI2_MAJOR),
	       offsetof(struct rnic_sig, magic),
	       offsetof(struct rnic_sig, abi_major),
	       offsetof(struct rnic_sig, abi_compat),
	       offsetof(struct rnic_sig, shm_size), offsetof(struct rnic_sig, mac),
	       offsetof(struct rnic_sig, model_version),
	       (unsigned)RNIC_MODEL_VERSION_LEN);
	return 0;
}
C
# The header uses kernel types; rnicsim's compat headers provide them.
layout() {
	gcc -I"$LAB_REPO/include" -I"$LAB_REPO/tools/rnicsim/compat" \
		-o "$LAB_DIR/sig_layout" "$LAB_DIR/sig_layout.c" &&
		LAYOUT="$("$LAB_DIR/sig_layout")" && echo "$LAYOUT"
}
need "include/rnic_hw.h gives the signature layout" layout
echo "# from include/rnic_hw.h: $LAYOUT"

lab_vm 1 --rnic
boot_vms 1

# lspci prints BAR sizes as 256, 4K, 1M ...
lspci_size() {
	local b="$1" u=""
	for u in "" K M G; do
		if [ "$b" -lt 1024 ] || [ $((b % 1024)) != 0 ]; then
			break
		fi
		b=$((b / 1024))
	done
	echo "$b$u"
}
SHM="$(lspci_size "$LAB_SHM_SIZE")"

lspci_out="$LAB_DIR/lspci.txt"
lab_exec 1 --timeout 60 lspci -vv -d 1af4:1110 >"$lspci_out" || true
check "guest sees PCI device 1af4:1110" grep 'Inter-VM shared memory' "$lspci_out" || true
check "BAR0 (ivshmem registers) is 256 bytes" grep 'Region 0: Memory at .*\[size=256\]' "$lspci_out" || true
check "BAR1 (MSI-X) is 4K with $LAB_VECTORS vectors" \
	eval "grep 'Region 1: Memory at .*\[size=4K\]' '$lspci_out' && grep 'MSI-X: .*Count=$LAB_VECTORS' '$lspci_out'" ||
	true
check "BAR2 (shared memory) is --shm-size = $SHM" grep "Region 2: Memory at .*\[size=$SHM\]" "$lspci_out" || true

# In the guest: enable the function (no driver is bound) and read BAR0's
# IVPosition and BAR2's signature block with the host's python3.
sig_out="$LAB_DIR/signature.txt"
# shellcheck disable=SC2016 # expanded in the guest
lab_exec 1 --timeout 60 "$LAYOUT" '
dev=$(for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor):$(cat $d/device)" = 0x1af4:0x1110 ] && echo $d && break; done)
[ -n "$dev" ] || { echo "no 1af4:1110 device" >&2; exit 1; }
echo 1 >"$dev/enable" 2>/dev/null || true
export dev SIG_OFF OFF_MAGIC OFF_ABI_MAJOR OFF_ABI_COMPAT OFF_SHM_SIZE OFF_MAC OFF_VERSION VERSION_LEN
python3 - <<PY
import mmap, os, struct
e = os.environ
def bar(n, size):
    fd = os.open(e["dev"] + "/resource%d" % n, os.O_RDONLY | os.O_SYNC)
    m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
    os.close(fd)
    return m
r0 = bar(0, 256)
print("ivposition=%d" % struct.unpack_from("<i", r0, 8)[0])
s = bar(2, 4096 + int(e["SIG_OFF"]))
o = int(e["SIG_OFF"])
print("magic=%u" % struct.unpack_from("<I", s, o + int(e["OFF_MAGIC"]))[0])
print("abi_major=%u" % struct.unpack_from("<H", s, o + int(e["OFF_ABI_MAJOR"]))[0])
print("abi_compat=%u" % struct.unpack_from("<H", s, o + int(e["OFF_ABI_COMPAT"]))[0])
print("shm_size=%u" % struct.unpack_from("<I", s, o + int(e["OFF_SHM_SIZE"]))[0])
mac = s[o + int(e["OFF_MAC"]):o + int(e["OFF_MAC"]) + 6]
print("mac=" + ":".join("%02x" % b for b in mac))
v = s[o + int(e["OFF_VERSION"]):o + int(e["OFF_VERSION"]) + int(e["VERSION_LEN"])]
print("version=" + v.split(b"\0")[0].decode("ascii", "replace"))
PY' >"$sig_out" 2>&1 || true
sed 's/^/# guest: /' "$sig_out"
field() { sed -n "s/^$1=//p" "$sig_out"; }
MAGIC="${LAYOUT#*MAGIC=}"
MAGIC="${MAGIC%% *}"
ABI="${LAYOUT#*ABI_MAJOR=}"
ABI="${ABI%% *}"
COMPAT="${LAYOUT#*ABI_COMPAT=}"
COMPAT="${COMPAT%% *}"
# is NAME VALUE: the guest read VALUE for NAME.
is() {
	echo "$1: read '$(field "$1")', want '$2' (see $sig_out)"
	[ "$(field "$1")" = "$2" ]
}
positive() {
	echo "$1: read '$(field "$1")', want > 0 (see $sig_out)"
	[ "$(field "$1")" -gt 0 ]
}
check "IVPosition (BAR0) is the guest's peer id, not the model's 0" positive ivposition || true
check "signature magic read through BAR2 is RNIC_SIG_MAGIC ($(printf '%#x' "$MAGIC"))" is magic "$MAGIC" || true
abi() { is abi_major "$ABI" && is abi_compat "$COMPAT"; }
check "signature abi_major is RNIC_ABI2_MAJOR ($ABI), abi_compat serves 2.0 alone ($COMPAT)" abi || true
check "signature shm_size is --shm-size ($LAB_SHM_SIZE)" is shm_size "$LAB_SHM_SIZE" || true
check "signature MAC is rnicsim's --mac ($(lab__mac 1 rnic))" is mac "$(lab__mac 1 rnic)" || true

lab_stop
echo "# test_rnic_pci: $(lab_elapsed "$T0") s"
exit "$fail"
