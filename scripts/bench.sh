#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rnic vs rdma_rxe, side by side (as root):
#
#   bash scripts/bench.sh [--smoke] [--rounds N] [--out DIR] [--kver KVER] [--mtu N]
#                         [--pin auto|none]
#   bash scripts/bench.sh --tables-only [--out DIR]
#
# Runs the rnic_perf and NVMe-oF matrix of scripts/bench/rows.sh N times
# on each transport and reports, per row, the median of the N figures of
# each.  A round is one boot of a pair of rnic VMs, the whole matrix
# between them, and their stop; then the same with a pair of virtio-net
# VMs running rdma_rxe, the anchor (scripts/bench/pair.sh does one pair
# for one round).  The pairs run one after the other: on a small host,
# four TCG VMs at once would measure the host's scheduler.  Same RAM and
# vCPU for all four VMs, RoCE v2 on both transports.
#
# Why a boot per pair per round rather than one boot per pair with the N
# rounds inside: on a shared host the figures drift with the host's load
# over minutes (up to 3x), and one boot per pair would measure all of
# rnic's rounds in one stretch of time and all of rxe's in the next, so a
# slow stretch would still skew the ratio, N rounds or not.  Alternating
# the pairs spreads both transports' rounds over the whole run, and the
# order of the pairs flips every round (rnic rxe, rxe rnic, rnic rxe, ...)
# so that neither is always first.  The price is a boot and a stop per
# pair per round, 14-23 s each (pair.sh prints both): in a full run of 3
# rounds (~580 s) about 70 s more than one boot per pair would take.
#
# Prints one table: every row's median rnic figure, median rxe figure,
# the ratio of the medians rnic/rxe (for latency too: above 1 is slower),
# and the range (min-max) of each side's N figures; writes DIR/bench.csv
# (row,label,unit,rnic,rxe,rnic_over_rxe with the medians, then
# rnic_min,rnic_max,rxe_min,rxe_max,rounds) and draws DIR/bench.png
# (scripts/bench/chart.gp: the medians, the ranges as error bars), and
# prints both paths.  Every round's figures are in DIR/rnic.rounds and
# DIR/rxe.rounds ("ROUND ROW VALUE").  Progress goes to stderr; each pair's
# lab output is in DIR/rnic.log, DIR/rxe.log.
#
#   --smoke      tiny counts (a couple of minutes a round; figures are not
#                meaningful, the table is complete); 1 round by default
#   --rounds N   rounds per transport (default 3, 1 with --smoke); a full
#                round takes about 3 minutes
#   --out DIR    where the results go (default /tmp/rnic-bench)
#   --kver KVER  the kernel the VMs boot (sets RNIC_LAB_KVER; default that
#                variable, else the Debian lab kernel); rnic and rnic_perf
#                must be DKMS-installed for it
#   --mtu N      both pairs' NICs (and their taps) at netdev MTU N instead
#                of 1500: 9000 gives both devices the IB path MTU 4096
#                that RoCE fabrics run with jumbo frames (1500 gives 1024)
#   --pin MODE   where the pairs run on the host (scripts/bench/rows.sh,
#                bench_pin_plan): "auto" (the default) gives each VM's
#                vCPU a host CPU of its own and each rnicsim the CPU of
#                the other VM, or CPUs of their own on a host of four or
#                more; "none" leaves it to the host's scheduler, whose
#                choice moved rnic's message rate 4x from run to run on
#                two CPUs
#   --tables-only  boot nothing: the table, CSV and PNG again from the
#                rounds already in DIR/rnic.rounds and DIR/rxe.rounds (the
#                rounds are the highest round number in them): to redraw a
#                run's results, or to merge the rounds of several runs
#
# A benchmark, not a test: no thresholds.  Exit status 1 when a figure is
# missing (a round without it; the table shows "-" when no round has it),
# 2 on a usage error.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/lab/lab.sh
. "$REPO/scripts/lab/lab.sh"
# shellcheck source=scripts/bench/rows.sh
. "$REPO/scripts/bench/rows.sh"

