#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# The rnic Ethernet netdev, end to end: the DKMS-installed module loaded with
# modprobe in two rnic VMs (each NIC served by its own rnicsim) and a
# virtio-net VM on the same lab bridge.
#
#   - ping between the rnic VMs over IPv4 and IPv6, and to the virtio VM;
#   - ethtool -i / -S (device, driver and ring counters move) / -g;
#   - MTU 4000 and 9000 carry big pings, 1500 set while down holds after
#     up; an MTU above the device's is refused;
#   - link down/up through rnicsim's control socket moves the carrier;
#   - rmmod while floods run both ways returns and the VM lives; reload
#     with 64-descriptor rings carries bulk TCP intact;
#   - with the NIC's TX held (rnicsim "tx hold") the ring fills and the
#     queue stops, and wakes on release; held past the watchdog, the
#     driver restarts its datapath and traffic flows again.
# Reloads under and around traffic, many times: test_rnic_reload.sh.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"
# shellcheck source=tests/lab/lib_net.sh
. "$(dirname "$0")/lib_net.sh"

SUITE="rnic netdev"
T0="$(lab__now_us)"
lab_start rnic_netdev || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_netdev"
	exit 1
}
# 3 boots, 26 load/ping/ethtool, 14 MTU, 10 link, 12 unload/reload/TCP,
# 2 TX stop/wake and watchdog.
lab_plan 67 3
check_init
preflight rnic rnicsim

lab_vm 1 --rnic
lab_vm 2 --rnic
lab_vm 3 --virtio
boot_vms --timeout 300 1 2 3

V1="$(lab_addr 1 rnic 4)"
V2="$(lab_addr 2 rnic 4)"
V1_6="$(lab_addr 1 rnic 6)"
V2_6="$(lab_addr 2 rnic 6)"
# The virtio VM also gets an address in the rnic subnet (same bridge).
V3=10.20.0.103
V3_6=fd00:20::103

stat_positive() {
	local v
	v="$(ethtool_stat "$1" "$2")" || return 1
	echo "vm$1 $2: $v"
	[ "$v" -gt 0 ]
}
# wait_carrier N yes|no: the carrier follows within 20 s.
wait_carrier() {
	local want=1
	[ "$2" = no ] && want=0
	lab_exec "$1" --timeout 60 "$DEV; for i in \$(seq 100); do c=; read -r c </sys/class/net/\$dev/carrier; [ \"\$c\" = $want ] && exit 0; sleep 0.2; done; ip link show dev \$dev; exit 1"
}
ping4() { lab_exec "$1" --timeout 60 ping -c 3 -i 0.2 -W 5 "${@:2}"; }
ping6() { lab_exec "$1" --timeout 60 ping -6 -c 3 -i 0.2 -W 5 "${@:2}"; }

# ------------------------------------------------------------ load, ping
# shellcheck disable=SC2016 # expanded in the guest
for n in 1 2; do
	need "vm$n: modprobe rnic creates the netdev with the device's MAC" \
		lab_exec "$n" --timeout 120 'modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"'
done
check "vm3: virtio NIC also gets $V3 and $V3_6" \
	lab_exec 3 --timeout 60 "ip addr add $V3/24 dev \$LAB_VIRTIO_IF && ip addr add $V3_6/64 nodad dev \$LAB_VIRTIO_IF" ||
	true
check "vm1 gets carrier" wait_carrier 1 yes || true
check "vm2 gets carrier" wait_carrier 2 yes || true

check "vm1 -> vm2 IPv4" ping4 1 "$V2" || true
check "vm2 -> vm1 IPv4" ping4 2 "$V1" || true
check "vm1 -> vm2 IPv6" ping6 1 "$V2_6" || true
check "vm2 -> vm1 IPv6" ping6 2 "$V1_6" || true
check "rnic vm1 -> virtio vm3 IPv4" ping4 1 "$V3" || true
check "virtio vm3 -> rnic vm1 IPv4" ping4 3 "$V1" || true
check "rnic vm1 -> virtio vm3 IPv6" ping6 1 "$V3_6" || true

# ------------------------------------------------------------ ethtool
check "ethtool -i: driver rnic, firmware = model version, PCI bus info" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -i \$dev >/tmp/i || exit 1; cat /tmp/i
		grep -qx 'driver: rnic' /tmp/i && grep -q '^firmware-version: rnicsim' /tmp/i &&
		grep -Eq '^bus-info: [0-9a-f]{4}:' /tmp/i" || true
check "ethtool -g: 256 descriptors of at most 4096" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -g \$dev | tr -d '\t' | tr '\n' ' ' | grep 'maximums: RX:4096 .*TX:4096 Current hardware settings: RX:256 .*TX:256' >/dev/null" ||
	true
