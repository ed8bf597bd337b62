#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rnic Ethernet netdev, end to end: the DKMS-installed module loaded with
# modprobe in two rnic VMs (each NIC served by its own rnicsim) and a
# virtio-net VM on the same lab bridge.
#
#   - ping between the rnic VMs over IPv4 and IPv6, and to the virtio VM;
#   - ethtool -i / -S (device, driver and ring counters move) / -g;
#   - MTU 4000 and 9000 carry big pings; an MTU above the device's is refused;
#   - link down/up through rnicsim's control socket moves the carrier;
#   - rmmod while floods run both ways returns and the VM lives; reload works.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SUITE="rnic netdev"
T0="$(lab__now_us)"
lab_start rnic_netdev || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_netdev"
	exit 1
}
fail=0

# check WHAT LOG CMD...: one TAP line per check.
check() {
	local what="$1" log="$2"
	shift 2
	if "$@" >>"$LAB_DIR/checks.log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$log"
		fail=1
	fi
}

# Fatal prerequisites: without them nothing below means anything.
need() {
	local what="$1" log="$2"
	shift 2
	if "$@" >>"$LAB_DIR/checks.log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$log"
		exit 1
	fi
}

build_rnicsim() { make -C "$LAB_REPO/tools/rnicsim" >"$LAB_DIR/rnicsim-build.log" 2>&1; }
# rnicsim is another part of the tree: build it if the binary is missing.
[ -x "$LAB_RNICSIM" ] || need "rnicsim builds" "$LAB_DIR/rnicsim-build.log" build_rnicsim
# Other runs may install at the same time; DKMS then fails spuriously.
dkms_install() {
	local i
	for i in 1 2 3; do
		bash "$LAB_REPO/scripts/dkms-install.sh" && return 0
		sleep $((10 * i))
	done
	return 1
}
need "rnic installs with DKMS" "${RNIC_DKMS_LOG:-/tmp/rnic-dkms.log}" dkms_install

lab_vm 1 --rnic
lab_vm 2 --rnic
lab_vm 3 --virtio
for n in 1 2 3; do
	need "vm$n boots to the agent" "$LAB_DIR/vm$n/console.log" lab_wait_ready "$n" --timeout 300
done

LOG1="$LAB_DIR/vm1/commands.log"
LOG2="$LAB_DIR/vm2/commands.log"
LOG3="$LAB_DIR/vm3/commands.log"
V1="$(lab_addr 1 rnic 4)"
V2="$(lab_addr 2 rnic 4)"
V1_6="$(lab_addr 1 rnic 6)"
V2_6="$(lab_addr 2 rnic 6)"
# The virtio VM also gets an address in the rnic subnet (same bridge).
V3=10.20.0.103
V3_6=fd00:20::103

# The rnic netdev's name, from the PCI driver's sysfs directory.
# shellcheck disable=SC2016 # expanded in the guest
DEV='dev=$(basename /sys/bus/pci/drivers/rnic/*/net/*)'

# ethtool -S value of one counter in VM N.
stat() {
	lab_exec "$1" --timeout 60 "$DEV; ethtool -S \$dev | awk -v k=$2: '\$1 == k { print \$2 }'"
}
stat_positive() {
	local v
	v="$(stat "$1" "$2")" && [ -n "$v" ] && [ "$v" -gt 0 ]
}
# wait_carrier N yes|no: the carrier follows within 20 s.
wait_carrier() {
	local want=1
	[ "$2" = no ] && want=0
	lab_exec "$1" --timeout 60 "$DEV; for i in \$(seq 100); do [ \"\$(cat /sys/class/net/\$dev/carrier)\" = $want ] && exit 0; sleep 0.2; done; ip link show dev \$dev; exit 1"
}
ctl() {
	"$LAB_RNICSIM" --ctl-cmd "$LAB_DIR/vm$1/rnicsim.ctl" "${@:2}"
}
ping4() { lab_exec "$1" --timeout 60 ping -c 3 -i 0.2 -W 5 "${@:2}"; }
ping6() { lab_exec "$1" --timeout 60 ping -6 -c 3 -i 0.2 -W 5 "${@:2}"; }
no_kernel_splat() {
	! lab_exec "$1" --timeout 60 "dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|refcount_t|leaking|kernel NULL'"
}