usage() {
	sed -n 's/^#   \(bash scripts\/bench.sh.*\)/usage: \1/p' "$0" >&2
	exit 2
}
SMOKE=""
ROUNDS=""
TABLES_ONLY=""
OUT=/tmp/rnic-bench
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=--smoke ;;
	--tables-only) TABLES_ONLY=1 ;;
	--rounds)
		if [ $# -lt 2 ] || ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then usage; fi
		ROUNDS="$2"
		shift
		;;
	--out)
		[ $# -ge 2 ] || usage
		OUT="$2"
		shift
		;;
	--kver)
		[ $# -ge 2 ] || usage
		export RNIC_LAB_KVER="$2"
		shift
		;;
	--mtu)
		if [ $# -lt 2 ] || ! bench_mtu_ok "$2"; then usage; fi
		export RNIC_BENCH_MTU="$2"
		shift
		;;
	--pin)
		if [ $# -lt 2 ] || ! bench_pin_plan "$2" >/dev/null; then usage; fi
		export RNIC_BENCH_PIN="$2"
		shift
		;;
	*) usage ;;
	esac
	shift
done
if [ -n "$TABLES_ONLY" ]; then
	[ -z "$ROUNDS$SMOKE" ] || usage
	ROUNDS="$(cat "$OUT/rnic.rounds" "$OUT/rxe.rounds" 2>/dev/null |
		awk '$1 > n { n = $1 } END { print n + 0 }')"
	if [ "$ROUNDS" = 0 ]; then
		echo "bench: --tables-only: no rounds in $OUT/rnic.rounds or $OUT/rxe.rounds" >&2
		exit 2
	fi
elif [ -z "$ROUNDS" ]; then
	ROUNDS=3
	[ -n "$SMOKE" ] && ROUNDS=1
fi
if [ -z "$TABLES_ONLY" ] && [ "$(id -u)" != 0 ]; then
	echo "bench: must run as root (the VM lab)" >&2
	exit 2
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
CSV="$OUT/bench.csv"
PNG="$OUT/bench.png"
T0="$(lab__now_us)"
if [ -n "$TABLES_ONLY" ]; then
	rm -f "$CSV" "$PNG"
	# A directory of merged or copied rounds may have no log.
	KVER="$(sed -n 's/^# bench.sh: kernel //p' "$OUT/rnic.log" 2>/dev/null | tail -1)" ||
		KVER="unknown"
else
	rm -f "$CSV" "$PNG" "$OUT"/{rnic,rxe}.{rounds,results,lines,info,log}
	KVER="$(lab_kver)"
	echo "# bench.sh: kernel $KVER" >>"$OUT/rnic.log"
fi

# A signal to us (Ctrl-C, timeout) stops the running pair: SIGTERM, which
# its lab traps to clean up (a background job ignores SIGINT), and we wait
# for that before leaving.
PAIR=""
# shellcheck disable=SC2317 # called from the traps
on_signal() {
	trap - INT TERM HUP
	if [ -n "$PAIR" ]; then
		kill -TERM "$PAIR" 2>/dev/null || true
		wait "$PAIR" 2>/dev/null || true
	fi
	echo "bench: interrupted by SIG$1" >&2
	exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

# The pairs one after the other, round after round, the first pair of a
# round alternating.  A pair that could not produce every figure still
# leaves the ones it has.
missing=0
for ((round = 1; round <= ROUNDS && !TABLES_ONLY; round++)); do
	kinds="rnic rxe"
	[ $((round % 2)) = 0 ] && kinds="rxe rnic"
	for kind in $kinds; do
		echo "bench: round $round/$ROUNDS: $kind pair: booting ($KVER), log $OUT/$kind.log" >&2
		rc=0
		echo "# bench.sh: round $round" >>"$OUT/$kind.log"
		bash "$REPO/scripts/bench/pair.sh" "$kind" "$OUT" ${SMOKE:+"$SMOKE"} \
			--round "$round" 3>&2 >>"$OUT/$kind.log" 2>&1 &
		PAIR=$!
		wait "$PAIR" || rc=$?
		PAIR=""
		case "$rc" in
		0) ;;
		*)
			missing=1
			echo "bench: round $round: $kind pair: exit $rc, some figures are missing (see $OUT/$kind.log)" >&2
			;;
		esac
	done
