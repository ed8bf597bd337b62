#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: debug
# shellcheck disable=SC2317 # functions are called through check
#
# Interop with the kernel's rdma_rxe over RoCE v2 (the DKMS-installed rnic
# and rnic_perf; scripts/dkms-install.sh first).  vm1 has an rnic NIC
# (10.20.0.1), vm2 a virtio-net NIC with rdma_rxe, given 10.20.0.2 on the
# same bridge. Two vCPUs each (the ULPs' and processes' completion
# handlers and posts on two CPUs at once).
#  - rnic_perf rnic -> rxe and rxe -> rnic: SEND, WRITE, READ, FETCH_ADD
#    verified (rxe is the independent implementation and the ICRC oracle);
#  - NVMe-oF: target on rnic, host on rxe; then target on rxe, host on rnic;
#    fio writes INTEROP_MB MiB and reads it back verified;
#  - userspace verbs (librnic on rnic, rxe's provider on rxe), Debian's own
#    binaries, each direction and each perftest tool at least once:
#    ibv_rc_pingpong -c with the server on rnic, ibv_ud_pingpong -c and
#    ibv_srq_pingpong -c with the server on rxe, rping -V both ways over
#    IPv4 and over IPv6 (vm2's virtio-net also has fd00:20::2), and
#    perftest's six tools, with and without rdma_cm (-R).  The sizes and
#    counts are small: rxe in a debug guest moves 0.8-2.3 MB/s, and what
#    is proven is that the two implementations agree on the wire, not a
#    figure.
# INTEROP_MB is 16 in the suite: rdma_rxe moves 0.8-2.3 MB/s in a debug
# guest (32 MiB took 66-72 s of fio each way), and 16 MiB is 128 commands
# of 128 KiB per pass, so each of fio's write and verify passes still
# goes once round nvme-rdma's 128-entry I/O queue and the QPs' rings, as
# the larger sizes do.  On the stock kernel the full 256 MiB run
# (INTEROP_MB=256) passed 3 of 3 in 183-217 s.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$(dirname "$0")/lib_nvmeof.sh"
# shellcheck source=tests/lab/lib_uverbs.sh
. "$(dirname "$0")/lib_uverbs.sh"

SUITE="interop rnic rxe"
MB="${INTEROP_MB:-16}"
T0="$(lab__now_us)"
lab_start interop || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/interop"
	exit 1
}
# 2 boots, 3 set-up steps, 8 rnic_perf runs, 5 per NVMe-oF direction,
# 15 userspace.
lab_plan 38 2
perf_checks_init
perf_preflight

lab_vm 1 --rnic --smp 2 --mem 1G
lab_vm 2 --virtio --smp 2 --mem 1G
boot_vms 1 2
A1="$(lab_addr 1 rnic 4)"
A2="$(lab_addr 2 rnic 4)"
A2_6="$(lab_addr 2 rnic 6)"
up1() { rnic_up 1 && roce_mode 1 rnic0 "RoCE v2"; }
need "vm1: rnic0 ACTIVE, RoCE v2 default, rnic_perf loaded" up1
need "vm2: rxe0 on virtio-net with $A2 and $A2_6, rnic_perf loaded" rxe_up 2 "$A2/24" "$A2_6/64"
servers() { perf_server 1 "$A1" && perf_server 2 "$A2"; }
check "rnic_perf servers on $A1 (rnic) and $A2 (rxe)" servers || true

# run WHAT CLIENT_VM SERVER_VM ARGS...
run() { perf_case "$1" "$2" "$3" "$(lab_addr "$3" rnic 4)" --timeout 150 "${@:4}"; }
for dir in "1 2" "2 1"; do
	# shellcheck disable=SC2086 # two VM numbers
	set -- $dir
	if [ "$1" = 1 ]; then name="rnic -> rxe"; else name="rxe -> rnic"; fi
	run "$name: SEND 4 KiB, 2 SGEs, 100 verified" "$1" "$2" op=send size=4096 sge=2 count=100
	run "$name: RDMA WRITE 64 KiB, depth 8, 32 verified" "$1" "$2" op=write size=65536 depth=8 count=32
	run "$name: RDMA READ 64 KiB, depth 8, 32 verified" "$1" "$2" op=read size=65536 depth=8 count=32
	run "$name: FETCH_ADD, 200 verified" "$1" "$2" op=fetch_add count=200