# ------------------------------------------------------------ load, ping
for n in 1 2; do
	need "vm$n: modprobe rnic creates the netdev with the device's MAC" "$LAB_DIR/vm$n/commands.log" \
		lab_exec "$n" --timeout 120 'modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"'
done
lab_exec 3 --timeout 60 "ip addr add $V3/24 dev \$LAB_VIRTIO_IF && ip addr add $V3_6/64 nodad dev \$LAB_VIRTIO_IF" >/dev/null
check "vm1 gets carrier" "$LOG1" wait_carrier 1 yes
check "vm2 gets carrier" "$LOG2" wait_carrier 2 yes

check "vm1 -> vm2 IPv4" "$LOG1" ping4 1 "$V2"
check "vm2 -> vm1 IPv4" "$LOG2" ping4 2 "$V1"
check "vm1 -> vm2 IPv6" "$LOG1" ping6 1 "$V2_6"
check "vm2 -> vm1 IPv6" "$LOG2" ping6 2 "$V1_6"
check "rnic vm1 -> virtio vm3 IPv4" "$LOG1" ping4 1 "$V3"
check "virtio vm3 -> rnic vm1 IPv4" "$LOG3" ping4 3 "$V1"
check "rnic vm1 -> virtio vm3 IPv6" "$LOG1" ping6 1 "$V3_6"

# ------------------------------------------------------------ ethtool
check "ethtool -i: driver rnic, firmware = model version, PCI bus info" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -i \$dev | tee /dev/stderr | grep -qx 'driver: rnic' && ethtool -i \$dev | grep -q '^firmware-version: rnicsim' && ethtool -i \$dev | grep -Eq '^bus-info: [0-9a-f]{4}:'"
check "ethtool -g: 256 descriptors of at most 4096" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -g \$dev | tr -d '\t' | tr '\n' ' ' | grep -q 'maximums: RX:4096 .*TX:4096 Current hardware settings: RX:256 .*TX:256'"
check "ethtool: 10000 Mb/s full duplex, link detected" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool \$dev | grep -q 'Speed: 10000Mb/s' && ethtool \$dev | grep -q 'Duplex: Full' && ethtool \$dev | grep -q 'Link detected: yes'"
check "ethtool -S lists device, driver and ring counters" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -S \$dev | grep -q port_tx_eth_frames && ethtool -S \$dev | grep -q drv_aq_cmds && ethtool -S \$dev | grep -q rx0_packets"
for c in port_tx_eth_frames port_rx_eth_frames port_admin_cmds drv_aq_cmds tx0_packets tx0_bytes rx0_packets rx0_bytes; do
	check "ethtool -S: $c > 0 after ping" "$LOG1" stat_positive 1 "$c"
done
check "ethtool -S: no bad completions, no failed stats query" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -S \$dev | grep -E 'drv_(rx|tx)_bad_cqe|drv_port_stats_failed' | awk '\$2 != 0 { exit 1 }'"
check "ip -s link: RX/TX packets counted" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ip -s -j link show dev \$dev | grep -Eq '\"rx\":\\{\"bytes\":[1-9]'"

# ------------------------------------------------------------ MTU
# The lab's taps are created with the default MTU of 1500, and the bridge
# drops a frame longer than its egress port's MTU: let the two rnic ports
# carry jumbo frames (the namespace is the lab's own).
for n in 1 2; do
	ip -n "$LAB_NS" link set "tap${n}r" mtu 9000 >>"$LAB_DIR/checks.log" 2>&1 || true
