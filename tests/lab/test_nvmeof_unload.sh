#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are called through check
# lab-kernels: debug
#
# rmmod rnic under NVMe over Fabrics load, rnic <-> rnic (the
# DKMS-installed rnic; scripts/dkms-install.sh first): an nvmet-rdma target
# in vm2, vm1 connected (controller-loss timeout 300 s, reconnect every
# 1 s), fio writing with crc32c verify headers in vm1:
#  - rmmod rnic on the host (vm1): rmmod returns within BOUND s, nvme-rdma
#    deletes the controller, fio ends with an I/O error within BOUND s, and
#    no NVMe command timed out on the way (the device kept working until
#    ib_unregister_device() returned); modprobe again, reconnect, fio
#    16 MiB verified;
#  - vm2's NIC loses its link for 3 s (rnicsim's control socket) while
#    fio writes 32 MiB: nvme-rdma rides it out (the transport's retries,
#    or its error recovery and a reconnect), fio completes, every block
#    read back and verified;
#  - rmmod rnic on the target (vm2) while fio writes 128 MiB: rmmod
#    returns within BOUND s; modprobe again and the nvmet port cycled
#    (nvmet-rdma does not re-enable a port whose device went away); the
#    host reconnects and fio completes, every block read back and
#    verified (the I/O in flight was requeued, not lost);
#  - at the end: disconnect, rnic unloads on both VMs, target removed.
# The sweep at lab_stop catches hung tasks, lockdep, KASAN and leaks.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"

SUITE="nvmeof unload"
BOUND=90
T0="$(lab__now_us)"
lab_start nvmeof_unload || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/nvmeof_unload"
	exit 1
}
# boots 2, devices 2, target 1, connect 1, host rmmod 5, link flap 2,
# target rmmod 4, end 3
lab_plan 20 2
perf_checks_init
perf_preflight

# Two vCPUs each: the driver's posts, completion handlers and teardown
# run on two CPUs at once (MTTCG).
lab_vm 1 --rnic --mem 1G --smp 2
lab_vm 2 --rnic --mem 1G --smp 2
boot_vms 1 2
check_vms "1 2" "rnic0 ACTIVE" rnic_up || exit 1
TADDR="$(lab_addr 2 rnic 4)"
MB=256
check "vm2: nvmet-rdma target on $TADDR:$NVME_PORT, ${MB} MiB namespace" \
	nvmet_up 2 "$TADDR" "$MB" || exit 1

# The host keeps trying for 300 s (default 600 s), once a second: the
# target's outage (rmmod, modprobe, port repair) is shorter.
DEV=""
connect() {
	DEV="$(nvme_host_up 1 "$TADDR" --ctrl-loss-tmo=300 --reconnect-delay=1)" && echo "$DEV"
}
check "vm1: nvme connect -t rdma to $TADDR (ctrl-loss-tmo 300 s, reconnect delay 1 s)" connect || exit 1

