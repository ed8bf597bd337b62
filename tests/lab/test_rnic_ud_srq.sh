#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# UD QPs carrying data and SRQs, rnic <-> rnic, with rnic_perf's qp=ud and
# srq=1 (the DKMS-installed rnic and rnic_perf; RNIC_PERF_KO=path for a
# fresh rnic_perf.ko):
#  - UD (rdma_cm SIDR): SEND of a full 1024-byte path MTU, SEND_WITH_IMM,
#    and SEND over IPv6, every message counted per round and every byte
#    verified by the server; a message larger than the path MTU is refused
#    (EMSGSIZE) before anything is sent;
#  - on the bridge the UD data are RoCE v2 "UD Send Only" (with immediate)
#    frames with a DETH; rdma statistic counts ud_send_packets / ud_recv_packets;
#  - SRQ: RC SEND and SEND_WITH_IMM (2 SGEs) received through an SRQ that
#    holds one buffer per message and drains: every byte verified and the
#    SRQ limit event (IB_EVENT_SRQ_LIMIT_REACHED) seen exactly once; with a
#    limit the SRQ never goes below, no event; UD through an SRQ likewise;
#    after each SRQ run the server's QP is drained on the device's one
#    IB_EVENT_QP_LAST_WQE_REACHED (ib_drain_qp() would wait 60 s without
#    it, silently): rnic_perf's teardown line, within 20 s;
#  - rnic_perf and rnic unload on both VMs afterwards.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic ud srq"
T0="$(lab__now_us)"
lab_start rnic_ud_srq || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_ud_srq"
	exit 1
}
# boots 2, devices 2, servers 1, UD 4, wire 1, counters 1, SRQ 4,
# model's wire 1, unload 1
lab_plan 17 2
perf_checks_init
perf_preflight

lab_vm 1 --rnic
lab_vm 2 --rnic
boot_vms 1 2
check_vms "1 2" "rnic0 ACTIVE, rnic_perf loaded" rnic_up || exit 1
SRV="$(lab_addr 2 rnic 4)"
SRV6="$(lab_addr 2 rnic 6)"
servers() { perf_server 2 "$SRV" && perf_server 2 "$SRV6"; }
check "vm2: rnic_perf servers (RC and UD) on $SRV and [$SRV6]" servers || exit 1

# run_one ADDR ARGS...: a verified run; the server's line for it goes to
# $OUT/N.log after the client's.
SLINE=""
run_one() {
	local addr="$1" line
	shift
	line="$(perf_run 1 "$addr" --timeout 150 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	SLINE="$(perf_check 2 "$line")" || {
		echo "$SLINE"
		return 1
	}
	echo "$SLINE"
}
# ud_run ADDR ARGS...: also the server saw it as UD.
ud_run() {
	run_one "$@" && [ "$(perf_field "$SLINE" qp)" = ud ]
}
# srq_run EVENTS ARGS...: also the server's SRQ limit events were EVENTS,
# and its QP was drained on the device's LAST_WQE_REACHED.
srq_run() {
	local want="$1"
	shift
	run_one "$SRV" "$@" && perf_srq_teardown_ok 2 "$SLINE" "$want"
}
summary() {
	local line
	line="$(grep '^client' "$OUT/$nchk.log" | tail -1 || true)"
	[ -z "$line" ] || echo "# $(perf_summary "$line")"
}

for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-before" 2>&1 || true
done
PCAP="$LAB_DIR/ud.pcap"
lab_capture_start "$PCAP"
check "UD SEND 1024 B (the path MTU), depth 16, 2000 counted and verified" \
	ud_run "$SRV" qp=ud op=send size=1024 depth=16 count=2000 || true
summary
check "UD SEND_WITH_IMM 512 B, depth 8, 500 counted and verified" \
	ud_run "$SRV" qp=ud op=send_imm size=512 depth=8 count=500 || true
summary
check "UD SEND 256 B over IPv6 to [$SRV6], 300 counted and verified" \
	ud_run "$SRV6" qp=ud op=send size=256 depth=8 count=300 || true
summary
lab_capture_stop "$PCAP"
too_big() {
	local line
	if line="$(perf_run 1 "$SRV" --timeout 60 qp=ud op=send size=2048 count=10)"; then
		echo "$line"
		return 1
	fi
	echo "$line"
	# EMSGSIZE
	[ "$(perf_field "$line" error)" = -90 ]
}
check "UD SEND of 2 KiB (over the 1024-byte path MTU) is refused with EMSGSIZE" too_big || true
for n in 1 2; do
	hw_stats "$n" rnic0/1 >"$LAB_DIR/stats-vm$n-after" 2>&1 || true
