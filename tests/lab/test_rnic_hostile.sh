#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# Malformed and hostile RoCE frames (issue 5, "Bad input"): frames with a
# correct ICRC but an unknown QPN, an unimplemented opcode, the wrong QP
# type, a bad Q_Key, a bad transport version, a truncated header or an
# oversized payload, and a frame with a bad ICRC (RoCE v2; and a RoCE v1
# frame to an unknown QPN and one with a bad ICRC), are injected on the lab
# bridge at an rnic VM (tests/lab/hostile_frames.py). Each must be dropped
# and counted exactly once under its own reason in `rdma statistic`, and
# the node must stay healthy: GSI still up, clean rmmod (and lab_stop's
# sweep finds no kernel BUG/WARNING/Oops).
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="rnic hostile frames"
T0="$(lab__now_us)"
N=5
lab_start rnic_hostile || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_hostile"
	exit 1
}
# the boot, the NIC up, 11 cases, 2 health checks.
lab_plan 15 1
check_init
preflight rnic rnicsim

lab_vm 1 --rnic
boot_vms 1
# shellcheck disable=SC2016 # expanded in the guest
need "modprobe rnic and bring the NIC up" \
	lab_exec 1 --timeout 120 'modprobe rnic && lab_ifup "$LAB_RNIC_SPEC"'

# counters as "name value" lines
snap() {
	lab_exec 1 --timeout 30 \
		"rdma statistic show link rnic0/1 | tr ' ' '\n' | paste - - | awk 'NF == 2'"
}

# dropped CASE COUNTER: inject N frames of CASE; COUNTER must grow by
# exactly N (one count per frame, and nothing else counted there).
dropped() {
	local c="$1" counter="$2" before after
	before="$(snap | awk -v k="$counter" '$1 == k {print $2}')"
	[ -n "$before" ] || {
		echo "no counter $counter in rdma statistic"
		return 1
	}
	ip netns exec "$LAB_NS" python3 "$LAB_REPO/tests/lab/hostile_frames.py" br0 \
		"$(lab__mac 1 rnic)" "$(lab_addr 1 rnic 4)" "$N" "$c" || return 1
	sleep 1
	after="$(snap | awk -v k="$counter" '$1 == k {print $2}')"
	echo "$c: $counter $before -> $after (want +$N)"
	[ -n "$after" ] && [ $((after - before)) = "$N" ]
}
# expect_drop CASE COUNTER: the NIC's counter for the drop (the injected
# frames are RoCE v2 unless their case says v1: the _v1/_v2 counters).
expect_drop() {
	check "$1 dropped and counted as $2 (+$N)" dropped "$1" "$2" || true
}

expect_drop unknown_qpn rx_drop_unknown_qpn
expect_drop bad_opcode rx_drop_bad_bth
expect_drop rc_to_gsi rx_drop_qp_type
expect_drop ack_to_gsi rx_drop_qp_type
expect_drop bad_qkey rx_drop_bad_qkey
expect_drop bad_tver rx_drop_bad_bth
expect_drop truncated_hdr rx_drop_malformed_v2
expect_drop oversize_ud rx_drop_too_long
expect_drop bad_icrc rx_icrc_errors_v2
expect_drop v1_unknown_qpn rx_drop_unknown_qpn
expect_drop v1_bad_icrc rx_icrc_errors_v1

check "the GSI QP and the port are still up" \
	lab_exec 1 --timeout 30 'rdma res show qp | grep "lqpn 1 .*state RTS" >/dev/null && rdma link show rnic0/1 | grep ACTIVE >/dev/null' ||
	true
check "rmmod rnic afterwards" lab_exec 1 --timeout 60 'rmmod rnic' || true

lab_stop
echo "# test_rnic_hostile: $(lab_elapsed "$T0") s"
exit "$fail"