check "ethtool: 10000 Mb/s full duplex, link detected" \
	lab_exec 1 --timeout 60 "$DEV; ethtool \$dev >/tmp/e || exit 1; cat /tmp/e
		grep -q 'Speed: 10000Mb/s' /tmp/e && grep -q 'Duplex: Full' /tmp/e && grep -q 'Link detected: yes' /tmp/e" ||
	true
lists() {
	local s
	s="$(ethtool_stats 1)" || return 1
	echo "$s"
	grep -q '^port_tx_eth_frames ' <<<"$s" && grep -q '^drv_aq_cmds ' <<<"$s" &&
		grep -q '^rx0_packets ' <<<"$s"
}
check "ethtool -S lists device, driver and ring counters" lists || true
for c in port_tx_eth_frames port_rx_eth_frames port_admin_cmds drv_aq_cmds tx0_packets tx0_bytes rx0_packets rx0_bytes; do
	check "ethtool -S: $c > 0 after ping" stat_positive 1 "$c" || true
done
check "ethtool -S: no bad completions, no failed stats query" \
	stats_zero 1 drv_rx_bad_cqe drv_tx_bad_cqe drv_port_stats_failed || true
ip_counts() {
	local j
	j="$(lab_exec 1 --timeout 60 "$DEV; ip -s -j link show dev \$dev")" || return 1
	echo "$j"
	python3 -c '
import json, sys
s = json.loads(sys.argv[1])[0]["stats64"]
print("rx", s["rx"]["packets"], "packets", s["rx"]["bytes"], "bytes;",
      "tx", s["tx"]["packets"], "packets", s["tx"]["bytes"], "bytes")
sys.exit(0 if min(s["rx"]["packets"], s["tx"]["packets"],
                  s["rx"]["bytes"], s["tx"]["bytes"]) > 0 else 1)' "$j"
}
check "ip -s link: RX/TX packets and bytes counted" ip_counts || true

# ------------------------------------------------------------ MTU
# The lab's taps are created with the default MTU of 1500, and the bridge
# drops a frame longer than its egress port's MTU: let the two rnic ports
# carry jumbo frames (the namespace is the lab's own).
jumbo_taps() { ip -n "$LAB_NS" link set tap1r mtu 9000 && ip -n "$LAB_NS" link set tap2r mtu 9000; }
check "lab: the rnic VMs' taps take 9000-byte frames" jumbo_taps || true
for n in 1 2; do
	check "vm$n: MTU 4000 accepted" \
		lab_exec "$n" --timeout 60 "$DEV; ip link set dev \$dev mtu 4000 && ip link show dev \$dev | grep 'mtu 4000' >/dev/null" ||
		true
done
check "MTU 4000: ping -s 3500 (unfragmented) works both ways" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -M do -s 3500 $V2" || true
check "MTU 4000: IPv6 ping -s 3500" \
	lab_exec 1 --timeout 60 "ping -6 -c 3 -i 0.2 -W 5 -M do -s 3500 $V2_6" || true
check "MTU 9001 (above the device's 9000) is refused" \
	lab_exec 1 --timeout 60 "$DEV; ! ip link set dev \$dev mtu 9001 && ip link show dev \$dev | grep 'mtu 4000' >/dev/null" ||
	true
check "MTU 67 (below 68) is refused" \
	lab_exec 1 --timeout 60 "$DEV; ! ip link set dev \$dev mtu 67 && ip link show dev \$dev | grep 'mtu 4000' >/dev/null" ||
	true
for n in 1 2; do
	check "vm$n: MTU 9000 accepted" \
		lab_exec "$n" --timeout 60 "$DEV; ip link set dev \$dev mtu 9000 && ip link show dev \$dev | grep 'mtu 9000' >/dev/null" ||
		true
done
check "MTU 9000: ping -s 8900 works" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -M do -s 8900 $V2" || true
# Set while down; after up, a 1500-byte packet goes (vm2 is still at 9000)
# and a 1501-byte one is refused by vm1 itself.  The IPv6 address went
# with the link: put it back for what follows.
check "MTU 1500 set while down holds after up: ping -s 1472 works, -s 1473 is refused (mtu=1500)" \
	lab_exec 1 --timeout 60 "$DEV; ip link set dev \$dev down && ip link set dev \$dev mtu 1500 &&
		ip link set dev \$dev up && ip addr replace $V1_6/64 nodad dev \$dev &&
		ip link show dev \$dev | grep 'mtu 1500' >/dev/null || exit 1
		ping -c 3 -i 0.2 -W 5 -w 20 -M do -s 1472 $V2 || exit 1
		ping -c 1 -W 2 -M do -s 1473 $V2 >/tmp/p 2>&1; cat /tmp/p
		grep -q 'message too long, mtu=1500' /tmp/p" || true
