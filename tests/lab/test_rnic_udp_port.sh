#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# A non-default RoCE v2 UDP port, rnic <-> rnic (the DKMS-installed rnic
# and rnic_perf; scripts/dkms-install.sh first): both VMs load rnic with
# roce_udp_port=5791 (modprobe option), rdma_cm's default_roce_mode
# "RoCE v2"; rnic_perf SEND, WRITE and WRITE_WITH_IMM verified; on the
# bridge the RoCE frames go to UDP 5791 (tshark decodes them as InfiniBand
# when told the port), none to 4791, no malformed frame or expert error.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic udp port"
T0="$(lab__now_us)"
lab_start perf_rnic_udp || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/perf_rnic_udp"
	exit 1
}
# 2 boots, 3 set-up steps, 3 runs, the capture.
lab_plan 9 2
perf_checks_init
perf_preflight

UDP_PORT=5791
lab_vm 1 --rnic
lab_vm 2 --rnic
boot_vms 1 2
port_set() {
	rnic_up "$1" "roce_udp_port=$UDP_PORT" &&
		lab_exec "$1" --timeout 30 "grep -x $UDP_PORT /sys/module/rnic/parameters/roce_udp_port" &&
		roce_mode "$1" rnic0 "RoCE v2"
}
check_vms "1 2" "modprobe rnic roce_udp_port=$UDP_PORT, RoCE v2 default, rnic_perf loaded" port_set || exit 1
SRV="$(lab_addr 2 rnic 4)"
need "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV"

run() { perf_case "$1" 1 2 "$SRV" --timeout 150 "${@:2}"; }

PCAP="$LAB_DIR/udp-$UDP_PORT.pcap"
lab_capture_start "$PCAP" || true
run "UDP $UDP_PORT: SEND 4 KiB, 2 SGEs, 100 verified" op=send size=4096 sge=2 count=100
run "UDP $UDP_PORT: RDMA WRITE 64 KiB, depth 8, 32 verified" op=write size=65536 depth=8 count=32
run "UDP $UDP_PORT: RDMA WRITE_WITH_IMM 8 KiB, 64 verified" op=write_imm size=8192 depth=8 count=64
lab_capture_stop "$PCAP" || true

on_wire() {
	local p d ib bad
	p="$(pcap_count "$PCAP" "udp.dstport == $UDP_PORT")"
	d="$(pcap_count "$PCAP" 'udp.dstport == 4791 || eth.type == 0x8915')"
	ib="$(pcap_count "$PCAP" "udp.dstport == $UDP_PORT && infiniband" -o "infiniband.rroce.port:$UDP_PORT")"
	bad="$(pcap_count "$PCAP" '_ws.malformed || _ws.expert.severity >= 0x00800000' -o "infiniband.rroce.port:$UDP_PORT")"
	echo "UDP $UDP_PORT: $p (InfiniBand: $ib), UDP 4791 or 0x8915: $d, malformed/expert errors: $bad"
	[ "$p" -gt 0 ] && [ "$ib" = "$p" ] && [ "$d" = 0 ] && [ "$bad" = 0 ]
}
check "frames go to UDP $UDP_PORT, decoded as InfiniBand; none to 4791; no malformed/expert errors" on_wire || true

lab_stop
echo "# test_rnic_udp_port: $(lab_elapsed "$T0") s"
exit "$fail"
