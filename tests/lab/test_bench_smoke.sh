#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
#
# scripts/bench.sh --smoke end to end: both pairs (rnic, then rxe) boot and
# run the whole matrix with tiny counts; the table has a number on both
# sides (and a ratio) in every row of scripts/bench/rows.sh, the CSV and
# the PNG it names exist and are complete.  No speed threshold: the figures
# of a smoke run mean nothing.
#
# bench.sh runs its own labs; their TAP lines (the kernel-log sweep per VM
# and the cleanup line) go to its logs, not here: this test prints exactly
# its own checks, one of which is that all of those lines were ok.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=scripts/lab/lab.sh
. "$REPO/scripts/lab/lab.sh"
# shellcheck source=scripts/bench/rows.sh
. "$REPO/scripts/bench/rows.sh"

SUITE="bench smoke"
T0="$(lab__now_us)"
OUT="$RNIC_LAB_DIR/bench_smoke"
STDOUT="$OUT/bench.stdout"
LOG="$OUT/bench.stderr"
NUM='^[0-9]+(\.[0-9]+)?$'
fail=0
echo "1..5"

# ok_if WHAT LOG CMD...: one TAP line for CMD; its output goes to LOG.
ok_if() {
	local what="$1" log="$2"
	shift 2
	if "$@" >"$log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$log"
		fail=1
	fi
}

rm -rf "$OUT"
mkdir -p "$OUT"
rc=0
bash "$REPO/scripts/bench.sh" --smoke --out "$OUT" >"$STDOUT" 2>"$LOG" || rc=$?
echo "# bench.sh --smoke: exit $rc after $(lab_elapsed "$T0") s"
sed 's/^/# /' "$STDOUT"
ok_if "scripts/bench.sh --smoke runs both pairs and exits 0" "$LOG" test "$rc" = 0

# table_rows: every row's line in the table ends in three numbers.
# shellcheck disable=SC2317 # called through ok_if
table_rows() {
	local entry line bad=0 f
	for entry in "${BENCH_ROWS[@]}"; do
		bench_row "$entry"
		line="$(grep -F "$ROW_LABEL " "$STDOUT" | head -1)"
		echo "$line"
		read -r -a f <<<"$line"
		local n=${#f[@]}
		if [ "$n" -lt 3 ] || ! [[ "${f[n - 3]}" =~ $NUM && "${f[n - 2]}" =~ $NUM &&
			"${f[n - 1]}" =~ $NUM ]]; then
			echo "^ $ROW_ID: no rnic, rxe and ratio figures"
			bad=1
		fi
	done
	return "$bad"
}
ok_if "the table has ${#BENCH_ROWS[@]} rows, each with rnic, rxe and rnic/rxe figures" \
	"$OUT/check-table.log" table_rows

# csv_rows: the CSV named on stdout has the header and every row, numbers
# in the rnic, rxe and ratio columns.
# shellcheck disable=SC2317 # called through ok_if
csv_rows() {
	local csv entry line
	csv="$(sed -n 's/^CSV: //p' "$STDOUT")"
	echo "CSV: $csv"
	[ -n "$csv" ] && [ -s "$csv" ] || return 1
	[ "$(head -1 "$csv")" = "row,label,unit,rnic,rxe,rnic_over_rxe" ] || return 1
	[ "$(wc -l <"$csv")" = $((${#BENCH_ROWS[@]} + 1)) ] || return 1
	for entry in "${BENCH_ROWS[@]}"; do
		bench_row "$entry"
		line="$(grep "^$ROW_ID," "$csv")" || return 1
		echo "$line"
		awk -F, -v re="$NUM" '{ exit !(NF == 6 && $4 ~ re && $5 ~ re && $6 ~ re) }' <<<"$line" ||
			return 1
	done
}
ok_if "the CSV it names has every row with numbers on both sides" "$OUT/check-csv.log" csv_rows

# shellcheck disable=SC2317 # called through ok_if
png() {
	local p
	p="$(sed -n 's/^PNG: //p' "$STDOUT")"
	echo "PNG: $p"
	[ -n "$p" ] && [ -s "$p" ] && [ "$(head -c 4 "$p" | tail -c 3)" = PNG ]
}
ok_if "the PNG it names is a PNG image (gnuplot)" "$OUT/check-png.log" png

# Each pair's lab printed one sweep line per VM and the cleanup line.
# shellcheck disable=SC2317 # called through ok_if
labs_clean() {
	local k ok nok
	for k in rnic rxe; do
		ok="$(grep -c '^ok - ' "$OUT/$k.log" || true)"
		nok="$(grep -c '^not ok - ' "$OUT/$k.log" || true)"
		echo "$k pair: $ok ok, $nok not ok (in $OUT/$k.log)"
		grep '^not ok - ' "$OUT/$k.log" || true
		[ "$ok" = 3 ] && [ "$nok" = 0 ] || return 1
	done
}
ok_if "both pairs' VMs have clean kernel logs and their labs clean up" \
	"$OUT/check-labs.log" labs_clean

echo "# test_bench_smoke: $(lab_elapsed "$T0") s"
exit "$fail"
