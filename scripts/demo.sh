#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rnic demo, from a fresh Debian 12 machine (as root):
#
#   bash scripts/demo.sh
#
# Installs the dependencies, builds the rnicsim NIC model, installs the rnic
# module with DKMS for the Debian 6.12 kernel, then boots three VMs under
# QEMU in a private network namespace: two with an rnic NIC (each served by
# its own rnicsim), one with virtio-net. In the VMs it loads rnic with
# modprobe and shows the PCI device, the netdev, the ib_device and its RoCE
# GIDs, traffic between the NICs, the counters, kernel verbs (rnic_perf),
# userspace verbs through the librnic provider (Debian's ibv_rc_pingpong
# and ib_write_bw), and rdma_cm's per-port RoCE mode switch in configfs.
# Everything it creates is removed at the end.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "dependencies (apt, idempotent)"
bash scripts/install-deps.sh

say "build the NIC model (tools/rnicsim)"
make -s -C tools/rnicsim

say "install the rnic module with DKMS for $(cat /var/cache/rnic/kver)"
bash scripts/dkms-install.sh

# shellcheck source=scripts/lab/lab.sh
. scripts/lab/lab.sh
lab_start demo

say "boot three VMs (QEMU TCG): vm1 and vm2 with an rnic NIC, vm3 with virtio-net"
lab_vm 1 --rnic
lab_vm 2 --rnic
lab_vm 3 --virtio
for n in 1 2 3; do
	lab_wait_ready "$n"
done

# run N CMD: show the command and its output, as typed in the VM.
run() {
	local n="$1"
	shift
	printf '\033[36mvm%s# %s\033[0m\n' "$n" "$*"
	lab_exec "$n" --timeout 120 "$@"
}

# figures N REGEX CMD: run, and stop the demo (exit 1) unless the output
# has a line matching REGEX: a step that shows a figure must show it.
figures() {
	local n="$1" re="$2" out
	shift 2
	out="$(run "$n" "$@")" || {
		printf '%s\n' "$out"
		echo "demo: vm$n: the command failed" >&2
		exit 1
	}
	printf '%s\n' "$out"
	if ! grep -qE "$re" <<<"$out"; then
		echo "demo: vm$n: no figure matching '$re' in that output" >&2
		exit 1
	fi
}

say "vm1: the NIC on the PCI bus (an ivshmem-doorbell function served by rnicsim)"
run 1 "lspci -nn -d 1af4:1110 -vv | grep -E 'Shared memory|Region|MSI-X'"

for n in 1 2; do
	say "vm$n: modprobe rnic (the DKMS-installed module)"
	run "$n" "modprobe rnic && dmesg | grep -E 'rnic|infiniband' | tail -5"
	run "$n" 'lab_ifup "$LAB_RNIC_SPEC" >/dev/null && ip -br addr show | grep -v "^lo"'
done

say "vm1: the RDMA device and its RoCE GIDs (ib_core filled them from the netdev's addresses)"
run 1 "rdma link show"
run 1 'cd /sys/class/infiniband/rnic0/ports/1 && for i in 0 1 2 3 4 5 6 7; do g=$(cat gids/$i 2>/dev/null) || continue; [ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue; echo "gid $i $g $(cat gid_attrs/types/$i 2>/dev/null)"; done'
run 1 "ethtool -i \$(ls /sys/class/infiniband/rnic0/device/net)"

say "traffic between the two rnic NICs, and to the virtio-net VM"
run 1 "ping -c 3 -i 0.2 $(lab_addr 2 rnic 4)"
run 1 "ping -6 -c 3 -i 0.2 $(lab_addr 2 rnic 6)"
run 3 "ip addr add 10.20.0.103/24 dev \$LAB_VIRTIO_IF"
run 1 "ping -c 3 -i 0.2 10.20.0.103"
figures 1 'frames: [1-9]' "ethtool -S \$(ls /sys/class/infiniband/rnic0/device/net) | grep -E 'frames|bytes' | grep -v ': 0$'"

