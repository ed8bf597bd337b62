#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate rnicsim's known-answer vectors from the kernel's rdma_rxe:
# run the rxe rping lab test (two VMs, RoCE v2 over IPv4 and IPv6, the lab
# bridge captured) and cut a few of the RoCE v2 frames rxe sent out of the
# capture.  rxe computed their ICRCs, and rxe drops frames whose ICRC is
# wrong, so these frames are an independent oracle for rnicsim's ICRC.
#
# Writes tools/rnicsim/tests/vectors/rxe_v2_ipv4.pcap and rxe_v2_ipv6.pcap
# (classic pcap): the rdma_cm connection (ConnectRequest/Reply/ReadyToUse,
# UD on QP1) and the first RC frames (Send, Acknowledge, RDMA Read, ...).
#
# Usage: scripts/lab/capture-rxe-vectors.sh [--from PCAP]
#   --from PCAP  cut from an existing capture instead of running the test
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="$REPO/tools/rnicsim/tests/vectors"
: "${RNIC_LAB_DIR:=/tmp/rnic-lab}"
FRAMES=12

pcap=""
if [ "${1:-}" = --from ]; then
	pcap="$2"
else
	"$REPO/tests/lab/test_rxe_rping.sh" || {
		echo "capture-rxe-vectors: the rxe rping test failed (see $RNIC_LAB_DIR/rxe_rping)" >&2
		exit 1
	}
	pcap="$RNIC_LAB_DIR/rxe_rping/bridge.pcap"
fi
[ -s "$pcap" ] || {
	echo "capture-rxe-vectors: no capture at $pcap" >&2
	exit 1
}

mkdir -p "$OUT"
# cut FAMILY FILE: the first $FRAMES RoCE v2 frames of that IP version.
cut_vectors() {
	local filter="$1 && udp.dstport == 4791 && infiniband" file="$OUT/$2" n
	# tshark's -c counts frames read, not frames matched: filter all
	# of them first, then keep the first $FRAMES with editcap.
	tshark -r "$pcap" -Y "$filter" -F pcap -w "$file.all" 2>/dev/null
	editcap -F pcap -r "$file.all" "$file.tmp" "1-$FRAMES"
	rm -f "$file.all"
	n="$(tshark -r "$file.tmp" 2>/dev/null | wc -l)"
	if [ "$n" -lt 4 ]; then
		rm -f "$file.tmp"
		echo "capture-rxe-vectors: only $n frames match '$filter' in $pcap" >&2
		return 1
	fi
	mv "$file.tmp" "$file"
	echo "capture-rxe-vectors: $file: $n frames"
	tshark -r "$file" 2>/dev/null | sed 's/^/  /'
}
cut_vectors ip rxe_v2_ipv4.pcap
cut_vectors ipv6 rxe_v2_ipv6.pcap
