#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
# shellcheck disable=SC2317 # functions are called through check
#
# rnic_perf on the reference: two VMs with virtio-net NICs run the kernel's
# rdma_rxe and the exerciser (modprobe rnic_perf, the DKMS install) runs
# every operation between them with every byte verified: SEND (with
# scatter-gather, inline), SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA
# READ, CMP_SWAP, FETCH_ADD, over IPv4 and one over IPv6; the server side
# must agree (its own byte checks, message counts).  The figures (MB/s,
# messages/s, latency) are printed as comments: this is the benchmark
# anchor that rnic's runs are compared with.
set -euo pipefail
# shellcheck source=scripts/lab/lab.sh
. "$(dirname "$0")/../../scripts/lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$(dirname "$0")/lib_perf.sh"

SUITE="perf rxe"
T0="$(lab__now_us)"
lab_start perf_rxe || {
	lab_not_ok "$SUITE: lab start" "$RNIC_LAB_DIR/perf_rxe"
	exit 1
}
# 2 boots, 2 CPU checks, 3 set-up steps, 11 runs, 2 self-tests, the unload.
lab_plan 21 2
perf_checks_init
preflight rnic_perf

lab_vm 1 --virtio
lab_vm 2 --virtio
boot_vms 1 2

# The double fault that QEMU 7.2's CMPXCHG16B caused here twice (see
# scripts/lab/README.md): the lab's guests must not have the instruction.
for n in 1 2; do
	check "vm$n: the guest CPU has no cx16 (QEMU 7.2 CMPXCHG16B flags bug)" \
		lab_exec "$n" '! grep -qw cx16 /proc/cpuinfo' || true
done

setup_vm() {
	# shellcheck disable=SC2016 # $LAB_VIRTIO_IF is expanded in the guest
	lab_exec "$1" --timeout 60 \
		'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$LAB_VIRTIO_IF"' &&
		perf_load "$1"
}
check_vms "1 2" "rxe0 on virtio-net, rnic_perf loaded" setup_vm || true
SRV4="$(lab_addr 2 virtio 4)"
SRV6="$(lab_addr 2 virtio 6)"
servers() { perf_server 2 "$SRV4" && perf_server 2 "$SRV6"; }
check "vm2: server listens on $SRV4 and [$SRV6]" servers || true

FIGURES="$LAB_DIR/figures"
: >"$FIGURES"
# run WHAT ADDR ARGS...: a client run from vm1, then the server's verdict.
run() { perf_case "$1" 1 2 "${@:2}"; }

t="$(lab__now_us)"
run "SEND 4 KiB, 2 SGEs each side, depth 8, 300 verified" "$SRV4" \
	op=send size=4096 sge=2 depth=8 count=300
run "SEND inline 64 B, depth 8, 500 verified" "$SRV4" \
	op=send size=64 inline=1 depth=8 count=500
run "SEND_WITH_IMM 1000 B (odd size), 3 SGEs, 300 verified" "$SRV4" \
	op=send_imm size=1000 sge=3 depth=8 count=300
run "RDMA WRITE 64 KiB, depth 16, 160 verified" "$SRV4" \
	op=write size=65536 depth=16 count=160
run "RDMA WRITE_WITH_IMM 8 KiB, 4 SGEs, 300 verified" "$SRV4" \
	op=write_imm size=8192 sge=4 depth=8 count=300
run "RDMA READ 64 KiB, 2 SGEs, depth 16, 160 verified" "$SRV4" \
	op=read size=65536 sge=2 depth=16 count=160
run "ATOMIC CMP_SWAP (1 in 8 must fail), depth 8, 500 verified" "$SRV4" \
	op=cmp_swap depth=8 count=500
run "ATOMIC FETCH_ADD, depth 8, 500 verified" "$SRV4" \
	op=fetch_add depth=8 count=500
run "RDMA WRITE 16 KiB over IPv6, 200 verified" "$SRV6" \
	op=write size=16384 depth=8 count=200
echo "# verified runs: $(lab_elapsed "$t") s"

# The checks themselves: one flipped bit must fail the run with errors=1,
# found by the server (SEND) and by a CHECK round (WRITE).
# caught ITER ARGS...: the run fails with exactly one bad byte, and the
# server's line for that connection says status=fail.
caught() {
	local line srv
	if line="$(perf_run 1 "$SRV4" "$@")"; then
		echo "run passed: $line"
		return 1
	fi
	echo "$line"
	[ "$(perf_field "$line" errors)" = 1 ] || return 1
	srv="$(perf_check 2 "$line")" && return 1
	echo "$srv"
	case "$srv" in *" errors=1 "*status=fail) ;; *) return 1 ;; esac
}
check "self-test: a flipped bit in SEND 17 of 40 is caught" \
	caught op=send size=4096 sge=2 count=40 corrupt=17 || true
check "self-test: a flipped bit in WRITE 33 of 40 is caught" \
	caught op=write size=4096 depth=8 count=40 corrupt=33 || true

# The benchmark anchor: no per-iteration pattern work, latency at depth 1.
t="$(lab__now_us)"
run "bandwidth: RDMA WRITE 64 KiB, depth 16, 300 (verify=0)" "$SRV4" \
	op=write size=65536 depth=16 count=300 verify=0
run "latency: SEND 64 B, depth 1, 300 (verify=0)" "$SRV4" \
	op=send size=64 depth=1 count=300 verify=0
echo "# benchmark runs: $(lab_elapsed "$t") s"

check "vm2: server stops, rnic_perf unloads" \
	lab_exec 2 --timeout 60 "echo stop > $PERF_DBG/control && rmmod rnic_perf" || true

lab_stop
echo "# test_perf_rxe: $(lab_elapsed "$T0") s"
exit "$fail"