say "RDMA: rnic_perf (in-kernel verbs exerciser over rdma_cm) between the two rnic VMs, every byte verified"
P=/sys/kernel/debug/rnic_perf
run 2 "modprobe rnic_perf && echo 'server addr=$(lab_addr 2 rnic 4) port=18515' > $P/control"
run 1 "modprobe rnic_perf"
for op in "op=write size=65536 depth=8 count=100 sge=2" \
	  "op=read size=65536 depth=8 count=100" \
	  "op=send size=4096 depth=8 count=200" \
	  "op=fetch_add size=8 depth=4 count=200"; do
	figures 1 'status=ok .*errors=0 .*MBps=[0-9]' "echo 'client addr=$(lab_addr 2 rnic 4) port=18515 $op verify=1' > $P/control && tail -1 $P/results | tr ' ' '\n' | grep -E '^(op|size|status|errors|MBps|msg_rate|lat_p50_us)=' | paste -sd' '"
done
# The NIC's counters (hw_*, RNIC_PORT_STATS and the transport's): RoCE v2
# frames and bytes both ways, RC packets, and any retransmit, NAK or drop.
figures 1 'hw_tx_roce_v2_frames[[:space:]]+[1-9].*hw_rx_roce_v2_frames[[:space:]]+[1-9]' "rdma statistic show link rnic0/1 | tr ' ' '\n' | paste - - | grep -E '^hw_(tx|rx)_roce_v2_(frames|bytes)|rc_(req|resp)_packets|retrans|nak|drop' | awk '\$2 != 0' | paste -sd' '"

say "userspace verbs, kernel bypass: Debian's own ibv_devinfo, ibv_rc_pingpong and ib_write_bw through librnic"
# shellcheck source=tests/lab/lib_uverbs.sh
. tests/lab/lib_uverbs.sh
run 1 "modprobe ib_uverbs && ibv_devinfo -d rnic0 | grep -E 'hca_id|fw_ver|node_guid|state|active_mtu|link_layer'"
run 2 "modprobe ib_uverbs"
# each side's RoCE v2 GID of its IPv4 address
G1="$(uv_gid_index 1 rnic0 "$(lab_addr 1 rnic 4)" "RoCE v2")"
G2="$(uv_gid_index 2 rnic0 "$(lab_addr 2 rnic 4)" "RoCE v2")"
# userv NAME SERVER_CMD CLIENT_CMD REGEX: the server in vm2, the client in
# vm1 (shown, and stopping the demo unless its output matches REGEX).
userv() {
	local job
	job="$(lab_bg 2 "$2")"
	uv_listening 2 tcp:18515
	figures 1 "$4" "$3"
	lab_wait 2 "$job" --timeout 60 >/dev/null
}
userv pingpong "ibv_rc_pingpong -d rnic0 -g $G2 -c -n 200 -s 4096" \
	"ibv_rc_pingpong -d rnic0 -g $G1 -c -n 200 -s 4096 $(lab_addr 2 rnic 4)" '^200 iters in'
userv write_bw "ib_write_bw -d rnic0 -x $G2 -s 65536 -n 2000 -F" \
	"ib_write_bw -d rnic0 -x $G1 -s 65536 -n 2000 -F $(lab_addr 2 rnic 4) | grep -A1 '#bytes'" '^ *65536 +2000 +[0-9.]+ +[0-9.]+'

say "rdma_cm: switch the port's default RoCE mode in configfs"
run 1 "modprobe rdma_cm && (mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config) && mkdir -p /sys/kernel/config/rdma_cm/rnic0"
run 1 "cat /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_mode"
run 1 "echo 'IB/RoCE v1' > /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_mode && cat /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_mode"
run 1 "echo 'RoCE v2' > /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_mode && cat /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_mode"
run 1 "echo 106 > /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_tos && cat /sys/kernel/config/rdma_cm/rnic0/ports/1/default_roce_tos"
run 1 "rmdir /sys/kernel/config/rdma_cm/rnic0"

say "unload: the RDMA device and the netdev go away cleanly"
run 1 "rmmod rnic_perf rnic && rdma link show | grep -c rnic0 || echo 'rnic0 gone'"

lab_stop
say "done"
