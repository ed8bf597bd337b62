#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lab plumbing, first step: two VMs with virtio-net NICs on the lab bridge
# ping each other over IPv4 and IPv6.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"

T0="$(lab__now_us)"
lab_start virtio_ping || {
	lab_not_ok "virtio ping: lab start" "$RNIC_LAB_DIR/virtio_ping"
	exit 1
}
LOG1="$LAB_DIR/vm1/commands.log"
LOG2="$LAB_DIR/vm2/commands.log"

# Both boot at once: two host cores, one TCG vCPU each.
lab_vm 1 --virtio
lab_vm 2 --virtio
fail=0
for n in 1 2; do
	if lab_wait_ready "$n"; then
		lab_ok "virtio ping: vm$n boots to the agent"
	else
		lab_not_ok "virtio ping: vm$n boots to the agent" "$LAB_DIR/vm$n/console.log"
		exit 1
	fi
done

# check WHAT LOG CMD...: one TAP line per check.
check() {
	local what="$1" log="$2"
	shift 2
	if "$@" >/dev/null; then
		lab_ok "virtio ping: $what"
	else
		lab_not_ok "virtio ping: $what" "$log"
		fail=1
	fi
}
check "vm1 -> vm2 IPv4" "$LOG1" lab_exec 1 --timeout 30 ping -c 3 -i 0.2 -W 5 "$(lab_addr 2 virtio 4)"
check "vm2 -> vm1 IPv4" "$LOG2" lab_exec 2 --timeout 30 ping -c 3 -i 0.2 -W 5 "$(lab_addr 1 virtio 4)"
check "vm1 -> vm2 IPv6" "$LOG1" lab_exec 1 --timeout 30 ping -6 -c 3 -i 0.2 -W 5 "$(lab_addr 2 virtio 6)"
check "vm2 -> vm1 IPv6" "$LOG2" lab_exec 2 --timeout 30 ping -6 -c 3 -i 0.2 -W 5 "$(lab_addr 1 virtio 6)"

lab_stop
echo "# test_virtio_ping: $(lab_elapsed "$T0") s"
exit "$fail"
