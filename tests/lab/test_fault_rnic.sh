#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
#
# RC recovery, rnic <-> rnic (RoCE v2; the DKMS-installed rnic and
# rnic_perf, scripts/dkms-install.sh first), with both rnicsims injecting
# faults through their control sockets:
# "fault drop=1%,reorder=0.5%,corrupt=0.1%".  rnic_perf WRITE, READ, SEND
# and FETCH_ADD runs and an NVMe-oF fio write+verify of FAULT_NVME_MB MiB
# (default 64) must still complete with every byte verified, and rdma
# statistic show must show the recovery: retransmits (timeouts, sequence
# NAKs, duplicates printed), and ICRC drops for the corrupted frames.
# Passed 3 of 3 in 133-165 s (fio 64 MiB under faults 80-93 s; about
# 420-450 thousand retransmits per run).
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

SUITE="fault rnic"
SPEC="${FAULT_SPEC:-drop=1%,reorder=0.5%,corrupt=0.1%}"
MB="${FAULT_NVME_MB:-64}"
T0="$(lab__now_us)"
lab_start fault_rnic || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/fault_rnic"
	exit 1
}
perf_checks_init
perf_preflight

lab_vm 1 --rnic
lab_vm 2 --rnic --mem 1G
for n in 1 2; do
	if lab_wait_ready "$n"; then
		lab_ok "$SUITE: vm$n boots to the agent"
	else
		lab_not_ok "$SUITE: vm$n boots to the agent" "$LAB_DIR/vm$n/console.log"
		exit 1
	fi
done
up() { rnic_up "$1" && roce_mode "$1" rnic0 "RoCE v2"; }
for n in 1 2; do
	check "vm$n: rnic0 ACTIVE, RoCE v2 default, rnic_perf loaded" up "$n" || exit 1
done
SRV="$(lab_addr 2 rnic 4)"
check "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV" || exit 1

# rnicsim's control socket, per VM (lab_vm --rnic passes --ctl).
ctl() { "$LAB_RNICSIM" --ctl-cmd "$LAB_DIR/vm$1/rnicsim.ctl" "${@:2}"; }
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-before" 2>&1 || true
done
inject() { ctl 1 fault "$SPEC" && ctl 2 fault "$SPEC" && ctl 1 fault && ctl 2 fault; }
check "both rnicsims inject $SPEC" inject || exit 1

run_one() {
	local line
	line="$(perf_run 1 "$SRV" --timeout 300 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	perf_check 2 "$line"
}
run() {
	local what="$1" line
	shift
	check "$what" run_one "$@" || true
	line="$(grep '^client' "$OUT/$nchk.log" | tail -1 || true)"
	[ -z "$line" ] || echo "# $(perf_summary "$line")"
}
t="$(lab__now_us)"
run "under faults: RDMA WRITE 64 KiB, depth 8, 64 verified" op=write size=65536 depth=8 count=64
run "under faults: RDMA READ 64 KiB, depth 8, 64 verified" op=read size=65536 depth=8 count=64
run "under faults: SEND 4 KiB, 2 SGEs, 300 verified" op=send size=4096 sge=2 depth=8 count=300
run "under faults: FETCH_ADD, depth 8, 300 verified" op=fetch_add depth=8 count=300
echo "# rnic_perf under faults: $(lab_elapsed "$t") s"

check "vm2: nvmet-rdma target, ${MB} MiB namespace" nvmet_up 2 "$SRV" "$MB" || true
DEV=""
connect() { DEV="$(nvme_host_up 1 "$SRV")" && echo "$DEV"; }
if check "vm1: nvme connect -t rdma under faults" connect; then
	t="$(lab__now_us)"
	check "under faults: fio writes ${MB} MiB over NVMe-oF and reads it back verified" \
		nvme_verify 1 "$DEV" "$MB" 900 || true
	echo "# fio ${MB} MiB under faults: $(lab_elapsed "$t") s"
	check "vm1: nvme disconnect" nvme_host_down 1 || true
fi

ctl 1 counters >"$LAB_DIR/rnicsim-vm1-counters" 2>&1 || true
ctl 2 counters >"$LAB_DIR/rnicsim-vm2-counters" 2>&1 || true
check "faults cleared" eval 'ctl 1 fault clear && ctl 2 fault clear' || true
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-after" 2>&1 || true
done
recovery() {
	local n k sum=0 d
	for n in 1 2; do
		for k in retransmits retrans_timeouts nak_seq_sent nak_seq_rcvd \
			duplicate_requests duplicate_responses out_of_sequence icrc_errors \
			hw_rx_icrc_errors; do
			d=$(($(stat_of "$LAB_DIR/stats-vm$n-after" "$k") - $(stat_of "$LAB_DIR/stats-vm$n-before" "$k")))
			echo "vm$n $k +$d"
			[ "$k" = retransmits ] && sum=$((sum + d))
		done
	done
	echo "retransmits, both VMs: +$sum"
	[ "$sum" -gt 0 ]
}
check "rdma statistic: retransmits went up (the recovery is counted)" recovery || true
grep -h . "$OUT/$nchk.log" | sed 's/^/# /'
# Corrupted frames must be caught by the ICRC check: the device's
# (hw_rx_icrc_errors) or the driver's software path (icrc_errors).
icrc() {
	local n d sum=0
	for n in 1 2; do
		for k in icrc_errors hw_rx_icrc_errors; do
			d=$(($(stat_of "$LAB_DIR/stats-vm$n-after" "$k") - $(stat_of "$LAB_DIR/stats-vm$n-before" "$k")))
			echo "vm$n $k +$d"
			sum=$((sum + d))
		done
	done
	[ "$sum" -gt 0 ]
}
check "rdma statistic: corrupted frames were dropped on ICRC errors" icrc || true

lab_stop
echo "# test_fault_rnic: $(lab_elapsed "$T0") s"
exit "$fail"
