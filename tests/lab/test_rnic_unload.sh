#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# Unload, device removal and a link flap under RDMA load, rnic <-> rnic
# (the DKMS-installed rnic and rnic_perf; RNIC_PERF_KO=path for a fresh
# rnic_perf.ko).  While vm1 runs a long verified rnic_perf RDMA WRITE to
# vm2:
#  - rmmod rnic on the client's VM, then on the server's VM: rmmod returns
#    within BOUND seconds, the run ends with an error (not a hang) within
#    BOUND, the module is gone; modprobe again and a verified run passes;
#  - the client's PCI function removed (sysfs remove): the same, then a
#    PCI rescan binds the device again, rnic0 comes back ACTIVE and a
#    verified run passes;
#  - vm2's link down (rnicsim's control socket) for 1.5 s, longer than the
#    ACK timeout, during a run: the run recovers (retransmissions) and
#    completes with every byte verified; the port went down and came back
#    ACTIVE;
#  - at the end rnic_perf and rnic unload on both VMs.
# The sweep at lab_stop catches hung tasks, lockdep, KASAN and leaks.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="rnic unload"
BOUND=60
T0="$(lab__now_us)"
lab_start rnic_unload || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_unload"
	exit 1
}
# boots 2, devices 2, server 1, client rmmod 4, server rmmod 4, PCI
# remove 4, link flap 2, unload 2
lab_plan 21 2
perf_checks_init
perf_preflight

# Two vCPUs each: the driver's posts, completion handlers and teardown
# run on two CPUs at once (MTTCG).
lab_vm 1 --rnic --smp 2
lab_vm 2 --rnic --smp 2
boot_vms 1 2
check_vms "1 2" "rnic0 ACTIVE, rnic_perf loaded" rnic_up || exit 1
SRV="$(lab_addr 2 rnic 4)"
check "vm2: rnic_perf server on $SRV" perf_server 2 "$SRV" || exit 1

ok_run() {
	local line
	line="$(perf_run 1 "$SRV" --timeout 150 "$@")" || {
		echo "$line"
		return 1
	}
	echo "$line"
	perf_check 2 "$line"
}

# load [COUNT]: start a verified RDMA WRITE run in vm1 and wait until its
# frames reach vm2's NIC; JOB is its job id.
JOB=""
load() {
	local base i
	# The platform's wire counter: the same on either ABI.
	base="$(lab_sim_ctr 2 plat_rx_frames)"
	[ -n "$base" ] || {
		echo "vm2's rnicsim reports no plat_rx_frames" >&2
		return 1
	}
	JOB="$(lab_bg 1 "echo 'client addr=$SRV port=$PERF_PORT op=write size=65536 depth=16 count=${1:-1000000}' > $PERF_DBG/control; rc=\$?
		$(perf_last_line client); exit \$rc")"
	for i in $(seq 300); do
		[ "$(lab_sim_ctr 2 plat_rx_frames)" -gt $((base + 1000)) ] && return 0
		sleep 0.1
	done
	echo "no RDMA traffic reached vm2's NIC in 30 s" >&2
	return 1
}
# timed N WHAT CMD: run CMD in VM N; fine if it succeeds within BOUND s.
timed() {
	local n="$1" t rc
	shift
	t="$(lab__now_us)"
	lab_exec "$n" --timeout "$BOUND" "$@"
	rc=$?
	echo "returned $rc after $(lab_elapsed "$t") s"
	return "$rc"
}
# run_ended: the load's run ended with an error (status=fail) within BOUND s.
run_ended() {
	local line rc t
	t="$(lab__now_us)"
	line="$(lab_wait 1 "$JOB" --timeout "$BOUND")"
	rc=$?
	echo "$line"
	echo "the run returned $rc $(lab_elapsed "$t") s later"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$(perf_field "$line" status)" = fail ]
}
gone() { lab_exec "$1" --timeout 30 "! grep -w '^rnic' /proc/modules && ! ls /sys/class/infiniband/rnic0 2>/dev/null"; }
unload() { timed "$1" rmmod rnic && gone "$1"; }

# ---- rmmod on the client's VM

if check "vm1: an RDMA WRITE run from vm1 is under way" load; then
	check "vm1 (client): rmmod rnic under load returns within $BOUND s, rnic gone" \
		unload 1 || true
	check "vm1: the run ends with an error within $BOUND s, not a hang" run_ended || true
else
	lab_not_ok "$SUITE: vm1 (client): rmmod rnic under load (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: the run ends (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi
client_again() { rnic_up 1 && ok_run op=send size=4096 count=100; }
check "vm1: modprobe rnic again, then SEND 4 KiB, 100 verified" client_again || true

# ---- rmmod on the server's VM

if check "vm2: an RDMA WRITE run from vm1 is under way" load; then
	check "vm2 (server): rmmod rnic under load returns within $BOUND s, rnic gone" \
		unload 2 || true
	check "vm1: the run ends with an error within $BOUND s, not a hang" run_ended || true
else
	lab_not_ok "$SUITE: vm2 (server): rmmod rnic under load (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: the run ends (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi
server_again() {
	rnic_up 2 &&
		lab_exec 2 --timeout 30 "echo stop > $PERF_DBG/control" &&
		perf_server 2 "$SRV" &&
		ok_run op=send size=4096 count=100
}
check "vm2: modprobe rnic again, server again, then SEND 4 KiB, 100 verified" server_again || true

# ---- PCI function removal on the client's VM

