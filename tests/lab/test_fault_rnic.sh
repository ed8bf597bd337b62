#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# RC recovery, rnic <-> rnic (RoCE v2; the DKMS-installed rnic and
# rnic_perf, scripts/dkms-install.sh first), with both rnicsims injecting
# faults through their control sockets:
# "fault drop=1%,reorder=0.5%,corrupt=0.1%".  rnic_perf WRITE, READ, SEND
# and FETCH_ADD runs and an NVMe-oF fio write+verify of FAULT_NVME_MB MiB
# (default 32; the suite runs it on the debug kernel) must still complete with every byte verified, and the
# drivers' own counters (rdma statistic show) must show how they coped:
#  - each driver retransmitted (vm1 as the rnic_perf and NVMe-oF host,
#    vm2 as the target's RDMA READ/WRITE requester);
#  - vm1's NIC hides its ICRC capability (rnicsim --caps-disable=1), so
#    vm1's driver checks every ICRC itself: its icrc_errors must rise,
#    by no more than the frames the rnicsims corrupted towards it, while
#    its device counts none; vm2's device checks them (hw_rx_icrc_errors
#    rises, within the same bound) and drops them before its driver.
#    On ABI 2.0 the NIC runs the transport and always checks ICRCs: each
#    VM's NIC counts them (rx_icrc_errors_v2, within the same bound).
# Passed 3 of 3 in 133-165 s (fio 64 MiB under faults 80-93 s; about
# 420-450 thousand retransmits per run), before vm1 checked ICRCs in
# software.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

SUITE="fault rnic"
SPEC="${FAULT_SPEC:-drop=1%,reorder=0.5%,corrupt=0.1%}"
MB="${FAULT_NVME_MB:-32}"
T0="$(lab__now_us)"
lab_start fault_rnic || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/fault_rnic"
	exit 1
}
# 2 boots, 4 set-up steps, 4 runs, 4 NVMe-oF steps, faults cleared,
# 2 retransmit and 2 ICRC checks.
lab_plan 19 2
perf_checks_init
perf_preflight

# RNIC_CAP_ICRC is bit 0 (include/rnic_hw.h).
lab_vm 1 --rnic --rnicsim-arg --caps-disable=1
lab_vm 2 --rnic --mem 1G
boot_vms 1 2
up() { rnic_up "$1" && roce_mode "$1" rnic0 "RoCE v2"; }
for n in 1 2; do
	need "vm$n: rnic0 ACTIVE, RoCE v2 default, rnic_perf loaded" up "$n"
done
SRV="$(lab_addr 2 rnic 4)"
need "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV"

# rnicsim's control socket, per VM (lab_vm --rnic passes --ctl).
ctl() { "$LAB_RNICSIM" --ctl-cmd "$LAB_DIR/vm$1/rnicsim.ctl" "${@:2}"; }
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-before" 2>&1 || true
done
inject() { ctl 1 fault "$SPEC" && ctl 2 fault "$SPEC" && ctl 1 fault && ctl 2 fault; }
need "both rnicsims inject $SPEC" inject

run() { perf_case "$1" 1 2 "$SRV" --timeout 300 "${@:2}"; }
t="$(lab__now_us)"
run "under faults: RDMA WRITE 64 KiB, depth 8, 64 verified" op=write size=65536 depth=8 count=64
run "under faults: RDMA READ 64 KiB, depth 8, 64 verified" op=read size=65536 depth=8 count=64
run "under faults: SEND 4 KiB, 2 SGEs, 300 verified" op=send size=4096 sge=2 depth=8 count=300
run "under faults: FETCH_ADD, depth 8, 300 verified" op=fetch_add depth=8 count=300
echo "# rnic_perf under faults: $(lab_elapsed "$t") s"

# Each step runs even if the one before failed (and then fails too).
check "vm2: nvmet-rdma target, ${MB} MiB namespace" nvmet_up 2 "$SRV" "$MB" || true
DEV=""
connect() { DEV="$(nvme_host_up 1 "$SRV")" && echo "$DEV"; }
check "vm1: nvme connect -t rdma under faults" connect || true
t="$(lab__now_us)"
check "under faults: fio writes ${MB} MiB over NVMe-oF and reads it back verified" \
	nvme_verify 1 "${DEV:-/dev/no-nvme-device}" "$MB" 900 || true
