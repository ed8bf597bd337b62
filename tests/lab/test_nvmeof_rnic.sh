#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: none
# shellcheck disable=SC2317 # functions are called through check
#
# NVMe over Fabrics, rnic <-> rnic (the DKMS-installed rnic and rnic_perf;
# scripts/dkms-install.sh first): an nvmet-rdma target in vm2 (a file on
# the guest's tmpfs as namespace 1), `nvme connect -t rdma` from vm1, fio
# writes NVMEOF_MB MiB (default 64; the suite runs it on the debug
# kernel, 4x slower) with crc32c verify headers and reads
# all of it back, verified.  RoCE v2 by default (NVMEOF_ROCE="IB/RoCE v1"
# for v1).  Under TCG: 256 MiB fio 35-52 s, the whole test 97-131 s.
#
# Not in the suite: its rnic <-> rnic check is test_rnic_abi2.sh's
# NVMe-oF section (the same five steps, fio 32 MiB verified), and
# test_nvmeof_roce_v1.sh, test_nvmeof_unload.sh, test_fault_rnic.sh and
# test_rnic_k61.sh run NVMe-oF between rnic VMs too.  Run it by hand:
#   RNIC_LAB_KVER=$(cat /var/cache/rnic/debug-kver) bash tests/lab/test_nvmeof_rnic.sh
# The same script runs other pairings for comparison:
# NVMEOF_TARGET=rxe NVMEOF_HOST=rxe (virtio-net + rdma_rxe; 256 MiB fio
# 118 s there).  rnic <-> rxe both ways: tests/lab/test_nvmeof_interop.sh.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

TGT_KIND="${NVMEOF_TARGET:-rnic}"
HOST_KIND="${NVMEOF_HOST:-rnic}"
MB="${NVMEOF_MB:-64}"
ROCE="${NVMEOF_ROCE:-RoCE v2}"
SUITE="nvmeof $HOST_KIND->$TGT_KIND"
T0="$(lab__now_us)"
lab_start "nvmeof_${HOST_KIND}_${TGT_KIND}" || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR"
	exit 1
}
# 2 boots, 4 set-up steps, fio, 2 tear-down steps.
lab_plan 9 2
perf_checks_init
# An rxe-only pairing needs neither rnic nor rnicsim.
case "$TGT_KIND$HOST_KIND" in
*rnic*) perf_preflight ;;
*) preflight rnic_perf ;;
esac

# VM n of a kind: rnic VMs use their rnic NIC (10.20.0.n), rxe VMs their
# virtio-net NIC, given the same 10.20.0.n so that any pairing shares one
# subnet on the lab bridge.
boot() {
	local n="$1" kind="$2"
	if [ "$kind" = rnic ]; then
		lab_vm "$n" --rnic --mem 1G
	else
		lab_vm "$n" --virtio --mem 1G
	fi
}
up() {
	local n="$1" kind="$2"
	if [ "$kind" = rnic ]; then
		rnic_up "$n" && roce_mode "$n" rnic0 "$ROCE"
	else
		rxe_up "$n" "$(lab_addr "$n" rnic 4)/24"
	fi
}
boot 1 "$HOST_KIND"
boot 2 "$TGT_KIND"
boot_vms 1 2
need "vm1 ($HOST_KIND) RDMA device up" up 1 "$HOST_KIND"
need "vm2 ($TGT_KIND) RDMA device up" up 2 "$TGT_KIND"

TADDR="$(lab_addr 2 rnic 4)"
need "vm2: nvmet-rdma target on $TADDR:$NVME_PORT, ${MB} MiB namespace" \
	nvmet_up 2 "$TADDR" "$MB"
DEV=""
connect() { DEV="$(nvme_host_up 1 "$TADDR")" && echo "$DEV"; }
need "vm1: nvme connect -t rdma to $TADDR" connect
t="$(lab__now_us)"
check "vm1: fio writes ${MB} MiB to $DEV and reads it back verified (crc32c)" \
	nvme_verify 1 "$DEV" "$MB" 900 || true
echo "# fio ${MB} MiB write+verify: $(lab_elapsed "$t") s"
grep -E 'WRITE:|READ:' "$OUT/$nchk.log" | sed 's/^ */# /' || true
check "vm1: nvme disconnect" nvme_host_down 1 || true
check "vm2: target removed" nvmet_down 2 || true

lab_stop
echo "# test_nvmeof ($HOST_KIND -> $TGT_KIND, ${MB} MiB): $(lab_elapsed "$T0") s"
exit "$fail"
