#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
#
# rnic <-> rnic acceptance with rnic_perf (the DKMS-installed rnic and
# rnic_perf; scripts/dkms-install.sh first), for RoCE v1 and RoCE v2 in
# turn, chosen through rdma_cm's configfs (default_roce_mode "IB/RoCE v1" /
# "RoCE v2" on both VMs):
#  - every operation (SEND with SGEs and inline, SEND_WITH_IMM, WRITE,
#    WRITE_WITH_IMM, READ, CMP_SWAP, FETCH_ADD), every byte verified on both
#    sides, figures printed;
#  - on the bridge: v1 frames are Ethertype 0x8915, v2 frames UDP to 4791,
#    both decoded by tshark as InfiniBand (the CM ConnectRequest among them),
#    none of the other version, no malformed frame and no expert error;
#  - rdma statistic show: tx/rx packets of that RoCE version went up, the
#    other version's did not; the counter set has per-version packets and
#    bytes, retransmits, timeouts, NAKs by kind, duplicates, ICRC errors and
#    drops by reason.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="perf rnic"
T0="$(lab__now_us)"
lab_start perf_rnic || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/perf_rnic"
	exit 1
}
perf_checks_init
perf_preflight

lab_vm 1 --rnic
lab_vm 2 --rnic
for n in 1 2; do
	if lab_wait_ready "$n"; then
		lab_ok "$SUITE: vm$n boots to the agent"
	else
		lab_not_ok "$SUITE: vm$n boots to the agent" "$LAB_DIR/vm$n/console.log"
		exit 1
	fi
done
for n in 1 2; do
	check "vm$n: rnic0 ACTIVE, rnic_perf loaded" rnic_up "$n" || exit 1
done
SRV="$(lab_addr 2 rnic 4)"
check "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV" || exit 1