done
for n in 1 2; do
	check "vm$n: MTU 4000 accepted" "$LAB_DIR/vm$n/commands.log" \
		lab_exec "$n" --timeout 60 "$DEV; ip link set dev \$dev mtu 4000 && ip link show dev \$dev | grep -q 'mtu 4000'"
done
check "MTU 4000: ping -s 3500 (unfragmented) works both ways" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -M do -s 3500 $V2"
check "MTU 4000: IPv6 ping -s 3500" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -6 -c 3 -i 0.2 -W 5 -M do -s 3500 $V2_6"
check "MTU 9001 (above the device's 9000) is refused" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ! ip link set dev \$dev mtu 9001 && ip link show dev \$dev | grep -q 'mtu 4000'"
check "MTU 67 (below 68) is refused" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ! ip link set dev \$dev mtu 67"
for n in 1 2; do
	lab_exec "$n" --timeout 60 "$DEV; ip link set dev \$dev mtu 9000" >/dev/null || true
done
check "MTU 9000: ping -s 8900 works" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -M do -s 8900 $V2"
check "MTU change while down, then up: ping at 1500" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ip link set dev \$dev down && ip link set dev \$dev mtu 1500 && ip link set dev \$dev up && ip link show dev \$dev | grep -q 'mtu 1500'"
lab_exec 2 --timeout 60 "$DEV; ip link set dev \$dev mtu 1500" >/dev/null || true
lab_exec 1 --timeout 60 "$DEV; ip addr add $V1/24 dev \$dev 2>/dev/null; ip addr add $V1_6/64 nodad dev \$dev 2>/dev/null; true" >/dev/null
check "vm1 -> vm2 IPv4 after the MTU changes" "$LOG1" ping4 1 "$V2"
check "vm2 -> vm1 IPv4 after the MTU changes" "$LOG2" ping4 2 "$V1"

# ------------------------------------------------------------ link
check "rnicsim: link down on vm1's port" "$LAB_DIR/vm1/rnicsim.log" ctl 1 link down
check "link down: vm1 carrier goes off (NO-CARRIER)" "$LOG1" wait_carrier 1 no
check "link down: ip link shows NO-CARRIER" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ip link show dev \$dev | grep -q NO-CARRIER"
check "link down: dmesg says so" "$LOG1" \
	lab_exec 1 --timeout 60 "dmesg | grep -q 'rnic .*: link down'"
check "link down: vm1 -> vm2 ping fails" "$LOG1" \
	lab_exec 1 --timeout 60 "! ping -c 2 -i 0.2 -W 1 $V2"
check "rnicsim: link up on vm1's port" "$LAB_DIR/vm1/rnicsim.log" ctl 1 link up
check "link up: vm1 carrier comes back" "$LOG1" wait_carrier 1 yes
check "link up: dmesg logs the speed" "$LOG1" \
	lab_exec 1 --timeout 60 "dmesg | grep 'rnic .*: link' | tail -1 | grep -q 'link up, 10000 Mb/s'"
check "link up: vm1 -> vm2 ping works again" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2"
check "ethtool -S: port_link_changes counted the flap" "$LOG1" stat_positive 1 port_link_changes

# ------------------------------------------------------------ unload
# Floods both ways, so the unload races TX, RX and NAPI at once.
before="$(stat 1 rx0_packets || echo 0)"
J1="$(lab_bg 1 "ping -f -w 120 $V2")"
J2="$(lab_bg 2 "ping -f -w 120 $V1")"
sleep 5
flood_running() {
	local now
	now="$(stat 1 rx0_packets)" || return 1
	echo "# rx0_packets during the flood: $before -> $now"
	[ "$now" -gt $((before + 100)) ]
}
check "the floods run (vm1 received > 100 frames)" "$LOG1" flood_running
check "rmmod rnic while ping -f runs both ways" "$LOG1" \
	lab_exec 1 --timeout 120 "rmmod rnic"
check "vm1 is alive after the unload; the netdev is gone" "$LOG1" \
	lab_exec 1 --timeout 60 "! lsmod | grep -q '^rnic ' && ! ls /sys/bus/pci/drivers/rnic >/dev/null 2>&1"
