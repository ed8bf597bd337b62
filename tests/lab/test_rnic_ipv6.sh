#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# RoCE v2 over IPv6, rnic <-> rnic (the DKMS-installed rnic and rnic_perf;
# scripts/dkms-install.sh first): both VMs load rnic (roce_mode 3), rdma_cm's
# default_roce_mode "RoCE v2", and rnic_perf connects to the peer's
# fd00:20::N address, so the connection uses the RoCE v2 GID of that IPv6
# address:
#  - each port's GID table has fd00:20::N as a RoCE v2 GID;
#  - every operation (SEND with SGEs and inline, SEND_WITH_IMM, WRITE,
#    WRITE_WITH_IMM, READ, CMP_SWAP, FETCH_ADD), every byte verified on both
#    sides, the server's line names the client's IPv6 address;
#  - on the bridge: the RoCE frames are IPv6 UDP to 4791 between
#    fd00:20::1 and fd00:20::2, all decoded by tshark as InfiniBand (the CM
#    ConnectRequest among them); no IPv4 UDP 4791, no Ethertype 0x8915, no
#    malformed frame and no expert error (bar the UDP checksum 0 that RoCE
#    v2 and rdma_rxe send on IPv6);
#  - rdma statistic: RoCE v2 TX/RX packets went up, v1 did not.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic ipv6"
T0="$(lab__now_us)"
lab_start rnic_ipv6 || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_ipv6"
	exit 1
}
# boots 2, devices 2, GIDs 2, server 1, operations 8, wire 1, counters 1
lab_plan 17 2
perf_checks_init
perf_preflight

lab_vm 1 --rnic
lab_vm 2 --rnic
boot_vms 1 2
up() { rnic_up "$1" && roce_mode "$1" rnic0 "RoCE v2"; }
check_vms "1 2" "rnic0 ACTIVE, default_roce_mode \"RoCE v2\", rnic_perf loaded" up || exit 1