done
# The lab's sweep of the VMs' kernel logs: worth knowing next to figures.
for kind in rnic rxe; do
	if grep -qs '^not ok' "$OUT/$kind.log"; then
		echo "bench: $kind pair: the lab reported problems:" >&2
		grep '^not ok' "$OUT/$kind.log" | sed 's/^/bench:   /' >&2
	fi
done

# stats KIND ID: "MEDIAN MIN MAX COUNT" of a row's figures over the
# rounds, nothing when no round has one.  An odd count's median is one of
# the figures as measured; an even count's the mean of the middle two.
stats() {
	awk -v id="$2" '$2 == id { v[++n] = $3 + 0; s[n] = $3 }
		END {
			if (!n) exit
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
					t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
				}
			if (n % 2) m = s[(n + 1) / 2]
			else m = sprintf("%.2f", (v[n / 2] + v[n / 2 + 1]) / 2)
			print m, s[1], s[n], n
		}' "$OUT/$1.rounds" 2>/dev/null
}

echo "row,label,unit,rnic,rxe,rnic_over_rxe,rnic_min,rnic_max,rxe_min,rxe_max,rounds" >"$CSV"
for entry in "${BENCH_ROWS[@]}"; do
	bench_row "$entry"
	a="" amin="" amax="" an=0 b="" bmin="" bmax="" bn=0
	read -r a amin amax an < <(stats rnic "$ROW_ID") || true
	read -r b bmin bmax bn < <(stats rxe "$ROW_ID") || true
	r=""
	if [ -n "$a" ] && [ -n "$b" ]; then
		r="$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
	fi
	if [ "${an:-0}" != "$ROUNDS" ] || [ "${bn:-0}" != "$ROUNDS" ]; then
		missing=1
		echo "bench: $ROW_LABEL: figures from ${an:-0} rnic and ${bn:-0} rxe rounds of $ROUNDS" >&2
	fi
	echo "$ROW_ID,$ROW_LABEL,$ROW_UNIT,$a,$b,$r,$amin,$amax,$bmin,$bmax,$ROUNDS" >>"$CSV"
done

setup="2 VMs per pair, 1 vCPU (TCG) and 1 GiB each, RoCE v2, MTU ${RNIC_BENCH_MTU:-1500}"
[ -n "$TABLES_ONLY" ] || setup="$setup; $(bench_pin_text "${RNIC_BENCH_PIN:-auto}")"
[ -n "$SMOKE" ] && setup="$setup; --smoke: tiny counts, figures not meaningful"
title="rnic vs rxe, kernel $KVER, median of $ROUNDS round(s)"
echo
echo "$title ($setup)"
awk -F, 'NR == 1 {
		printf "%-32s %-6s %10s %10s %9s %19s %19s\n", "row", "unit", "rnic", "rxe",
			"rnic/rxe", "rnic min-max", "rxe min-max"
		next
	}
	{
		for (i = 4; i <= 6; i++) if ($i == "") $i = "-"
		ra = $7 == "" ? "-" : $7 "-" $8
		rb = $9 == "" ? "-" : $9 "-" $10
		printf "%-32s %-6s %10s %10s %9s %19s %19s\n", $2, $3, $4, $5, $6, ra, rb
	}' "$CSV"
echo "(rnic/rxe: the ratio of the medians; above 1 rnic is faster, except latency rows, where it is slower)"
echo "CSV: $CSV"

if ! command -v gnuplot >/dev/null; then
	echo "PNG: not drawn: no gnuplot (run scripts/install-deps.sh)"
	missing=1
elif gnuplot -e "csv='$CSV'; png='$PNG'; heading='$title'" \
	"$REPO/scripts/bench/chart.gp" 2>"$OUT/gnuplot.log"; then
	echo "PNG: $PNG"
else
	# e.g. a panel with no figure at all
	echo "PNG: not drawn: gnuplot failed (see $OUT/gnuplot.log)"
	missing=1
fi
echo "bench: $(lab_elapsed "$T0") s" >&2
exit "$missing"