echo "# fio ${MB} MiB under faults: $(lab_elapsed "$t") s"
check "vm1: nvme disconnect" nvme_host_down 1 || true

for n in 1 2; do
	ctl "$n" counters >"$LAB_DIR/rnicsim-vm$n-counters" 2>&1 || true
done
check "faults cleared" eval 'ctl 1 fault clear && ctl 2 fault clear' || true
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-after" 2>&1 || true
done

# d VM NAME: a driver-reported counter's growth under faults.
d() { stat_delta "$LAB_DIR/stats-vm$1-before" "$LAB_DIR/stats-vm$1-after" "$2"; }
# injected VM DIR KIND: what VM's rnicsim did to frames (fault_tx_corrupt...).
injected() {
	local v
	v="$(awk -v k="fault_$2_$3" '$1 == k { print $2 }' "$LAB_DIR/rnicsim-vm$1-counters")"
	[ -n "$v" ] || {
		echo "no fault_$2_$3 in $LAB_DIR/rnicsim-vm$1-counters" >&2
		return 1
	}
	echo "$v"
}
# Everything the driver counted while coping, for the record.
for n in 1 2; do
	for k in retransmits retrans_timeouts nak_seq_sent nak_seq_rcvd duplicate_requests \
		duplicate_responses out_of_sequence icrc_errors hw_rx_icrc_errors; do
		echo "# vm$n $k +$(d "$n" "$k" 2>/dev/null || echo '?')"
	done
done
retransmitted() {
	local x
	x="$(d "$1" retransmits)" || return 1
	echo "vm$1 retransmits +$x"
	[ "$x" -gt 0 ]
}
check "vm1's driver retransmitted (rdma statistic: retransmits rose)" retransmitted 1 || true
check "vm2's driver retransmitted (rdma statistic: retransmits rose)" retransmitted 2 || true

# corrupted_towards VM: frames corrupted on their way to VM, by its own
# rnicsim (rx) and the peer's (tx).
corrupted_towards() {
	local own peer
	own="$(injected "$1" rx corrupt)" || return 1
	peer="$(injected $((3 - $1)) tx corrupt)" || return 1
	echo $((own + peer))
}
# icrc_drops VM SEEN [NONE]: the frames corrupted towards VM were counted
# in SEEN (it rose, by at most their number), and none in NONE.
icrc_drops() {
	local seen none=0 max
	seen="$(d "$1" "$2")" || return 1
	[ -z "${3:-}" ] || none="$(d "$1" "$3")" || return 1
	max="$(corrupted_towards "$1")" || return 1
	echo "vm$1: $2 +$seen${3:+, $3 +$none}, frames corrupted towards vm$1: $max"
	[ "$seen" -gt 0 ] && [ "$seen" -le "$max" ] && [ "$none" = 0 ]
}
if [ "$(stats_abi "$LAB_DIR/stats-vm1-after")" = 2 ]; then
	# ABI 2.0: the NIC runs the transport and checks every ICRC itself,
	# so both VMs count the drops in their NIC's per-version counter.
	for n in 1 2; do
		check "vm$n (ABI 2.0, ICRC in the NIC): its NIC dropped corrupted frames on ICRC errors (rx_icrc_errors_v2 rose, at most the frames corrupted towards it)" \
			icrc_drops "$n" rx_icrc_errors_v2 || true
	done
else
	check "vm1 (ICRC in software): its driver dropped corrupted frames on ICRC errors (icrc_errors rose, at most the frames corrupted towards it; its device counted none)" \
		icrc_drops 1 icrc_errors hw_rx_icrc_errors || true
	check "vm2 (ICRC in the device): rdma statistic shows the device's ICRC drops (hw_rx_icrc_errors rose, at most the frames corrupted towards it; none reached the driver)" \
		icrc_drops 2 hw_rx_icrc_errors icrc_errors || true
fi

lab_stop
echo "# test_fault_rnic: $(lab_elapsed "$T0") s"
exit "$fail"
