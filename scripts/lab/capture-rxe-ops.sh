#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate tools/rnicsim/tests/vectors/rxe_v2_ops.pcap: the RC opcodes
# as the kernel's rdma_rxe puts them on the wire, for rnicsim's ABI 2.0
# known-answer test (tools/rnicsim/tests/test_rdma_vectors.c), which has the
# model send the same work requests and compares its frames byte for byte.
#
# Two VMs with a virtio-net NIC each run rdma_rxe (the stock lab kernel);
# rnic_perf (DKMS-installed, or RNIC_PERF_KO=path) connects vm1 to vm2
# once per case below, one message each (count=1, depth=1), while the lab
# bridge is captured. Every RoCE v2 frame is kept: the rdma_cm MADs on
# QP1, rnic_perf's control SENDs, the requests and rxe's responses.
# Single-packet and multi-packet messages (path MTU 1024) of SEND,
# SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM and RDMA READ, CMP_SWAP and
# FETCH_ADD over IPv4, and a multi-packet WRITE over IPv6. rnic_perf
# posts no SEND_WITH_INV, so the vectors have none.
#
# Usage (as root): scripts/lab/capture-rxe-ops.sh [--from PCAP]
#   --from PCAP  cut from an existing capture instead of running the VMs
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$REPO/tools/rnicsim/tests/vectors/rxe_v2_ops.pcap"
: "${RNIC_LAB_DIR:=/tmp/rnic-lab}"

die() {
	echo "capture-rxe-ops: $*" >&2
	exit 1
}

pcap=""
if [ "${1:-}" = --from ]; then
	pcap="$2"
else
	# shellcheck source=scripts/lab/lab.sh
	. "$REPO/scripts/lab/lab.sh"
	# shellcheck source=tests/lab/lib_perf.sh
	. "$REPO/tests/lab/lib_perf.sh"
	lab_start rxe_ops || die "lab start failed (see $RNIC_LAB_DIR/rxe_ops)"
	lab_vm 1 --virtio
	lab_vm 2 --virtio
	for n in 1 2; do
		lab_wait_ready "$n" || die "vm$n did not boot (see $LAB_DIR)"
		rxe_up "$n" >/dev/null || die "vm$n: rdma_rxe or rnic_perf did not come up"
	done
	SRV4="$(lab_addr 2 virtio 4)"
	SRV6="$(lab_addr 2 virtio 6)"
	for a in "$SRV4" "$SRV6"; do
		perf_server 2 "$a" >/dev/null || die "rnic_perf server on $a did not start"
	done
	pcap="$LAB_DIR/rxe_ops.pcap"
	lab_capture_start "$pcap" || die "capture did not start"
	while read -r addr args; do
		[ -n "$addr" ] || continue
		case "$addr" in
		v4) addr="$SRV4" ;;
		v6) addr="$SRV6" ;;
		esac
		# shellcheck disable=SC2086 # args are words
		perf_run 1 "$addr" count=1 depth=1 $args >/dev/null ||
			die "rnic_perf $args to $addr failed (see $LAB_DIR/vm1/commands.log)"
	done <<-EOF
		v4 op=send size=64
		v4 op=send size=3000
		v4 op=send_imm size=64
		v4 op=send_imm size=2500
		v4 op=write size=64
		v4 op=write size=3000
		v4 op=write_imm size=64
		v4 op=write_imm size=2500
		v4 op=read size=64
		v4 op=read size=3000
		v4 op=cmp_swap
		v4 op=fetch_add
		v6 op=write size=3000
	EOF
	lab_capture_stop "$pcap"
	lab_stop
fi
[ -s "$pcap" ] || die "no capture at $pcap"

mkdir -p "$(dirname "$OUT")"
tshark -r "$pcap" -Y "udp.dstport == 4791" -F pcap -w "$OUT.tmp" 2>/dev/null
n="$(tshark -r "$OUT.tmp" 2>/dev/null | wc -l)"
[ "$n" -ge 50 ] || {
	rm -f "$OUT.tmp"
	die "only $n RoCE v2 frames in $pcap"
}
mv "$OUT.tmp" "$OUT"
echo "capture-rxe-ops: $OUT: $n frames"
tshark -r "$OUT" -T fields -e infiniband.bth.opcode 2>/dev/null | sort | uniq -c | sed 's/^/  /'