lab_kill 1 "$J1"
lab_kill 2 "$J2"
lab_wait 1 "$J1" --timeout 30 >/dev/null 2>&1 || true
lab_wait 2 "$J2" --timeout 30 >/dev/null 2>&1 || true
check "vm1: no kernel warnings after the unload" "$LOG1" no_kernel_splat 1
# Back with the smallest rings, so that bulk TCP below fills the TX ring.
check "vm1: modprobe rnic eth_ring_size=64 brings the netdev back" "$LOG1" \
	lab_exec 1 --timeout 120 'modprobe rnic eth_ring_size=64 && lab_ifup "$LAB_RNIC_SPEC"'
check "ethtool -g: 64 descriptors after the reload" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -g \$dev | tr -d '\t' | tr '\n' ' ' | grep -q 'Current hardware settings: RX:64 .*TX:64'"
check "after reload: vm1 gets carrier" "$LOG1" wait_carrier 1 yes
check "after reload: vm1 -> vm2 IPv4" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -c 3 -i 0.2 -W 5 -w 20 $V2"
check "after reload: vm1 -> vm2 IPv6" "$LOG1" \
	lab_exec 1 --timeout 60 "ping -6 -c 3 -i 0.2 -W 5 -w 20 $V2_6"
# ------------------------------------------------------------ bulk TCP
# 4 MiB of random bytes each way between the rnic VMs; the receiver's
# SHA-256 must match the sender's (linearize, SG, BQL, stop/wake, refill).
TCP_SERVER="python3 - <<'PY'
import hashlib, socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', 5001))
s.listen(1)
s.settimeout(150)
c, _ = s.accept()
c.settimeout(150)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(65536)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest())
PY"
tcp_client() {
	lab_exec "$1" --timeout 200 "python3 - <<'PY'
import hashlib, os, socket, time
data = os.urandom(4 << 20)
for i in range(50):
    try:
        c = socket.create_connection(('$2', 5001), timeout=150)
        break
    except OSError:
        time.sleep(0.2)
c.sendall(data)
c.close()
print(len(data), hashlib.sha256(data).hexdigest())
PY"
}
# tcp_bulk FROM TO ADDR: send, and compare what the server received.
tcp_bulk() {
	local job sent got
	job="$(lab_bg "$2" "$TCP_SERVER")" || return 1
	sent="$(tcp_client "$1" "$3")" || { lab_kill "$2" "$job"; return 1; }
	got="$(lab_wait "$2" "$job" --timeout 200)" || return 1
	echo "# sent: $sent; received: $got"
	[ -n "$sent" ] && [ "$sent" = "$got" ]
}
check "bulk TCP vm1 -> vm2 (4 MiB, 64-descriptor TX ring): data intact" "$LOG1" tcp_bulk 1 2 "$V2"
check "bulk TCP vm2 -> vm1 (4 MiB, 64-descriptor RX ring): data intact" "$LOG2" tcp_bulk 2 1 "$V1"
check "after bulk TCP: no bad completions, no RX allocation failures" "$LOG1" \
	lab_exec 1 --timeout 60 "$DEV; ethtool -S \$dev | grep -E 'drv_(rx|tx)_bad_cqe|drv_rx_alloc_failed|rx0_errors|port_cq_overflows|port_queue_errors' | awk '\$2 != 0 { exit 1 }'"
echo "# vm1 TX ring stop/wake: $(stat 1 tx0_stopped || true) stops, $(stat 1 tx0_woken || true) wakes"

check "vm2: rmmod and modprobe while idle" "$LOG2" \
	lab_exec 2 --timeout 120 'rmmod rnic && modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"'
check "vm2: no kernel warnings" "$LOG2" no_kernel_splat 2

lab_stop
echo "# test_rnic_netdev: $(lab_elapsed "$T0") s"
exit "$fail"