done

on_wire() {
	local send imm deth rc
	send="$(pcap_count "$PCAP" 'infiniband.bth.opcode == 100')"
	imm="$(pcap_count "$PCAP" 'infiniband.bth.opcode == 101')"
	deth="$(pcap_count "$PCAP" '(infiniband.bth.opcode == 100 || infiniband.bth.opcode == 101) && infiniband.deth')"
	rc="$(pcap_count "$PCAP" 'infiniband.bth.opcode < 32')"
	echo "UD Send Only: $send, UD Send Only with Immediate: $imm, with a DETH: $deth, RC frames: $rc"
	# data plus the CHECK/DONE rounds and their replies
	[ "$send" -ge 2300 ] && [ "$imm" -ge 500 ] && [ "$deth" = $((send + imm)) ]
}
check "on the wire: UD Send Only (and with Immediate) frames with a DETH, at least one per message" on_wire || true
counters() {
	local b a k
	k=ud_send_packets
	b="$(stat_of "$LAB_DIR/stats-vm1-before" "$k")"
	a="$(stat_of "$LAB_DIR/stats-vm1-after" "$k")"
	echo "vm1 $k: $b -> $a"
	[ "$((a - b))" -ge 2800 ] || return 1
	k=ud_recv_packets
	b="$(stat_of "$LAB_DIR/stats-vm2-before" "$k")"
	a="$(stat_of "$LAB_DIR/stats-vm2-after" "$k")"
	echo "vm2 $k: $b -> $a"
	[ "$((a - b))" -ge 2800 ]
}
check "rdma statistic: vm1 ud_send_packets and vm2 ud_recv_packets up by at least the messages" counters || true

check "SRQ: RC SEND 4 KiB, 400 verified through an SRQ of 404 buffers, srq_limit 100: one limit event, the QP drained on LAST_WQE_REACHED" \
	srq_run 1 op=send size=4096 depth=8 count=400 srq=1 srq_limit=100 || true
summary
check "SRQ: RC SEND_WITH_IMM 3000 B, 2 SGEs, 300 verified, default srq_limit: one limit event, the QP drained on LAST_WQE_REACHED" \
	srq_run 1 op=send_imm size=3000 sge=2 depth=8 count=300 srq=1 || true
summary
check "SRQ: srq_limit 1, never gone below (control buffers are reposted): no limit event, the QP drained on LAST_WQE_REACHED" \
	srq_run 0 op=send size=1024 depth=8 count=200 srq=1 srq_limit=1 || true
ud_srq() {
	ud_run "$SRV" qp=ud srq=1 op=send size=1024 depth=8 count=300 srq_limit=50 &&
		perf_srq_teardown_ok 2 "$SLINE" 1
}
check "SRQ: UD SEND 1024 B, 300 counted and verified through an SRQ, srq_limit 50: one limit event, the QP drained on LAST_WQE_REACHED" ud_srq || true

# The model's side of the wire (tools/rnicsim/README.rst, "The wire"):
# frames written in batches through io_uring (vm1's model sent the data,
# a 4 KiB SEND's four frames in one call; vm2's sends lone ACKs and
# replies, each a plain write) and read in batches by both; or, on a
# host without io_uring, a system call per frame and a line in
# rnicsim.log that says so.
wire_batched() {
	local n c b fl tx rc rx
	for n in 1 2; do
		c="$LAB_DIR/rnicsim-vm$n-counters"
		lab_sim_ctl "$n" counters >"$c" || return 1
		b="$(stat_of "$c" plat_wire_tx_batched)"
		fl="$(stat_of "$c" plat_wire_tx_flushes)"
		tx="$(stat_of "$c" plat_wire_tx_frames)"
		rc="$(stat_of "$c" plat_wire_rx_calls)"
		rx="$(stat_of "$c" plat_rx_frames)"
		echo "vm$n: batched=$b: $tx frames sent, $fl batches of 2 or more; $rx frames received in $rc batched reads"
		if [ "$b" = 1 ]; then
			[ "$rc" -gt 0 ] || return 1
			[ "$n" = 2 ] || [ "$fl" -gt 0 ] || return 1
		else
			grep 'io_uring unavailable' "$LAB_DIR/vm$n/rnicsim.log" || return 1
		fi
	done
}
check "rnicsim: vm1's model sent the data in batches, both read in batches (or said why not)" wire_batched || true

check "rnic_perf stopped, rmmod rnic_perf rnic on both VMs" rnic_unload 1 2 || true

lab_stop
echo "# test_rnic_ud_srq: $(lab_elapsed "$T0") s"
exit "$fail"