check "vm2: MTU back to 1500" \
	lab_exec 2 --timeout 60 "$DEV; ip link set dev \$dev mtu 1500 && ip link show dev \$dev | grep 'mtu 1500' >/dev/null" ||
	true
check "vm1 -> vm2 IPv4 after the MTU changes" ping4 1 "$V2" || true
check "vm2 -> vm1 IPv4 after the MTU changes" ping4 2 "$V1" || true

# ------------------------------------------------------------ link
# The device counts every link change: the flap below must add two.
LC0=""
link_down() {
	LC0="$(ethtool_stat 1 port_link_changes)" || return 1
	echo "port_link_changes before: $LC0"
	lab_sim_ctl 1 link down
}
check "rnicsim: link down on vm1's port" link_down || true
check "link down: vm1 carrier goes off (NO-CARRIER)" wait_carrier 1 no || true
check "link down: ip link shows NO-CARRIER" \
	lab_exec 1 --timeout 60 "$DEV; ip link show dev \$dev | grep NO-CARRIER >/dev/null" || true
check "link down: dmesg says so" \
	lab_exec 1 --timeout 60 "dmesg | grep 'rnic .*: link down' >/dev/null" || true
# Unanswered (status 1, nothing received), not failing for another reason.
check "link down: vm1 -> vm2 ping gets no reply" \
	lab_exec 1 --timeout 60 "ping -c 2 -i 0.2 -W 1 $V2 >/tmp/p 2>&1; rc=\$?; cat /tmp/p
		[ \$rc = 1 ] && grep -q ' 0 received' /tmp/p" || true
check "rnicsim: link up on vm1's port" lab_sim_ctl 1 link up || true
check "link up: vm1 carrier comes back" wait_carrier 1 yes || true
check "link up: dmesg logs the speed" \
	lab_exec 1 --timeout 60 "dmesg | grep 'rnic .*: link' | tail -1 | grep 'link up, 10000 Mb/s' >/dev/null" || true
check "link up: vm1 -> vm2 ping works again" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2" || true
flap_counted() {
	local now
	now="$(ethtool_stat 1 port_link_changes)" || return 1
	echo "port_link_changes: ${LC0:-?} -> $now"
	[ -n "$LC0" ] && [ "$now" = $((LC0 + 2)) ]
}
check "ethtool -S: port_link_changes counted the flap (+2)" flap_counted || true

# ------------------------------------------------------------ unload
# Floods both ways, so the unload races TX, RX and NAPI at once.
# (An unknown start must not pass: earlier pings counted hundreds.)
before="$(ethtool_stat 1 rx0_packets)" || before=""
J1="$(lab_bg 1 "ping -f -w 120 $V2")" || J1=""
J2="$(lab_bg 2 "ping -f -w 120 $V1")" || J2=""
sleep 5
flood_running() {
	local now
	now="$(ethtool_stat 1 rx0_packets)" || return 1
	echo "rx0_packets during the flood: ${before:-?} -> $now"
	[ -n "$before" ] && [ -n "$J1" ] && [ -n "$J2" ] && [ "$now" -gt $((before + 100)) ]
}
check "the floods run (vm1 received > 100 frames)" flood_running || true
check "rmmod rnic while ping -f runs both ways" \
	lab_exec 1 --timeout 120 "rmmod rnic" || true
check "vm1 is alive after the unload; the netdev is gone" \
	lab_exec 1 --timeout 60 "! lsmod | grep '^rnic ' >/dev/null && ! ls /sys/bus/pci/drivers/rnic >/dev/null 2>&1 && ! ls /sys/class/net | grep -v '^lo\$' >/dev/null" ||
	true
for j in "1 $J1" "2 $J2"; do
	# shellcheck disable=SC2086 # VM and job id
	set -- $j
	[ -n "${2:-}" ] || continue
	lab_kill "$1" "$2"
	lab_wait "$1" "$2" --timeout 30 >/dev/null 2>&1 || true
done
# Back with the smallest rings, so that bulk TCP below fills the TX ring.
# shellcheck disable=SC2016 # expanded in the guest
check "vm1: modprobe rnic eth_ring_size=64 brings the netdev back" \
	lab_exec 1 --timeout 120 'modprobe rnic eth_ring_size=64 && lab_ifup "$LAB_RNIC_SPEC"' || true
check "ethtool -g: 64 descriptors after the reload" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -g \$dev | tr -d '\t' | tr '\n' ' ' | grep 'Current hardware settings: RX:64 .*TX:64' >/dev/null" ||
	true
check "after reload: vm1 gets carrier" wait_carrier 1 yes || true
check "after reload: vm1 -> vm2 IPv4" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2" || true
check "after reload: vm1 -> vm2 IPv6" \
	lab_exec 1 --timeout 60 "ping -6 -c 3 -i 0.2 -W 5 -w 20 $V2_6" || true