# gid_v6 N: VM N's port has its fd00:20::N address as a RoCE v2 GID (the
# sysfs GID is the address in full, eight 4-digit groups).
gid_v6() {
	local want
	want="$(python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address(sys.argv[1]).exploded)' \
		"$(lab_addr "$1" rnic 6)")"
	echo "want $want RoCE v2"
	# read, not cat: a fork per entry of the table took a minute a pass
	# on the debug kernel under TCG.
	lab_exec "$1" --timeout 60 "cd /sys/class/infiniband/rnic0/ports/1
		for i in \$(seq 100); do
			for f in gid_attrs/types/*; do
				n=\${f##*/}
				IFS= read -r t <\$f 2>/dev/null || continue
				IFS= read -r g <gids/\$n
				[ \"\$t\" = 'RoCE v2' ] && [ \"\$g\" = '$want' ] &&
					{ echo \"gid \$n: \$g \$t\"; exit 0; }
			done
			sleep 0.1
		done
		grep -H . gids/* gid_attrs/types/* 2>/dev/null | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000'
		exit 1"
}
for n in 1 2; do
	check "vm$n: GID table has $(lab_addr "$n" rnic 6) as a RoCE v2 GID" gid_v6 "$n" || true
done

SRV="$(lab_addr 2 rnic 6)"
CLI="$(lab_addr 1 rnic 6)"
check "vm2: rnic_perf server on [$SRV]" perf_server 2 "$SRV" || exit 1

run_one() {
	local line l
	line="$(perf_run 1 "$SRV" --timeout 150 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	# the connection ran between the two IPv6 addresses
	l="$(perf_field "$line" local)"
	case "$l" in "[$CLI]:"*) ;; *) echo "local $l is not [$CLI]"; return 1 ;; esac
	[ "$(perf_field "$line" peer)" = "[$SRV]:$PERF_PORT" ] || return 1
	perf_check 2 "$line"
}
run() {
	local what="$1" line
	shift
	check "IPv6: $what" run_one "$@" || true
	line="$(grep '^client' "$OUT/$nchk.log" | tail -1 || true)"
	[ -z "$line" ] || echo "# $(perf_summary "$line")"
}

hw_stats 1 rnic0/1 >"$LAB_DIR/stats-before" 2>&1 || true
PCAP="$LAB_DIR/roce-v2-ipv6.pcap"
lab_capture_start "$PCAP"
t="$(lab__now_us)"
run "SEND 4 KiB, 2 SGEs, depth 8, 200 verified" op=send size=4096 sge=2 depth=8 count=200
run "SEND inline 64 B, 200 verified" op=send size=64 inline=1 depth=8 count=200
run "SEND_WITH_IMM 1000 B, 3 SGEs, 200 verified" op=send_imm size=1000 sge=3 depth=8 count=200
run "RDMA WRITE 64 KiB (multi-MTU), depth 16, 64 verified" op=write size=65536 depth=16 count=64
run "RDMA WRITE_WITH_IMM 8 KiB, 4 SGEs, 200 verified" op=write_imm size=8192 sge=4 depth=8 count=200
run "RDMA READ 64 KiB, 2 SGEs, depth 16, 64 verified" op=read size=65536 sge=2 depth=16 count=64
run "CMP_SWAP, depth 8, 300 verified" op=cmp_swap depth=8 count=300
run "FETCH_ADD, depth 8, 300 verified" op=fetch_add depth=8 count=300
echo "# IPv6 runs: $(lab_elapsed "$t") s"
lab_capture_stop "$PCAP"
hw_stats 1 rnic0/1 >"$LAB_DIR/stats-after" 2>&1 || true

on_wire() {
	local v6 v6ours ib req v4 v1 bad
	v6="$(pcap_count "$PCAP" 'ipv6 && udp.dstport == 4791')"
	v6ours="$(pcap_count "$PCAP" "ipv6 && udp.dstport == 4791 && infiniband &&
		((ipv6.src == $CLI && ipv6.dst == $SRV) || (ipv6.src == $SRV && ipv6.dst == $CLI))")"
	ib="$(pcap_count "$PCAP" infiniband)"
	req="$(pcap_count "$PCAP" 'ipv6 && infiniband.cm.req')"
	v4="$(pcap_count "$PCAP" 'ip && udp.dstport == 4791')"
	v1="$(pcap_count "$PCAP" 'eth.type == 0x8915')"
	# RoCE v2 sends UDP checksum 0 on IPv6 as on IPv4 (the ICRC covers
	# the packet; rdma_rxe does the same, see tools/rnicsim/tests/vectors/
	# rxe_v2_ipv6.pcap), which RFC 6935 allows for tunnels but tshark
	# reports as an error unless told to ignore it.
	bad="$(pcap_count "$PCAP" '_ws.malformed || _ws.expert.severity >= 0x00800000' \
		-o udp.ignore_ipv6_zero_checksum:TRUE)"
	echo "IPv6 UDP 4791: $v6 (InfiniBand between $CLI and $SRV: $v6ours), InfiniBand: $ib, CM REQ over IPv6: $req"
	echo "IPv4 UDP 4791: $v4, Ethertype 0x8915: $v1, malformed/expert errors: $bad"
	[ "$v6" -gt 0 ] && [ "$v6ours" = "$v6" ] && [ "$ib" = "$v6" ] && [ "$req" -gt 0 ] &&
		[ "$v4" = 0 ] && [ "$v1" = 0 ] && [ "$bad" = 0 ]
}
check "frames are IPv6 UDP 4791 between $CLI and $SRV, all decoded as InfiniBand (CM REQ among them), no IPv4 UDP 4791, no 0x8915, no malformed/expert errors" \
	on_wire || true

counters() {
	cat "$LAB_DIR/stats-after"
	roce_version_counted "$LAB_DIR/stats-before" "$LAB_DIR/stats-after" 2
}
check "rdma statistic: RoCE v2 TX/RX packets up, v1 unchanged" counters || true

lab_stop
echo "# test_rnic_ipv6: $(lab_elapsed "$T0") s"
exit "$fail"