# load [MB [LOOPS]]: fio writes with verify in vm1 (by default the whole
# namespace 100 times: far longer than the test waits); returns once its
# frames reach vm2's NIC.
JOB=""
load() {
	local base i
	base="$(lab_sim_ctr 2 rx_roce_v2_frames)"
	JOB="$(lab_bg 1 "fio --name=load --filename=$DEV --rw=write --bs=128k --size=${1:-$MB}M \
		--direct=1 --ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --loops=${2:-100} --output=/tmp/fio-load.out; rc=\$?
		grep -E 'err=|WRITE:|READ:|verify' /tmp/fio-load.out; exit \$rc")"
	for i in $(seq 300); do
		[ "$(lab_sim_ctr 2 rx_roce_v2_frames)" -gt $((${base:-0} + 2000)) ] && return 0
		sleep 0.1
	done
	echo "no NVMe/RDMA traffic reached vm2's NIC in 30 s" >&2
	return 1
}
timed() {
	local n="$1" t rc
	shift
	t="$(lab__now_us)"
	lab_exec "$n" --timeout "$BOUND" "$@"
	rc=$?
	echo "returned $rc after $(lab_elapsed "$t") s"
	return "$rc"
}
gone() { lab_exec "$1" --timeout 30 "! grep -w '^rnic' /proc/modules && ! ls /sys/class/infiniband/rnic0 2>/dev/null"; }
unload() { timed "$1" rmmod rnic && gone "$1"; }
# fio_ended: the load's fio ended with an error within BOUND s and the host
# has no NVMe controller left.
fio_ended() {
	local rc t
	t="$(lab__now_us)"
	lab_wait 1 "$JOB" --timeout "$BOUND"
	rc=$?
	echo "fio returned $rc $(lab_elapsed "$t") s later"
	[ "$rc" != 0 ] && [ "$rc" != 124 ] &&
		lab_exec 1 --timeout 60 "for i in \$(seq 100); do
				[ -z \"\$(ls /sys/class/nvme)\" ] && exit 0
				sleep 0.2
			done
			ls -l /sys/class/nvme; exit 1"
}
# no_timeouts: nvme-rdma's removal shuts the controller down over the
# wire and waits for the I/O in flight, which needs the device to keep
# delivering what it receives until ib_unregister_device() returns; if it
# does not, those commands end only by nvme's 30 s timeout.
no_timeouts() {
	local out
	out="$(lab_exec 1 --timeout 30 "dmesg | grep -E 'nvme nvme0: .*(timeout|Property Set error)' || true")" || return 1
	echo "${out:-no NVMe timeout in dmesg}"
	[ -z "$out" ]
}
# again: fio 16 MiB verified on a fresh connection.
again() { connect && nvme_verify 1 "$DEV" 16 300; }

# ---- rmmod on the host

if check "vm1: fio with verify running on $DEV" load; then
	check "vm1 (host): rmmod rnic under NVMe-oF load returns within $BOUND s, rnic gone" unload 1 || true
	check "vm1: fio ends with an I/O error within $BOUND s, the controller is deleted" fio_ended || true
	check "vm1: no NVMe command timed out while nvme-rdma let go of the device (rnic kept receiving until ib_unregister_device returned)" \
		no_timeouts || true
else
	lab_not_ok "$SUITE: vm1 (host): rmmod rnic under load (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: fio ends (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: no NVMe command timed out (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi
host_again() { rnic_up 1 && again; }
check "vm1: modprobe rnic again, reconnect, fio 16 MiB write+verify" host_again || true

# ---- the target's link flaps

# reconnects: how many times the host's controller reconnected so far.
reconnects() {
	lab_exec 1 --timeout 30 "dmesg | grep -c 'nvme nvme0: Successfully reconnected' || true"
}

# flapped: vm2's link down for 3 s, then up; the load's fio completes.
flapped() {
	local rc t
	lab_sim_ctl 2 link down >/dev/null || return 1
	sleep 3
	lab_sim_ctl 2 link up >/dev/null || return 1
	t="$(lab__now_us)"
	lab_wait 1 "$JOB" --timeout 300
	rc=$?
	echo "fio returned $rc $(lab_elapsed "$t") s after the link came back; 'Successfully reconnected' in vm1's log: $(reconnects)"
	[ "$rc" = 0 ]
}
if check "vm1: fio writing 32 MiB with verify on $DEV" load 32 1; then
	check "vm2's link down for 3 s under NVMe-oF load: fio completes, every block read back verified" \
		flapped || true
else
	lab_not_ok "$SUITE: vm2's link down under load (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi

# ---- rmmod on the target

# port_back: nvmet-rdma does not enable a port again after its device
# went away (only an address change schedules its repair), so after
# modprobe the port is cycled as an administrator would: the subsystem
# link removed and made again.  The namespace and its data stay.
port_back() {
	rnic_up 2 && lab_exec 2 --timeout 60 "set -e
		c=/sys/kernel/config/nvmet
		n=\$(dmesg | grep -c 'nvmet_rdma: enabling port 1')
		rm \$c/ports/1/subsystems/$NVME_NQN
		ln -s \$c/subsystems/$NVME_NQN \$c/ports/1/subsystems/$NVME_NQN
		dmesg | grep 'nvmet_rdma: enabling port 1' | tail -1
		[ \$(dmesg | grep -c 'nvmet_rdma: enabling port 1') -gt \$n ]"
}
# recovered: the load's fio completed, everything verified, and the host
# reconnected (nvme-rdma's error recovery) since the target's rmmod.
recovered() {
	local rc t r
	t="$(lab__now_us)"
	lab_wait 1 "$JOB" --timeout 300
	rc=$?
	echo "fio returned $rc $(lab_elapsed "$t") s later"
	r="$(reconnects)" || return 1
	echo "'Successfully reconnected' in vm1's log: ${R0:-?} before the target's rmmod, $r now"
	[ "$rc" = 0 ] && [ -n "$R0" ] && [ "$r" -gt "$R0" ]
}
R0="$(reconnects)" || R0=""
if check "vm1: fio writing 128 MiB with verify on $DEV" load 128 1; then
	check "vm2 (target): rmmod rnic under NVMe-oF load returns within $BOUND s, rnic gone" unload 2 || true
	check "vm2: modprobe rnic again, nvmet port 1 enabled again (subsystem link cycled)" port_back || true
	check "vm1: the host reconnects, fio completes and every block reads back verified" recovered || true
else
	lab_not_ok "$SUITE: vm2 (target): rmmod rnic under load (no load)" "$OUT"
	lab_not_ok "$SUITE: vm2: modprobe rnic again (no load)" "$OUT"
	lab_not_ok "$SUITE: vm1: fio completes (no load)" "$OUT"
	lab_kill 1 "$JOB"
fi

check "vm1: nvme disconnect" nvme_host_down 1 || true
unload_both() {
	local n
	for n in 1 2; do
		lab_exec "$n" --timeout 60 "echo stop > $PERF_DBG/control; rmmod rnic_perf && rmmod rnic &&
			! grep -w '^rnic' /proc/modules" || return 1
	done
}
check "rmmod rnic_perf rnic on both VMs" unload_both || true
# After rnic: rdma_cm has destroyed the listener at DEVICE_REMOVAL, so
# removing the port does not destroy it under nvmet_config_sem (which
# lockdep reports against nvmet-rdma's own connect path; see
# LAB_KNOWN_REPORTS in scripts/lab/lab.sh).
check "vm2: target removed" nvmet_down 2 || true

lab_stop
echo "# test_nvmeof_unload: $(lab_elapsed "$T0") s"
exit "$fail"
