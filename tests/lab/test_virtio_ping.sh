#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
#
# Lab plumbing, first step: two VMs with virtio-net NICs on the lab bridge
# ping each other over IPv4 and IPv6.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_check.sh
. "$(dirname "$0")/lib_check.sh"

SUITE="virtio ping"
T0="$(lab__now_us)"
lab_start virtio_ping || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/virtio_ping"
	exit 1
}
lab_plan 6 2
check_init

# Both boot at once: two host cores, one TCG vCPU each.
lab_vm 1 --virtio
lab_vm 2 --virtio
boot_vms 1 2

check "vm1 -> vm2 IPv4" lab_exec 1 --timeout 30 ping -c 3 -i 0.2 -W 5 "$(lab_addr 2 virtio 4)" || true
check "vm2 -> vm1 IPv4" lab_exec 2 --timeout 30 ping -c 3 -i 0.2 -W 5 "$(lab_addr 1 virtio 4)" || true
check "vm1 -> vm2 IPv6" lab_exec 1 --timeout 30 ping -6 -c 3 -i 0.2 -W 5 "$(lab_addr 2 virtio 6)" || true
check "vm2 -> vm1 IPv6" lab_exec 2 --timeout 30 ping -6 -c 3 -i 0.2 -W 5 "$(lab_addr 1 virtio 6)" || true

lab_stop
echo "# test_virtio_ping: $(lab_elapsed "$T0") s"
exit "$fail"
