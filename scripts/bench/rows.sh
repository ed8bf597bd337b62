#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rows of scripts/bench.sh, in table order; sourced by bench.sh (the
# table, the CSV), scripts/bench/pair.sh (what to run) and the smoke test
# (what to expect).  One entry per row, fields separated by "|":
#
#   ID|LABEL|UNIT|FIELD|RUN
#
# FIELD is the rnic_perf result field the row reports (MBps, msg_rate,
# lat_p50_us, lat_p99_us), "fio" for the NVMe-oF rows, or for the
# perftest rows (userspace verbs: Debian's perftest over libibverbs, the
# kernel-bypass provider librnic against rxe's system-call provider)
# pt_bw (BW average, MiB/s as perftest counts), pt_rate (MsgRate, as
# msg/s), pt_p50 (t_typical) or pt_p99 (99% percentile).  RUN is, for
# rnic_perf rows, the client's options with "n=FULL:SMOKE" standing for
# the count of a full and of a --smoke run (pair.sh adds verify=0); for
# perftest rows the binary and its options, n= likewise (-n); rows with
# the same RUN share one run (p50 and p99 come from the same
# operations).  For fio rows it is "read" or "write".
#
# Counts: a row should take a few seconds under TCG, where the guests move
# roughly 10-70 MB/s; in a full run with these counts rnic's rows took
# 2-6 s, rxe's 4-13 s (the slower transport runs longer: same counts on
# both sides, so each side does the same work).  Bandwidth runs keep 16 operations in flight, 4 at
# 1 MiB: the server's buffers are kmalloc'ed 1 MiB chunks (2 * depth for
# SEND), and its registered region holds at most 1024 pages, 4 slots of
# 1 MiB; 4 in flight already keep the wire busy at that size.  Latency
# runs have one operation in flight, so they measure the round trip.
# The 64 B message rate runs longer, 150000 messages (3-7 s on rnic,
# 32-38 s on rxe): a run of ~1 s stays in one of two regimes of the
# whole system, the NIC woken for every few messages or the queues deep
# and served in batches (kicks and ACKs per message 0.5 against 0.1), so
# 30000 messages gave 23k-80k msg/s in ten runs of one pair; 150000
# average both, 42k-54k in six (2026-11-29, tools/rnicsim counters read
# around each run).  The two regimes were where the host's scheduler put
# each model (bench_pin_plan below); pinned, a pair stays in the fast one.
# Labels: no commas (they go into the CSV unquoted).

# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_ROWS=(
	"write_4k|RDMA WRITE 4 KiB|MB/s|MBps|op=write size=4096 depth=16 n=12000:200"
	"write_64k|RDMA WRITE 64 KiB|MB/s|MBps|op=write size=65536 depth=16 n=1500:40"
	"write_1m|RDMA WRITE 1 MiB|MB/s|MBps|op=write size=1048576 depth=4 n=128:4"
	"read_4k|RDMA READ 4 KiB|MB/s|MBps|op=read size=4096 depth=16 n=12000:200"
	"read_64k|RDMA READ 64 KiB|MB/s|MBps|op=read size=65536 depth=16 n=1500:40"
	"read_1m|RDMA READ 1 MiB|MB/s|MBps|op=read size=1048576 depth=4 n=128:4"
	"send_4k|SEND 4 KiB|MB/s|MBps|op=send size=4096 depth=16 n=12000:200"
	"send_64k|SEND 64 KiB|MB/s|MBps|op=send size=65536 depth=16 n=1000:40"
	"send_1m|SEND 1 MiB|MB/s|MBps|op=send size=1048576 depth=4 n=128:4"
	"send64_rate|SEND 64 B message rate|msg/s|msg_rate|op=send size=64 depth=16 n=25000:500"
	"write8_p50|WRITE 8 B latency p50|us|lat_p50_us|op=write size=8 depth=1 n=4000:200"
	"write8_p99|WRITE 8 B latency p99|us|lat_p99_us|op=write size=8 depth=1 n=4000:200"
	"fadd_p50|FETCH_ADD latency p50|us|lat_p50_us|op=fetch_add depth=1 n=4000:200"
	"fadd_p99|FETCH_ADD latency p99|us|lat_p99_us|op=fetch_add depth=1 n=4000:200"
	"pt_write_64k|perftest ib_write_bw 64 KiB|MiB/s|pt_bw|ib_write_bw -s 65536 n=3000:100"
	"pt_send64_rate|perftest ib_send_bw 64 B message rate|msg/s|pt_rate|ib_send_bw -s 64 n=150000:500"
	"pt_write_lat_p50|perftest ib_write_lat 64 B p50|us|pt_p50|ib_write_lat -s 64 n=5000:200"
	"pt_write_lat_p99|perftest ib_write_lat 64 B p99|us|pt_p99|ib_write_lat -s 64 n=5000:200"
	"pt_send_lat_p50|perftest ib_send_lat 64 B p50|us|pt_p50|ib_send_lat -s 64 n=5000:200"
	"pt_send_lat_p99|perftest ib_send_lat 64 B p99|us|pt_p99|ib_send_lat -s 64 n=5000:200"
	"nvme_read|NVMe-oF fio 128 KiB seq read|MB/s|fio|read"
	"nvme_write|NVMe-oF fio 128 KiB seq write|MB/s|fio|write"
)