pci_remove() {
	# shellcheck disable=SC2016 # expanded in the guest
	timed 1 'd=$(basename "$(readlink -f /sys/bus/pci/drivers/rnic/0000:*)")
		echo "removing $d"
		echo 1 > /sys/bus/pci/devices/$d/remove' &&
		lab_exec 1 --timeout 30 '! ls /sys/class/infiniband/rnic0 2>/dev/null'
}
if check "vm1: an RDMA WRITE run from vm1 is under way" load; then
	check "vm1: PCI remove of the rnic function under load returns within $BOUND s, rnic0 gone" \
		pci_remove || true
	check "vm1: the run ends with an error within $BOUND s, not a hang" run_ended || true
else
	lab_not_ok "$SUITE: vm1: PCI remove under load (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: the run ends (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi
rescan() {
	lab_exec 1 --timeout 120 "set -e
		echo 1 > /sys/bus/pci/rescan
		for i in \$(seq 100); do [ -e /sys/class/infiniband/rnic0/ports/1 ] && break; sleep 0.1; done
		ls /sys/bus/pci/drivers/rnic/
		lab_ifup \"\$LAB_RNIC_SPEC\" >/dev/null
		lab_ib_active rnic0" &&
		ok_run op=send size=4096 count=100
}
check "vm1: PCI rescan binds rnic again, rnic0 ACTIVE, SEND 4 KiB, 100 verified" rescan || true

# ---- link flap

LINK_RE="rnic .*: link (down|up)"
downs() { grep -c 'link down' "$1" || true; }
# Several seconds of traffic on the stock kernel, where a run is fastest.
FLAP_MSGS=6000
# Down for 1.5 s: longer than the QPs' ACK timeout (rdma_cm's default for
# RoCE, 4.096 us * 2^17 = 0.54 s), so whichever side has packets in flight
# (vm1's WRITEs, or vm2's reply to a verification round) times out and
# retransmits, and shorter than their 7 retries.
FLAP_DOWN=1.5
# retrans N WHEN: VM N's NIC's retransmits in flap-stats-vmN-WHEN.
retrans() { stat_of "$LAB_DIR/flap-stats-vm$1-$2" retransmits; }
flap() {
	local line rc k n d0 r0 dropped before after
	lab_exec 2 --timeout 30 "dmesg | grep -E '$LINK_RE'" >"$LAB_DIR/flap-before" || true
	for n in 1 2; do
		hw_stats "$n" rnic0/1 >"$LAB_DIR/flap-stats-vm$n-before" 2>&1 || true
	done
	# Read before the run: under load the NIC answers its control socket
	# slowly.
	r0="$(lab_sim_ctr 2 plat_rx_link_down)"
	d0="$(lab_sim_ctr 2 plat_tx_link_down)"
	[ -n "$r0" ] && [ -n "$d0" ] || return 1
	load "$FLAP_MSGS" || return 1
	lab_sim_ctl 2 link down
	sleep "$FLAP_DOWN"
	lab_sim_ctl 2 link up
	dropped="$(( $(lab_sim_ctr 2 plat_rx_link_down) - r0 ))"
	echo "vm2's link down for $FLAP_DOWN s: its NIC dropped $dropped frames from the wire, $(( $(lab_sim_ctr 2 plat_tx_link_down) - d0 )) of its own not sent by the platform"
	line="$(lab_wait 1 "$JOB" --timeout 300)"
	rc=$?
	echo "$line"
	for n in 1 2; do
		hw_stats "$n" rnic0/1 >"$LAB_DIR/flap-stats-vm$n-after" 2>&1 || true
		for k in retransmits local_ack_timeouts nak_seq_rcvd acks_rcvd; do
			grep -q "^$k " "$LAB_DIR/flap-stats-vm$n-after" &&
				echo "vm$n $k: $(stat_of "$LAB_DIR/flap-stats-vm$n-before" "$k") -> $(stat_of "$LAB_DIR/flap-stats-vm$n-after" "$k")"
		done
	done
	# what was lost while the link was down was sent again, by either side
	before=$(( $(retrans 1 before) + $(retrans 2 before) ))
	after=$(( $(retrans 1 after) + $(retrans 2 after) ))
	echo "retransmits, both NICs: $before -> $after"
	[ "$rc" = 0 ] && perf_check 2 "$line" && [ "$after" -gt "$before" ]
}
check "vm2's link down for $FLAP_DOWN s during an RDMA WRITE run (64 KiB x $FLAP_MSGS): the run recovers (retransmits), every byte verified" flap || true
port_back() {
	local f="$LAB_DIR/flap-after"
	lab_exec 2 --timeout 60 "dmesg | grep -E '$LINK_RE'" >"$f" || return 1
	cat "$f"
	echo "link down lines: $(downs "$LAB_DIR/flap-before") -> $(downs "$f")"
	[ "$(downs "$f")" -gt "$(downs "$LAB_DIR/flap-before")" ] &&
		tail -1 "$f" | grep -q 'link up' &&
		lab_exec 2 --timeout 60 "rdma link show rnic0/1 | grep 'state ACTIVE'"
}
check "vm2: the port went down and came back ACTIVE (dmesg link down, link up)" port_back || true

for n in 1 2; do
	check "vm$n: rnic_perf stopped, rmmod rnic_perf rnic" \
		lab_exec "$n" --timeout 60 "echo stop > $PERF_DBG/control && rmmod rnic_perf && rmmod rnic &&
			! grep -w '^rnic' /proc/modules" || true
done

lab_stop
echo "# test_rnic_unload: $(lab_elapsed "$T0") s"
exit "$fail"
