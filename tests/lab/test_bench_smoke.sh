#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lab-kernels: stock
#
# scripts/bench.sh --smoke end to end: one round in which both pairs (rnic
# and rxe) boot and run the whole matrix with tiny counts; the table has, in
# every row of scripts/bench/rows.sh, a median on both sides, their ratio
# and both sides' ranges (min <= median <= max); the CSV it names has the
# same, the round's figures behind them are in DIR/{rnic,rxe}.rounds, and
# the PNG it names exists.  No speed threshold: the figures of a smoke run
# mean nothing.
#
# Medians and ranges over several rounds are checked without booting more
# pairs (a round is ~80 s of VMs that would prove nothing new about them):
# bench.sh --tables-only redoes the table, CSV and PNG from four synthetic
# rounds made of this run's figures (x1, x3, x0.5, x2: unsorted, an even
# count, so the median is the mean of the middle two), and the same checks
# hold against a median computed here.
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
ROUNDS=1
fail=0
echo "1..8"

# ok_if WHAT LOG CMD...: one TAP line for CMD; its output is appended to
# LOG (the first check's LOG is bench.sh's stderr, which a later one reads).
ok_if() {
	local what="$1" log="$2"
	shift 2
	if "$@" >>"$log" 2>&1; then
		lab_ok "$SUITE: $what"
	else
		lab_not_ok "$SUITE: $what" "$log"
		fail=1
	fi
}

rm -rf "$OUT"
mkdir -p "$OUT"
rc=0
bash "$REPO/scripts/bench.sh" --smoke --rounds "$ROUNDS" --out "$OUT" >"$STDOUT" 2>"$LOG" || rc=$?
echo "# bench.sh --smoke --rounds $ROUNDS: exit $rc after $(lab_elapsed "$T0") s"
# Its labs' time lines (boots, checks, the CPU they used), summed by
# scripts/test.sh's breakdown as every test's are.
cat "$OUT"/*.log 2>/dev/null | grep '^# lab: time: ' >&2 || true
sed 's/^/# /' "$STDOUT"
# What bench.sh said went wrong (a row's run that failed, a pair's exit),
# here too: a CI log keeps these lines, not the files they name.
if [ "$rc" != 0 ]; then
	grep -E 'failed|exit [1-9]|missing|not ok|did not' "$LOG" | sed 's/^/# bench.stderr: /' || true
	for f in "$RNIC_LAB_DIR"/bench_*/perftest.log; do
		if [ -s "$f" ]; then tail -n 20 "$f" | sed "s|^|# ${f#"$RNIC_LAB_DIR"/}: |"; fi
	done
fi
ok_if "scripts/bench.sh --smoke --rounds $ROUNDS runs both pairs in each round and exits 0" \
	"$LOG" test "$rc" = 0

# in_range MEDIAN MIN MAX: all three numbers, MIN <= MEDIAN <= MAX.
# shellcheck disable=SC2317 # called from functions called through ok_if
in_range() {
	[[ "$1" =~ $NUM && "$2" =~ $NUM && "$3" =~ $NUM ]] &&
		awk -v m="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(lo + 0 <= m + 0 && m + 0 <= hi + 0) }'
}

