#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One round of one side of scripts/bench.sh: boots a pair of VMs of one
# transport, runs every row of scripts/bench/rows.sh between them once and
# stops them.
#
#   scripts/bench/pair.sh rnic|rxe OUTDIR [--smoke] [--round R]
#
#   rnic  two VMs with an rnic NIC each, the DKMS-installed rnic driver,
#         RoCE v2 (rdma_cm's default_roce_mode), 10.20.0.1 -> 10.20.0.2;
#   rxe   two VMs with a virtio-net NIC each and rdma_rxe on it (RoCE v2
#         only), 10.10.0.1 -> 10.10.0.2: the anchor.
#
# Both pairs have 1 GiB of RAM per VM and the lab's one vCPU.  vm1 is the
# rnic_perf client and the NVMe-oF host, vm2 the rnic_perf server and the
# nvmet-rdma target (its namespace a file on the guest's tmpfs).
#
# R (default 1) is the round of bench.sh this run is: it appends "R ID
# VALUE" per row measured to OUTDIR/KIND.rounds and rnic_perf's result
# lines and fio's terse lines, each after "round R: ", to OUTDIR/KIND.lines
# (round 1 starts both afresh), and writes OUTDIR/KIND.info (the guest
# kernel, the RDMA port).  The lab is named bench_KIND_R, so each round's
# VM logs are kept.  Progress goes to fd 3 (bench.sh points it at its
# stderr), everything else to stdout/stderr, which bench.sh keeps in
# OUTDIR/KIND.log.  Exit status 0 when every row has a figure.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/lab/lab.sh
. "$HERE/../lab/lab.sh"
# shellcheck source=tests/lab/lib_perf.sh
. "$HERE/../../tests/lab/lib_perf.sh"
# shellcheck source=tests/lab/lib_nvmeof.sh
. "$HERE/../../tests/lab/lib_nvmeof.sh"
# shellcheck source=tests/lab/lib_uverbs.sh
. "$HERE/../../tests/lab/lib_uverbs.sh"
# shellcheck source=scripts/bench/rows.sh
. "$HERE/rows.sh"

usage() {
	echo "usage: $0 rnic|rxe OUTDIR [--smoke] [--round R]" >&2
	exit 2
}
KIND="${1:-}"
OUTDIR="${2:-}"
SMOKE=0
ROUND=1
shift 2 || usage
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=1 ;;
	--round)
		if [ $# -lt 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then usage; fi
		ROUND="$2"
		shift
		;;
	*) usage ;;
	esac
	shift
done
case "$KIND" in
rnic) NIC=rnic ;;
rxe) NIC=virtio ;;
*) usage ;;
esac
if [ -z "$OUTDIR" ] || [ ! -d "$OUTDIR" ]; then
	echo "$0: no output directory '$OUTDIR'" >&2
	exit 2
fi
# Progress for the person watching; to stderr when run by hand.
{ true >&3; } 2>/dev/null || exec 3>&2
say() { echo "bench: $KIND: round $ROUND: $*" >&3; }

RES="$OUTDIR/$KIND.rounds"
LINES="$OUTDIR/$KIND.lines"
INFO="$OUTDIR/$KIND.info"
if [ "$ROUND" = 1 ]; then
	: >"$RES"
	: >"$LINES"
fi
: >"$INFO"
MEM=1G
# RNIC_BENCH_MTU=N (bench.sh --mtu N): both VMs' NICs at MTU N, 1500 if unset.
BENCH_MTU="${RNIC_BENCH_MTU:-}"
if [ -n "$BENCH_MTU" ] && ! bench_mtu_ok "$BENCH_MTU"; then
	say "RNIC_BENCH_MTU=$BENCH_MTU: a netdev MTU, 576..9000"
	exit 2
fi
T0="$(lab__now_us)"

# The kernel the VMs boot must have the DKMS-installed modules: rnic_perf
# for both pairs, rnic for the rnic pair (one dkms.conf builds both).
KVER="$(lab_kver)"
if ! modinfo -k "$KVER" -n rnic_perf 2>/dev/null | grep -q "/updates/dkms/"; then
	say "rnic and rnic_perf are not DKMS-installed for $KVER (run scripts/dkms-install.sh $KVER)"
	exit 1
