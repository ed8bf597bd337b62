#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
# shellcheck disable=SC2317 # functions are called through check
#
# The rxe reference: two VMs with virtio-net NICs run the kernel's own
# RoCE v2 implementation (rdma_rxe) and complete rping (rdmacm-utils) over
# IPv4 and over IPv6, while dumpcap records the lab bridge.  tshark must
# decode the frames as InfiniBand over UDP 4791, with the rdma_cm
# ConnectRequest among them.  The capture stays in the lab directory
# (bridge.pcap); scripts/lab/capture-rxe-vectors.sh cuts known-answer
# vectors for rnicsim out of it.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rxe rping"
T0="$(lab__now_us)"
lab_start rxe_rping || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rxe_rping"
	exit 1
}
# 2 boots, 2 rxe links, 2 rpings, 5 capture checks.
lab_plan 11 2
check_init
PCAP="$LAB_DIR/bridge.pcap"

lab_vm 1 --virtio
lab_vm 2 --virtio
# From the first frame on, so the capture also holds ARP/ND and the CM.
lab_capture_start "$PCAP" || true
boot_vms 1 2

# $LAB_VIRTIO_IF is expanded in the guest: the agent sets it.
# shellcheck disable=SC2016
for n in 1 2; do
	check "vm$n: rdma link add rxe0 on virtio-net" lab_exec "$n" --timeout 60 \
		'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$LAB_VIRTIO_IF" && rdma link show rxe0/1 >/dev/null' ||
		true
done

# shellcheck disable=SC2016 # guest-side expansions
# rping_over V: server in vm2, client in vm1, 5 iterations, address family V.
rping_over() {
	local v="$1" addr job out="$LAB_DIR/rping-ipv$1" rc=0
	addr="$(lab_addr 2 virtio "$v")"
	job="$(lab_bg 2 rping -s -a "$addr" -v -C 5)"
	# The client must not connect before the server listens.
	if ! lab_exec 2 --timeout 30 \
		'for i in $(seq 100); do rdma resource show cm_id | grep LISTEN >/dev/null && exit 0; sleep 0.1; done; exit 1'; then
		echo "rping server did not reach LISTEN" >&2
		lab_kill 2 "$job"
		lab_wait 2 "$job" --timeout 10 >"$out.server" 2>&1 || true
		return 1
	fi
	lab_exec 1 --timeout 90 rping -c -a "$addr" -v -C 5 >"$out.client" 2>&1 || rc=1
	lab_wait 2 "$job" --timeout 30 >"$out.server" 2>&1 || rc=1
	# -v prints one "ping data" line per iteration on both sides.
	[ "$(grep -c 'ping data: rdma-ping-' "$out.client")" -ge 5 ] || rc=1
	[ "$(grep -c 'ping data: rdma-ping-' "$out.server")" -ge 5 ] || rc=1
	tail -n 20 "$out.client" "$out.server"
	return "$rc"
}
t="$(lab__now_us)"
check "rping -C 5 over RoCE v2 / IPv4" rping_over 4 || true
echo "# rping IPv4: $(lab_elapsed "$t") s"
t="$(lab__now_us)"
check "rping -C 5 over RoCE v2 / IPv6" rping_over 6 || true
echo "# rping IPv6: $(lab_elapsed "$t") s"

lab_capture_stop "$PCAP" || true

# frames FILTER: some frames of the capture match a tshark display filter.
frames() {
	local n
	n="$(tshark -r "$PCAP" -Y "$1" | wc -l)" || return 1
	echo "$1: $n frames"
	[ "$n" -gt 0 ]
}
check_count() { check "$1" frames "$2" || true; }
check_count "tshark decodes InfiniBand over UDP 4791 / IPv4" 'ip && udp.dstport == 4791 && infiniband'
check_count "tshark decodes InfiniBand over UDP 4791 / IPv6" 'ipv6 && udp.dstport == 4791 && infiniband'
check_count "CM ConnectRequest over IPv4" 'ip && infiniband.cm.req'
check_count "CM ConnectRequest over IPv6" 'ipv6 && infiniband.cm.req'
check_count "RC data frames (BTH opcode RC Send/RDMA)" 'infiniband.bth.opcode < 0x20 && !infiniband.mad'

lab_stop
echo "# test_rxe_rping: $(lab_elapsed "$T0") s"
exit "$fail"
