#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rnic vs rdma_rxe, side by side (as root):
#
#   bash scripts/bench.sh [--smoke] [--out DIR] [--kver KVER]
#
# Boots a pair of rnic VMs, runs the rnic_perf and NVMe-oF matrix of
# scripts/bench/rows.sh between them and stops them; then the same with a
# pair of virtio-net VMs running rdma_rxe, the anchor (scripts/bench/
# pair.sh does one pair).  The pairs run one after the other: on a small
# host, four TCG VMs at once would measure the host's scheduler.  Same RAM
# and vCPU for all four VMs, RoCE v2 on both transports.
#
# Prints one table: every row's rnic figure, rxe figure and rnic/rxe (for
# latency too: above 1 is slower); writes DIR/bench.csv and draws
# DIR/bench.png (scripts/bench/chart.gp), and prints both paths.  Progress
# goes to stderr; each pair's lab output is in DIR/rnic.log, DIR/rxe.log.
#
#   --smoke      tiny counts (a couple of minutes; figures are not
#                meaningful, the table is complete)
#   --out DIR    where the results go (default /tmp/rnic-bench)
#   --kver KVER  the kernel the VMs boot (sets RNIC_LAB_KVER; default that
#                variable, else the Debian lab kernel); rnic and rnic_perf
#                must be DKMS-installed for it
#
# A benchmark, not a test: no thresholds.  Exit status 1 when a figure is
# missing (the table shows "-"), 2 on a usage error.
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
OUT=/tmp/rnic-bench
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) SMOKE=--smoke ;;
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
	*) usage ;;
	esac
	shift
done
if [ "$(id -u)" != 0 ]; then
	echo "bench: must run as root (the VM lab)" >&2
	exit 2
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
CSV="$OUT/bench.csv"
PNG="$OUT/bench.png"
rm -f "$CSV" "$PNG" "$OUT"/{rnic,rxe}.{results,lines,info,log}
T0="$(lab__now_us)"
KVER="$(lab_kver)"

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

# One pair after the other.  A pair that could not produce every figure
# still leaves the ones it has.
missing=0
for kind in rnic rxe; do
	echo "bench: $kind pair: booting ($KVER), log $OUT/$kind.log" >&2
	rc=0
	bash "$REPO/scripts/bench/pair.sh" "$kind" "$OUT" ${SMOKE:+"$SMOKE"} 3>&2 \
		>"$OUT/$kind.log" 2>&1 &
	PAIR=$!
	wait "$PAIR" || rc=$?
	PAIR=""
	case "$rc" in
	0) ;;
	*)
		missing=1
		echo "bench: $kind pair: exit $rc, some figures are missing (see $OUT/$kind.log)" >&2
		;;
	esac
	# The lab's sweep of the VMs' kernel logs: worth knowing next to figures.
	if grep -q '^not ok' "$OUT/$kind.log"; then
		echo "bench: $kind pair: the lab reported problems:" >&2
		grep '^not ok' "$OUT/$kind.log" | sed 's/^/bench:   /' >&2
	fi
done

# fig KIND ID: a row's figure, empty when missing.
fig() { awk -v id="$2" '$1 == id { print $2 }' "$OUT/$1.results" 2>/dev/null; }

echo "row,label,unit,rnic,rxe,rnic_over_rxe" >"$CSV"
for entry in "${BENCH_ROWS[@]}"; do
	bench_row "$entry"
	a="$(fig rnic "$ROW_ID")"
	b="$(fig rxe "$ROW_ID")"
	r=""
	if [ -n "$a" ] && [ -n "$b" ]; then
		r="$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
	else
		missing=1
	fi
	echo "$ROW_ID,$ROW_LABEL,$ROW_UNIT,$a,$b,$r" >>"$CSV"
done

setup="2 VMs per pair, 1 vCPU (TCG) and 1 GiB each, RoCE v2"
[ -n "$SMOKE" ] && setup="$setup; --smoke: tiny counts, figures not meaningful"
title="rnic vs rxe, kernel $KVER"
echo
echo "$title ($setup)"
awk -F, 'NR == 1 { printf "%-32s %-6s %12s %12s %9s\n", "row", "unit", "rnic", "rxe", "rnic/rxe"; next }
	{
		for (i = 4; i <= 6; i++) if ($i == "") $i = "-"
		printf "%-32s %-6s %12s %12s %9s\n", $2, $3, $4, $5, $6
	}' "$CSV"
echo "(rnic/rxe above 1: rnic is faster, except latency rows, where it is slower)"
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