fi
if [ "$KIND" = rnic ] && [ ! -x "$LAB_RNICSIM" ]; then
	say "$LAB_RNICSIM is not built (make -C tools/rnicsim)"
	exit 1
fi

lab_start "bench_${KIND}_$ROUND"
for n in 1 2; do
	lab_vm "$n" "--$NIC" --mem "$MEM"
done
for n in 1 2; do
	lab_wait_ready "$n" || {
		say "vm$n did not boot (see $LAB_DIR/vm$n/console.log)"
		exit 1
	}
done
say "VMs up after $(lab_elapsed "$T0") s (logs in $LAB_DIR)"

# Where the pair runs (RNIC_BENCH_PIN, bench.sh --pin; rows.sh's
# bench_pin_plan says why): held for the whole round and read back from
# the threads pinned, so that each round's figures come from the
# placement the table names.
PIN="${RNIC_BENCH_PIN:-auto}"
# affinity TID...: the CPU lists of those threads, one of each.
affinity() {
	local t
	for t in "$@"; do taskset -c -p "$t"; done | sed 's/.*: //' | sort -u | paste -sd' '
}
pin_pair() {
	local plan n got where=""
	plan="$(bench_pin_plan "$PIN")" || return 1
	[ -n "$plan" ] || { say "placement: unpinned"; return 0; }
	read -r -a plan <<<"$plan"
	for n in 1 2; do
		if [ "$KIND" = rnic ]; then
			lab_pin "$n" "${plan[n - 1]}" "${plan[n + 1]}" || return 1
		else
			lab_pin "$n" "${plan[n - 1]}" || return 1
		fi
		# shellcheck disable=SC2046 # thread ids, one word each
		got="$(affinity $(lab_vcpus "$n"))"
		[ "$got" = "${plan[n - 1]}" ] || return 1
		where="$where, vm$n's vCPU on CPU $got"
		[ "$KIND" = rnic ] || continue
		# shellcheck disable=SC2046
		got="$(affinity $(ls "/proc/$(cat "$LAB_DIR/vm$n/rnicsim.pid")/task"))"
		[ "$got" = "${plan[n + 1]}" ] || return 1
		where="$where, its rnicsim on CPU $got"
	done
	say "placement (read back): ${where#, }"
}
pin_pair || {
	say "could not pin the pair as --pin $PIN plans ($(bench_pin_plan "$PIN" || true))"
	exit 1
}