run_one() {
	local line
	line="$(perf_run 1 "$SRV" --timeout 150 "$@")" || {
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

for v in 1 2; do
	if [ "$v" = 1 ]; then mode="IB/RoCE v1"; else mode="RoCE v2"; fi
	for n in 1 2; do
		check "RoCE v$v: vm$n: default_roce_mode \"$mode\"" roce_mode "$n" rnic0 "$mode" || true
	done
	hw_stats 1 rnic0/1 >"$LAB_DIR/stats-v$v-before" 2>&1 || true
	PCAP="$LAB_DIR/roce-v$v.pcap"
	lab_capture_start "$PCAP"
	t="$(lab__now_us)"
	run "RoCE v$v: SEND 4 KiB, 2 SGEs, depth 8, 200 verified" \
		op=send size=4096 sge=2 depth=8 count=200
	run "RoCE v$v: SEND inline 64 B, 200 verified" \
		op=send size=64 inline=1 depth=8 count=200
	run "RoCE v$v: SEND_WITH_IMM 1000 B, 3 SGEs, 200 verified" \
		op=send_imm size=1000 sge=3 depth=8 count=200
	run "RoCE v$v: RDMA WRITE 64 KiB (multi-MTU), depth 16, 64 verified" \
		op=write size=65536 depth=16 count=64
	run "RoCE v$v: RDMA WRITE_WITH_IMM 8 KiB, 4 SGEs, 200 verified" \
		op=write_imm size=8192 sge=4 depth=8 count=200
	run "RoCE v$v: RDMA READ 64 KiB, 2 SGEs, depth 16, 64 verified" \
		op=read size=65536 sge=2 depth=16 count=64
	run "RoCE v$v: CMP_SWAP, depth 8, 300 verified" op=cmp_swap depth=8 count=300
	run "RoCE v$v: FETCH_ADD, depth 8, 300 verified" op=fetch_add depth=8 count=300
	echo "# RoCE v$v runs: $(lab_elapsed "$t") s"
	lab_capture_stop "$PCAP"
	hw_stats 1 rnic0/1 >"$LAB_DIR/stats-v$v-after" 2>&1 || true

	other=$((3 - v))
	on_wire() {
		local ib v2 v1 bad req
		v1="$(pcap_count "$PCAP" 'eth.type == 0x8915')"
		v2="$(pcap_count "$PCAP" 'udp.dstport == 4791')"
		ib="$(pcap_count "$PCAP" infiniband)"
		req="$(pcap_count "$PCAP" infiniband.cm.req)"
		bad="$(pcap_count "$PCAP" '_ws.malformed || _ws.expert.severity >= 0x00800000')"
		echo "Ethertype 0x8915: $v1, UDP 4791: $v2, InfiniBand: $ib, CM REQ: $req, malformed/expert errors: $bad"
		if [ "$1" = 1 ]; then
			[ "$v1" -gt 0 ] && [ "$v2" = 0 ] &&
				[ "$(pcap_count "$PCAP" 'eth.type == 0x8915 && infiniband')" = "$v1" ]
		else
			[ "$v2" -gt 0 ] && [ "$v1" = 0 ] &&
				[ "$(pcap_count "$PCAP" 'udp.dstport == 4791 && infiniband')" = "$v2" ]
		fi && [ "$req" -gt 0 ] && [ "$bad" = 0 ]
	}
	if [ "$v" = 1 ]; then
		what="RoCE v1: frames are Ethertype 0x8915, all decoded as InfiniBand, none UDP 4791, no malformed/expert errors"
	else
		what="RoCE v2: frames are UDP 4791, all decoded as InfiniBand, none Ethertype 0x8915, no malformed/expert errors"
	fi
	check "$what" on_wire "$v" || true
	counters() {
		local b="$LAB_DIR/stats-v$v-before" a="$LAB_DIR/stats-v$v-after" k
		cat "$a"
		for k in tx_roce_v${v}_packets rx_roce_v${v}_packets; do
			echo "$k: $(stat_of "$b" "$k") -> $(stat_of "$a" "$k")"
			[ "$(stat_of "$a" "$k")" -gt "$(stat_of "$b" "$k")" ] || return 1
		done
		for k in tx_roce_v${other}_packets rx_roce_v${other}_packets; do
			echo "$k: $(stat_of "$b" "$k") -> $(stat_of "$a" "$k")"
			[ "$(stat_of "$a" "$k")" = "$(stat_of "$b" "$k")" ] || return 1
		done
	}
	check "RoCE v$v: rdma statistic: tx/rx_roce_v${v}_packets up, v$other unchanged" counters || true
done

# Item 8's counter set: per-version packets/bytes, retransmits, timeouts,
# NAKs sent/received by kind, duplicates, ICRC errors, drops by reason.
counter_set() {
	local f="$LAB_DIR/stats-v2-after" k v missing=0
	for v in 1 2; do
		for k in tx_roce_v${v}_packets tx_roce_v${v}_bytes rx_roce_v${v}_packets rx_roce_v${v}_bytes; do
			grep -q "^$k " "$f" || { echo "missing $k"; missing=1; }
		done
	done
	for k in retransmits retrans_timeouts nak_seq_sent nak_seq_rcvd nak_rnr_sent \
		nak_rnr_rcvd nak_inv_req_sent nak_inv_req_rcvd nak_rem_access_sent \
		nak_rem_access_rcvd duplicate_requests icrc_errors; do
		grep -q "^$k " "$f" || { echo "missing $k"; missing=1; }
	done
	echo "drop reasons: $(grep -c '^rx_drop_' "$f")"
	[ "$(grep -c '^rx_drop_' "$f")" -ge 3 ] || missing=1
	# both versions carried traffic, and the byte counters count bytes
	local p1 p2 b1 b2
	p1="$(stat_of "$f" tx_roce_v1_packets)"
	p2="$(stat_of "$f" tx_roce_v2_packets)"
	b1="$(stat_of "$f" tx_roce_v1_bytes)"
	b2="$(stat_of "$f" tx_roce_v2_bytes)"
	echo "tx v1 $p1 packets $b1 bytes, v2 $p2 packets $b2 bytes"
	[ "$p1" -gt 0 ] && [ "$p2" -gt 0 ] && [ "$b1" -gt "$p1" ] && [ "$b2" -gt "$p2" ] || missing=1
	return "$missing"
}
check "rdma statistic show lists per-version packets/bytes, retransmits, timeouts, NAKs by kind, duplicates, ICRC errors, drops by reason" \
	counter_set || true

lab_stop
echo "# test_perf_rnic: $(lab_elapsed "$T0") s"
exit "$fail"