# MiB that fio reads and writes on the NVMe-oF namespace (full, --smoke).
BENCH_NVME_MB=96
BENCH_NVME_MB_SMOKE=8

# bench_row ENTRY: set ROW_ID ROW_LABEL ROW_UNIT ROW_FIELD ROW_RUN.
bench_row() {
	IFS='|' read -r ROW_ID ROW_LABEL ROW_UNIT ROW_FIELD ROW_RUN <<<"$1"
}

# bench_mtu_ok N: N is a netdev MTU both pairs' NICs take (bench.sh
# --mtu, pair.sh's RNIC_BENCH_MTU): 576..9000.
bench_mtu_ok() {
	[[ "$1" =~ ^[1-9][0-9]*$ ]] && [ "$1" -ge 576 ] && [ "$1" -le 9000 ]
}

# bench_pin_plan MODE: where pair.sh puts a pair on this host for
# bench.sh's --pin MODE, as "VM1 VM2 SIM1 SIM2" (host CPUs of vm1's
# vCPU, of vm2's, of vm1's rnicsim, of vm2's), nothing for "none" or a
# host of one CPU; status 2 for an unknown MODE.  "auto" gives each VM's
# vCPU a CPU of its own, and each model a third and a fourth CPU if the
# host has them (a NIC is hardware beside the host's CPUs), else the CPU
# of the other VM; QEMU's other threads stay free (lab_pin).
#
# Why: on two CPUs the placement to avoid is a model on the CPU of the
# vCPU that feeds it; each then preempts the other for every batch of
# work.  Left to the host's scheduler, a run lands in that placement or
# in the other one: the "two regimes" of the earlier benches.  One rnic
# pair, perftest ib_send_bw 64 B x 150000 and ib_write_lat, 4 rounds
# (2026-11-30, whole QEMUs pinned): a model on the other VM's CPU
# 90k-131k msg/s, p99 200-401 us; on its own VM's CPU 25k-28k msg/s, p99
# 332-539 us; unpinned 55k-97k msg/s, p99 841-1361 us.  Whole QEMUs
# pinned also halved rxe's ib_write_bw and slowed rnic's NVMe-oF: QEMU's
# main loop moves virtio-net's frames and delivers ivshmem's interrupts,
# and it then waited for its own vCPU.  So only vCPUs are pinned.  README
# (Benchmarks) has the tables.
bench_pin_plan() {
	local -a c
	case "$1" in
	none) return 0 ;;
	auto) ;;
	*) return 2 ;;
	esac
	mapfile -t c < <(lab_cpus)
	if [ "${#c[@]}" -ge 4 ]; then
		echo "${c[0]} ${c[1]} ${c[2]} ${c[3]}"
	elif [ "${#c[@]}" -ge 2 ]; then
		echo "${c[0]} ${c[1]} ${c[1]} ${c[0]}"
	fi
}

# bench_pin_text MODE: the placement of bench_pin_plan MODE in words.
bench_pin_text() {
	local v1 v2 s1 s2
	read -r v1 v2 s1 s2 < <(bench_pin_plan "$1") || true
	if [ -z "${v1:-}" ]; then
		echo "unpinned"
	else
		echo "vm1's vCPU on CPU $v1, vm2's on CPU $v2, vm1's rnicsim on CPU $s1, vm2's on CPU $s2"
	fi
}