up() {
	if [ "$KIND" = rnic ]; then
		rnic_up "$1" && roce_mode "$1" rnic0 "RoCE v2"
	else
		rxe_up "$1"
	fi
}
# mtu N MTU: VM N's NIC, and its tap on the lab's bridge, at MTU: the
# RDMA device's active MTU follows the netdev's (rnic: the largest IB MTU
# whose RoCE packets fit; rxe: the same rule), and so does the path MTU
# rdma_cm and perftest use.
mtu() {
	local tap="tap${1}r"
	[ "$KIND" = rnic ] || tap="tap${1}v"
	# shellcheck disable=SC2016 # expanded in the guest
	ip -n "$LAB_NS" link set "$tap" mtu "$2" &&
		lab_exec "$1" --timeout 60 'if [ -n "$LAB_VIRTIO_IF" ]; then dev=$LAB_VIRTIO_IF
			else dev=$(basename /sys/bus/pci/drivers/rnic/*/net/*); fi
			ip link set dev "$dev" mtu '"$2"' && ip -o link show dev "$dev"'
}
for n in 1 2; do
	{ up "$n" && { [ -z "$BENCH_MTU" ] || mtu "$n" "$BENCH_MTU"; }; } >>"$LAB_DIR/up.log" 2>&1 || {
		say "vm$n: RDMA device did not come up${BENCH_MTU:+ at MTU $BENCH_MTU} (see $LAB_DIR/up.log)"
		exit 1
	}
done
SRV="$(lab_addr 2 "$NIC" 4)"
perf_server 2 "$SRV"
say "RDMA devices and rnic_perf server up after $(lab_elapsed "$T0") s"
# shellcheck disable=SC2016 # expanded in the guest
lab_exec 1 --timeout 60 'echo "kernel $(uname -r)"; rdma link show; ip -o link show' >>"$INFO" 2>&1 || true

# record ID VALUE
record() { echo "$ROUND $1 $2" >>"$RES"; }

# expand_n RUN WORD: RUN with its n=FULL:SMOKE as WORD followed by this
# run's count (FULL, or SMOKE with --smoke).
expand_n() {
	local a c out=()
	for a in $1; do
		case "$a" in
		n=*)
			c="${a#n=}"
			if [ "$SMOKE" = 1 ]; then c="${c#*:}"; else c="${c%%:*}"; fi
			out+=("$2$c")
			;;
		*) out+=("$a") ;;
		esac
	done
	echo "${out[*]}"
}

# The client's options for a RUN of rows.sh: its n=FULL:SMOKE as count=.
run_args() { echo "$(expand_n "$1" count=) verify=0"; }

# rnic_perf rows: one client run per distinct RUN, its line kept for the
# rows that share it.  A run that fails leaves its rows without a figure.
declare -A LINE=()
missing=0
for entry in "${BENCH_ROWS[@]}"; do
	bench_row "$entry"
	[ "$ROW_FIELD" = fio ] && continue
	[[ "$ROW_FIELD" == pt_* ]] && continue
	args="$(run_args "$ROW_RUN")"
	if [ -z "${LINE[$args]+set}" ]; then
		t="$(lab__now_us)"
		if LINE[$args]="$(perf_run 1 "$SRV" --timeout 300 "$args")"; then
			echo "round $ROUND: ${LINE[$args]}" >>"$LINES"
		else
			say "$ROW_LABEL: rnic_perf $args failed: ${LINE[$args]:-no result} (see $LAB_DIR/vm1/commands.log)"
			LINE[$args]=""
		fi
		secs="$(lab_elapsed "$t")"
	fi
	if v="$(perf_field "${LINE[$args]}" "$ROW_FIELD")"; then
		record "$ROW_ID" "$v"
		say "$ROW_LABEL: $v $ROW_UNIT (run of $secs s: $args)"
	else
		missing=1
	fi
done

# perftest rows: Debian's perftest binaries through libibverbs, the same
# binaries on both pairs (librnic's kernel bypass on rnic, rxe's provider,
# which enters the kernel per post, on rxe), RoCE v2 GIDs of the IPv4
# addresses, the server in vm2.  One run per distinct RUN.
if [ "$KIND" = rnic ]; then DEV=rnic0; else DEV=rxe0; fi
# pt_args RUN: RUN with its n=FULL:SMOKE as -n COUNT.
pt_args() { expand_n "$1" "-n "; }
# pt_value FIELD ROW: the figure of a perftest result row (SIZE ITERS ...).
pt_value() {
	awk -v f="$1" '{
		if (f == "pt_bw") v = $4; else if (f == "pt_rate") v = $5 * 1000000
		else if (f == "pt_p50") v = $5; else if (f == "pt_p99") v = $8
		else exit 1
		if (v !~ /^[0-9.]+$/ || v <= 0) exit 1
		printf "%.2f\n", v
	}' <<<"$2"
}
PLOG="$LAB_DIR/perftest.log"
declare -A PT=()
pt_rows() {
	local sg cg args size t v
	lab_exec 1 --timeout 60 "modprobe ib_uverbs" >>"$PLOG" 2>&1 &&
		lab_exec 2 --timeout 60 "modprobe ib_uverbs" >>"$PLOG" 2>&1 &&
		sg="$(uv_gid_index 2 "$DEV" "$SRV" "RoCE v2" 2>>"$PLOG")" &&
		cg="$(uv_gid_index 1 "$DEV" "$(lab_addr 1 "$NIC" 4)" "RoCE v2" 2>>"$PLOG")" || {
		say "perftest: ib_uverbs or the RoCE v2 GIDs missing (see $PLOG)"
		return 1
	}
	for entry in "${BENCH_ROWS[@]}"; do
		bench_row "$entry"
		[[ "$ROW_FIELD" == pt_* ]] || continue
		args="$(pt_args "$ROW_RUN")"
		if [ -z "${PT[$args]+set}" ]; then
			t="$(lab__now_us)"
			size="$(sed -nE 's/.*-s ([0-9]+).*/\1/p' <<<"$args")"
			PT[$args]=""
			if uv_pair "$ROW_ID" "${args%% *} -d $DEV -x $sg ${args#* } -F" \
				"${args%% *} -d $DEV -x $cg ${args#* } -F $SRV" tcp:18515 >>"$PLOG" 2>&1 &&
				PT[$args]="$(uv_perf_row "$LAB_DIR/uv-$ROW_ID.client" "$size")"; then
				echo "round $ROUND: perftest $args: ${PT[$args]}" >>"$LINES"
			else
				say "$ROW_LABEL: $args failed (see $PLOG)"
			fi
			secs="$(lab_elapsed "$t")"
		fi
		if v="$(pt_value "$ROW_FIELD" "${PT[$args]}")"; then
			record "$ROW_ID" "$v"
			say "$ROW_LABEL: $v $ROW_UNIT (run of $secs s: $args)"
		fi
	done
}
pt_rows || true

# NVMe-oF: one namespace, written sequentially, then read back.
MB="$BENCH_NVME_MB"
[ "$SMOKE" = 1 ] && MB="$BENCH_NVME_MB_SMOKE"
# fio_mbps N DEV RW: fio's bandwidth in 10^6 bytes/s (rnic_perf's MBps),
# from its terse line: fields 6/9 are the read KiB and ms, 47/50 the
# write ones, 5 the error.
fio_mbps() {
	local line
	line="$(lab_exec "$1" --timeout 600 "fio --name=bench --filename=$2 --rw=$3 \
		--bs=128k --size=${MB}M --direct=1 --ioengine=libaio --iodepth=8 \
		--minimal")" || return 1
	echo "round $ROUND: fio $3: $line" >>"$LINES"
	awk -F';' -v rw="$3" 'NF >= 50 && $5 == 0 {
		kb = rw == "read" ? $6 : $47; ms = rw == "read" ? $9 : $50
		if (kb > 0 && ms > 0) { printf "%.2f\n", kb * 1024 / (ms * 1000); ok = 1 }
	} END { exit !ok }' <<<"$line"
}
# Setup and teardown output goes to nvme.log, fio's figures stay here (a
# redirection of the whole function would also catch the lab's own lines
# if a signal's trap ran inside it).
NLOG="$LAB_DIR/nvme.log"
nvme_rows() {
	local dev rw id v t
	if ! nvmet_up 2 "$SRV" "$MB" >>"$NLOG" 2>&1 ||
		! dev="$(nvme_host_up 1 "$SRV" 2>>"$NLOG")"; then
		say "NVMe-oF: target or host did not come up (see $NLOG)"
		return 1
	fi
	for rw in write read; do
		id="nvme_$rw"
		t="$(lab__now_us)"
		if v="$(fio_mbps 1 "$dev" "$rw")"; then
			record "$id" "$v"
			say "NVMe-oF fio 128 KiB seq $rw: $v MB/s ($MB MiB in $(lab_elapsed "$t") s)"
		else
			say "NVMe-oF fio $rw failed (see $LAB_DIR/vm1/commands.log)"
		fi
	done
	{ nvme_host_down 1 && nvmet_down 2; } >>"$NLOG" 2>&1 ||
		say "NVMe-oF: disconnect or target removal failed (see $NLOG)"
}
nvme_rows || true

for entry in "${BENCH_ROWS[@]}"; do
	bench_row "$entry"
	grep -q "^$ROUND $ROW_ID " "$RES" || missing=1
done
t="$(lab__now_us)"
lab_stop
say "done in $(lab_elapsed "$T0") s (the lab stopped in $(lab_elapsed "$t") s)"
exit "$missing"