done

# nvmeof TARGET_VM HOST_VM NAME: five checks, each run even if an earlier
# one failed (it then fails too: no target, no connection, no device).
nvmeof() {
	local tgt="$1" host="$2" name="$3" taddr t
	taddr="$(lab_addr "$tgt" rnic 4)"
	check "$name: nvmet-rdma target in vm$tgt on $taddr, ${MB} MiB" nvmet_up "$tgt" "$taddr" "$MB" || true
	DEV=""
	connect() { DEV="$(nvme_host_up "$host" "$taddr")" && echo "$DEV"; }
	check "$name: nvme connect -t rdma from vm$host" connect || true
	t="$(lab__now_us)"
	check "$name: fio writes ${MB} MiB and reads it back verified" \
		nvme_verify "$host" "${DEV:-/dev/no-nvme-device}" "$MB" 900 || true
	echo "# $name fio ${MB} MiB: $(lab_elapsed "$t") s"
	grep -E 'WRITE:|READ:' "$OUT/$nchk.log" | sed 's/^ */# /' || true
	check "$name: nvme disconnect" nvme_host_down "$host" || true
	check "$name: target removed" nvmet_down "$tgt" || true
}
nvmeof 1 2 "NVMe-oF target rnic, host rxe"
nvmeof 2 1 "NVMe-oF target rxe, host rnic"

# Userspace: the RoCE v2 GID of each side's address.
G1=
G2=
uverbs() {
	lab_exec 1 --timeout 60 "modprobe ib_uverbs && modprobe rdma_ucm" &&
		lab_exec 2 --timeout 60 "modprobe ib_uverbs && modprobe rdma_ucm" &&
		G1="$(uv_gid_index 1 rnic0 "$A1" "RoCE v2")" &&
		G2="$(uv_gid_index 2 rxe0 "$A2" "RoCE v2")" &&
		echo "GID indices: rnic0 $G1, rxe0 $G2"
}
check "userspace: ib_uverbs and rdma_ucm in both VMs; RoCE v2 GIDs of $A1 and $A2" uverbs || true
# upair NAME SRV_VM SRV_CMD CLI_CMD WAIT: a server/client pair, server in SRV_VM.
upair() {
	local srv="$2"
	UV_SRV="$srv" UV_CLI="$((3 - srv))" uv_pair "$1" "$3" "$4" "$5"
}
rc_pp() {
	upair rc 1 "ibv_rc_pingpong -d rnic0 -g $G1 -c -n 100 -s 4096" \
		"ibv_rc_pingpong -d rxe0 -g $G2 -c -n 100 -s 4096 $A1" tcp:18515 &&
		uv_iters "$LAB_DIR/uv-rc.server" 100 && uv_iters "$LAB_DIR/uv-rc.client" 100
}
check "userspace: ibv_rc_pingpong -c 4 KiB x 100, server rnic, client rxe" rc_pp || true
ud_pp() {
	upair ud 2 "ibv_ud_pingpong -d rxe0 -g $G2 -c -n 300 -s 512" \
		"ibv_ud_pingpong -d rnic0 -g $G1 -c -n 300 -s 512 $A2" tcp:18515 &&
		uv_iters "$LAB_DIR/uv-ud.server" 300 && uv_iters "$LAB_DIR/uv-ud.client" 300
}
check "userspace: ibv_ud_pingpong -c 512 B x 300, server rxe, client rnic" ud_pp || true
srq_pp() {
	upair srq 2 "ibv_srq_pingpong -d rxe0 -g $G2 -c -n 100 -q 4 -s 1024" \
		"ibv_srq_pingpong -d rnic0 -g $G1 -c -n 100 -q 4 -s 1024 $A2" tcp:18515 &&
		uv_iters "$LAB_DIR/uv-srq.server" 100 && uv_iters "$LAB_DIR/uv-srq.client" 100
}
check "userspace: ibv_srq_pingpong -c 4 QPs, 1 KiB x 100, server rxe, client rnic" srq_pp || true
# rping SRV_VM V: 20 verified pings over IPv<V>, server in SRV_VM.
rping_to() {
	local a
	a="$(lab_addr "$1" rnic "$2")"
	upair "rping-$1-$2" "$1" "rping -s -a $a -V -C 20" "rping -c -a $a -V -v -C 20" cm:7174 &&
		[ "$(grep -c 'ping data: rdma-ping-' "$LAB_DIR/uv-rping-$1-$2.client")" -eq 20 ]
}
for v in 4 6; do
	check "userspace: rping -V -C 20 over IPv$v, server rnic, client rxe" rping_to 1 "$v" || true
	check "userspace: rping -V -C 20 over IPv$v, server rxe, client rnic" rping_to 2 "$v" || true