# ------------------------------------------------------------ bulk TCP
# 4 MiB of random bytes each way between the rnic VMs; the receiver's
# SHA-256 must match the sender's (linearize, SG, BQL, stop/wake, refill).
check "bulk TCP vm1 -> vm2 (4 MiB, 64-descriptor TX ring): data intact" tcp_bulk 1 2 "$V2" 4 || true
check "bulk TCP vm2 -> vm1 (4 MiB, 64-descriptor RX ring): data intact" tcp_bulk 2 1 "$V1" 4 || true
check "after bulk TCP: no bad completions, no RX allocation failures" \
	stats_zero 1 drv_rx_bad_cqe drv_tx_bad_cqe drv_rx_alloc_failed rx0_errors \
	port_cq_overflows port_queue_errors || true

# ------------------------------------------------------------ TX stop/wake
# Bulk TCP never fills even a 64-descriptor ring (BQL and the model drain
# it: 0 stops in every run), so the NIC's TX is held (rnicsim's "tx hold":
# it takes no descriptor, and completes none, until "tx release").
# tx_burst N: vm1 sends N UDP datagrams to vm2's discard port at once
# (bash's /dev/udp: no exec per datagram).  Not ping: it keeps only a
# dozen unanswered echo requests in flight, which never fills the ring.
tx_burst() {
	lab_exec 1 --timeout 60 "for i in \$(seq $1); do echo tx-hold-\$i >/dev/udp/$V2/9; done 2>/dev/null; true"
}
tx_stop_wake() {
	local s0 w0 r0 s1 w1 r1 r2
	s0="$(ethtool_stat 1 tx0_stopped)" && w0="$(ethtool_stat 1 tx0_woken)" &&
		r0="$(ethtool_stat 2 rx0_packets)" || return 1
	lab_sim_ctl 1 tx hold || return 1
	# 200 frames for 64 descriptors, well within the 5 s TX watchdog.
	tx_burst 200 || { lab_sim_ctl 1 tx release; return 1; }
	# shellcheck disable=SC2015 # either one failing releases the hold
	s1="$(ethtool_stat 1 tx0_stopped)" && r1="$(ethtool_stat 2 rx0_packets)" ||
		{ lab_sim_ctl 1 tx release; return 1; }
	lab_sim_ctl 1 tx release || return 1
	sleep 1
	w1="$(ethtool_stat 1 tx0_woken)" && r2="$(ethtool_stat 2 rx0_packets)" || return 1
	echo "held: vm1 tx0_stopped $s0 -> $s1, vm2 rx0_packets $r0 -> $r1;" \
		"released: vm1 tx0_woken $w0 -> $w1, vm2 rx0_packets -> $r2"
	# Stopped while held, nothing left vm1 then (a few frames of the
	# ethtool runs may pass vm2's counter), the queue woken and the held
	# ring's frames delivered after the release.
	[ "$s1" -gt "$s0" ] && [ $((r1 - r0)) -lt 10 ] && [ "$w1" -gt "$w0" ] &&
		[ $((r2 - r1)) -ge 64 ]
}
check "TX held: vm1's 64-descriptor ring fills and the driver stops its queue; released: it wakes and the frames go out" \
	tx_stop_wake || true
# Held past the watchdog (5 s): the stack calls ndo_tx_timeout, which
# restarts the datapath with frames still in the ring; once released,
# vm1's traffic flows again.
restarts() { lab_exec 1 --timeout 60 "dmesg | grep -c 'restarting the datapath'; true"; }
tx_timeout_restart() {
	local n0 n1
	n0="$(restarts)" || return 1
	lab_sim_ctl 1 tx hold || return 1
	tx_burst 200 || { lab_sim_ctl 1 tx release; return 1; }
	# The watchdog looks every 5 s for a queue stopped 5 s: 10 s at most.
	for _ in $(seq 20); do
		sleep 1
		n1="$(restarts)" || break
		[ "$n1" -gt "$n0" ] && break
	done
	lab_sim_ctl 1 tx release || return 1
	lab_exec 1 --timeout 60 "dmesg | grep -E 'NETDEV WATCHDOG|timed out: [0-9]+ of [0-9]+ descriptors|restarting the datapath' | tail -3"
	echo "datapath restarts: $n0 -> $n1"
	[ "$n1" -gt "$n0" ] && lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2"
}
check "TX held past the watchdog: the driver restarts its datapath, and traffic flows after the release" \
	tx_timeout_restart || true

# shellcheck disable=SC2016 # expanded in the guest
check "vm2: rmmod and modprobe while idle" \
	lab_exec 2 --timeout 120 'rmmod rnic && modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"' || true
# Kernel warnings, oopses and leaks: lab_stop's sweep of every VM.

lab_stop
echo "# test_rnic_netdev: $(lab_elapsed "$T0") s"
exit "$fail"