# table_rows: every row's line in the table ends in the rnic median, the
# rxe median, their ratio, and the rnic and rxe ranges ("MIN-MAX"), each
# median within its range.
# shellcheck disable=SC2317 # called through ok_if
table_rows() {
	local entry line bad=0 f n
	for entry in "${BENCH_ROWS[@]}"; do
		bench_row "$entry"
		line="$(grep -F "$ROW_LABEL " "$STDOUT" | head -1)"
		echo "$line"
		read -r -a f <<<"$line"
		n=${#f[@]}
		if [ "$n" -lt 5 ] || ! [[ "${f[n - 3]}" =~ $NUM ]] ||
			! in_range "${f[n - 5]}" "${f[n - 2]%-*}" "${f[n - 2]#*-}" ||
			! in_range "${f[n - 4]}" "${f[n - 1]%-*}" "${f[n - 1]#*-}"; then
			echo "^ $ROW_ID: no rnic and rxe medians within their ranges and ratio"
			bad=1
		fi
	done
	return "$bad"
}
ok_if "the table has ${#BENCH_ROWS[@]} rows, each with rnic and rxe medians, rnic/rxe and ranges" \
	"$OUT/check-table.log" table_rows

# csv_rows: the CSV named on stdout has the header and every row: the
# medians, their ratio, both ranges (min <= median <= max) and the rounds.
# shellcheck disable=SC2317 # called through ok_if
csv_rows() {
	local csv entry line f
	csv="$(sed -n 's/^CSV: //p' "$STDOUT")"
	echo "CSV: $csv"
	[ -n "$csv" ] && [ -s "$csv" ] || return 1
	[ "$(head -1 "$csv")" = \
		"row,label,unit,rnic,rxe,rnic_over_rxe,rnic_min,rnic_max,rxe_min,rxe_max,rounds" ] ||
		return 1
	[ "$(wc -l <"$csv")" = $((${#BENCH_ROWS[@]} + 1)) ] || return 1
	for entry in "${BENCH_ROWS[@]}"; do
		bench_row "$entry"
		line="$(grep "^$ROW_ID," "$csv")" || return 1
		echo "$line"
		IFS=, read -r -a f <<<"$line"
		[ "${#f[@]}" = 11 ] && [[ "${f[5]}" =~ $NUM ]] && [ "${f[10]}" = "$ROUNDS" ] &&
			in_range "${f[3]}" "${f[6]}" "${f[7]}" && in_range "${f[4]}" "${f[8]}" "${f[9]}" ||
			return 1
	done
}
ok_if "the CSV it names has every row with medians and ranges on both sides" \
	"$OUT/check-csv.log" csv_rows

# rounds: DIR/KIND.rounds has one figure per row per round, and the CSV's
# median, min and max are those of these figures (the mean of the two
# middle ones for an even count).
# shellcheck disable=SC2317 # called through ok_if
rounds() {
	local k col entry want got
	for k in rnic rxe; do
		col=4
		[ "$k" = rxe ] && col=5
		for entry in "${BENCH_ROWS[@]}"; do
			bench_row "$entry"
			want="$(awk -v id="$ROW_ID" '$2 == id { v[++n] = $3 + 0 }
				END {
					if (!n) exit
					for (i = 2; i <= n; i++)
						for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
							t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
						}
					m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
					printf "%d %.2f %.2f %.2f\n", n, m, v[1], v[n]
				}' "$OUT/$k.rounds")"
			got="$(awk -F, -v id="$ROW_ID" -v c="$col" -v n="$ROUNDS" '$1 == id {
				printf "%d %.2f %.2f %.2f\n", n, $c, $(c * 2 - 1), $(c * 2)
			}' "$OUT/bench.csv")"
			echo "$k $ROW_ID: rounds: ${want:-none}; CSV: $got"
			[ -n "$want" ] && [ "$want" = "$got" ] || return 1
		done
		[ "$(wc -l <"$OUT/$k.rounds")" = $((${#BENCH_ROWS[@]} * ROUNDS)) ] || return 1
	done
}
ok_if "DIR/rnic.rounds and DIR/rxe.rounds have each row's figure of each round, the CSV's medians and ranges" \
	"$OUT/check-rounds.log" rounds

# shellcheck disable=SC2317 # called through ok_if
png() {
	local p
	p="$(sed -n 's/^PNG: //p' "$STDOUT")"
	echo "PNG: $p"
	[ -n "$p" ] && [ -s "$p" ] && [ "$(head -c 4 "$p" | tail -c 3)" = PNG ]
}
ok_if "the PNG it names is a PNG image (gnuplot)" "$OUT/check-png.log" png

# Each pair's lab printed one sweep line per VM and the cleanup line, in
# each round.
# shellcheck disable=SC2317 # called through ok_if
labs_clean() {
	local k ok nok
	for k in rnic rxe; do
		ok="$(grep -c '^ok - ' "$OUT/$k.log" || true)"
		nok="$(grep -c '^not ok - ' "$OUT/$k.log" || true)"
		echo "$k pair: $ok ok, $nok not ok (in $OUT/$k.log)"
		grep '^not ok - ' "$OUT/$k.log" || true
		[ "$ok" = $((3 * ROUNDS)) ] && [ "$nok" = 0 ] || return 1
	done
}
ok_if "both pairs' VMs have clean kernel logs and their labs clean up" \
	"$OUT/check-labs.log" labs_clean

# placed: each pair ran where --pin auto (the default) plans, its vCPU
# threads and rnicsims' threads read back by pair.sh; the table's heading
# names that placement.
# shellcheck disable=SC2317 # called through ok_if
placed() {
	local k plan want
	local -a cpu
	plan="$(bench_pin_plan auto)"
	echo "bench_pin_plan auto on this host: ${plan:-(none: one CPU)}"
	grep -F "$(bench_pin_text auto)" "$STDOUT" || return 1
	read -r -a cpu <<<"$plan"
	for k in rnic rxe; do
		if [ -z "$plan" ]; then
			want="placement: unpinned"
		else
			want="vm1's vCPU on CPU ${cpu[0]}"
			[ "$k" = rnic ] && want="$want, its rnicsim on CPU ${cpu[2]}"
			want="$want, vm2's vCPU on CPU ${cpu[1]}"
			[ "$k" = rnic ] && want="$want, its rnicsim on CPU ${cpu[3]}"
			want="placement (read back): $want"
		fi
		echo "$k: want '$want'"
		[ "$(grep -F "bench: $k: round " "$LOG" | grep -cF ": $want")" = "$ROUNDS" ] || return 1
	done
}
ok_if "both pairs ran pinned where bench.sh --pin auto plans (vCPUs, rnicsims), read back" \
	"$OUT/check-placed.log" placed

# synthetic: --tables-only over four rounds made of this round's figures.
# shellcheck disable=SC2317 # called through ok_if
synthetic() {
	local k
	OUT="$RNIC_LAB_DIR/bench_smoke/tables-only"
	STDOUT="$OUT/bench.stdout"
	ROUNDS=4
	rm -rf "$OUT" && mkdir -p "$OUT" || return 1
	for k in rnic rxe; do
		awk '$1 == 1 {
			n = split("1 3 0.5 2", f, " ")
			for (i = 1; i <= n; i++)
				printf "%d %s %.2f\n", i, $2, $3 * f[i]
		}' "$RNIC_LAB_DIR/bench_smoke/$k.rounds" >"$OUT/$k.rounds" || return 1
	done
	bash "$REPO/scripts/bench.sh" --tables-only --out "$OUT" >"$STDOUT" || return 1
	cat "$STDOUT"
	table_rows && csv_rows && rounds && png
}
ok_if "bench.sh --tables-only over 4 synthetic rounds: table, CSV, medians (mean of the middle two) and ranges as computed here" \
	"$RNIC_LAB_DIR/bench_smoke/check-synthetic.log" synthetic

echo "# test_bench_smoke: $(lab_elapsed "$T0") s"
exit "$fail"