done
# uperf NAME SRV_VM TOOL SIZE ARGS: a perftest pair, the server in SRV_VM,
# the client in the other; -x: each side's RoCE v2 GID, or rdma_cm with -R
# (port 18600: rnic_perf's servers hold rdma_cm port 18515).  The
# client's result row for SIZE.
uperf() {
	local name="$1" srv="$2" tool="$3" size="$4" sd cd sx cx saddr w=tcp:18515
	shift 4
	if [ "$srv" = 1 ]; then
		sd=rnic0 cd=rxe0 sx="-x $G1" cx="-x $G2" saddr="$A1"
	else
		sd=rxe0 cd=rnic0 sx="-x $G2" cx="-x $G1" saddr="$A2"
	fi
	if [[ " $* " == *" -R "* ]]; then
		sx="-p 18600" cx="-p 18600" w=cm:18600
	fi
	upair "$name" "$srv" "$tool -d $sd $sx -s $size $* -F" \
		"$tool -d $cd $cx -s $size $* -F $saddr" "$w" &&
		uv_perf_row "$LAB_DIR/uv-$name.client" "$size"
}
check "userspace: ib_write_bw -R 64 KiB x 60, rnic -> rxe" uperf wbw 2 ib_write_bw 65536 -n 60 -R || true
check "userspace: ib_write_bw 4 KiB x 100, rxe -> rnic" uperf wbw2 1 ib_write_bw 4096 -n 100 || true
# -o 16: perftest gives each side's QP the OTHER side's outstanding
# read/atomic count (rxe 128, rnic 16), which rnic refuses above its
# max_qp_rd_atom, as rxe and mlx5 refuse above theirs; both sides must
# ask for what both can hold.
check "userspace: ib_read_bw -R -o 16 4 KiB x 200, rnic reads rxe" uperf rbw 2 ib_read_bw 4096 -n 200 -o 16 -R || true
check "userspace: ib_send_bw 4 KiB x 200, rxe -> rnic" uperf sbw 1 ib_send_bw 4096 -n 200 || true
check "userspace: ib_atomic_bw -o 16 x 200, rnic -> rxe" uperf abw 2 ib_atomic_bw 8 -n 200 -o 16 || true
check "userspace: ib_write_lat 64 B x 200, rnic <-> rxe" uperf wlat 2 ib_write_lat 64 -n 200 || true
check "userspace: ib_send_lat -R 64 B x 200, rnic <-> rxe" uperf slat 1 ib_send_lat 64 -n 200 -R || true

lab_stop
echo "# test_nvmeof_interop: $(lab_elapsed "$T0") s"
exit "$fail"
