#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Malformed and hostile RoCE frames (issue 5, "Bad input"): frames with a
# correct ICRC but an unknown QPN, an unimplemented opcode, the wrong QP
# type, a bad Q_Key, a bad transport version, a truncated header or an
# oversized payload, and a frame with a bad ICRC, are injected on the lab
# bridge at an rnic VM (tests/lab/hostile_frames.py). Each must be dropped
# and counted under its own reason in `rdma statistic`, and the node must
# stay healthy: no kernel BUG/WARNING/Oops, GSI still up, clean rmmod.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

SUITE="rnic hostile frames"
T0="$(lab__now_us)"
N=5
lab_start rnic_hostile || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/rnic_hostile"
	exit 1
}
LOG="$LAB_DIR/vm1/commands.log"
fail=0

lab_vm 1 --rnic
if ! lab_wait_ready 1; then
	lab_not_ok "$SUITE: vm1 boots to the agent" "$LAB_DIR/vm1/console.log"
	exit 1
fi
if ! lab_exec 1 --timeout 120 'modprobe rnic && lab_ifup "$LAB_RNIC_SPEC" >/dev/null' >/dev/null; then
	lab_not_ok "$SUITE: modprobe rnic and bring the NIC up" "$LOG"
	exit 1
fi
lab_ok "$SUITE: modprobe rnic and bring the NIC up"

# counters as "name value" lines
snap() {
	lab_exec 1 --timeout 30 \
		"rdma statistic show link rnic0/1 | tr ' ' '\n' | paste - - | awk 'NF == 2'"
}

# CASE COUNTER: inject N frames of CASE, expect COUNTER to grow by N.
expect_drop() {
	local c="$1" counter="$2" before after delta
	before="$(snap | awk -v k="$counter" '$1 == k {print $2}')"
	ip netns exec "$LAB_NS" python3 "$LAB_REPO/tests/lab/hostile_frames.py" br0 \
		"$(lab__mac 1 rnic)" "$(lab_addr 1 rnic 4)" "$N" "$c" >>"$LAB_DIR/inject.log" 2>&1
	sleep 1
	after="$(snap | awk -v k="$counter" '$1 == k {print $2}')"
	delta=$(( ${after:-0} - ${before:-0} ))
	if [ -n "$after" ] && [ "$delta" -ge "$N" ]; then
		lab_ok "$SUITE: $c dropped and counted as $counter (+$delta)"
	else
		echo "$c: $counter before '${before}' after '${after}'" >>"$LAB_DIR/inject.log"
		lab_not_ok "$SUITE: $c dropped and counted as $counter (+$delta, expected +$N)" \
			"$LAB_DIR/inject.log"
		fail=1
	fi
}

expect_drop unknown_qpn rx_drop_unknown_qpn
expect_drop bad_opcode rx_drop_bad_opcode
expect_drop rc_to_gsi rx_drop_qp_type
expect_drop ack_to_gsi rx_drop_qp_type
expect_drop bad_qkey rx_drop_bad_qkey
expect_drop bad_tver rx_drop_bad_tver
expect_drop truncated_hdr hw_rx_drop_malformed
expect_drop oversize_ud rx_drop_too_long
expect_drop bad_icrc hw_rx_icrc_errors

check() {
	local what="$1"
	shift
	if "$@" >>"$LAB_DIR/checks.log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$LAB_DIR/checks.log"
		fail=1
	fi
}
check "no kernel BUG, WARNING or Oops" \
	lab_exec 1 --timeout 30 '! dmesg | grep -E "BUG|WARNING|Oops|general protection"'
check "the GSI QP and the port are still up" \
	lab_exec 1 --timeout 30 'rdma res show qp | grep -q "lqpn 1 .*state RTS" && rdma link show rnic0/1 | grep -q ACTIVE'
check "rmmod rnic is clean afterwards" \
	lab_exec 1 --timeout 60 'rmmod rnic && ! dmesg | grep -E "BUG|WARNING|leak"'

lab_stop
echo "# test_rnic_hostile: $(lab_elapsed "$T0") s"
exit "$fail"
