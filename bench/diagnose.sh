#!/usr/bin/env bash
# Benchmark 7: reading a 64-rank, 20,000-step NCCL COLL log (about 245 MB) with the whole signal
# library on, by `denpex-probe diagnose` and by `denpex-probe collectives`, each against
# `grep -c 'NCCL INFO'` on the same file, interleaved in the same run; and several input files
# read on both cores.
#
#   bench/diagnose.sh [BUILD_DIR]          (default ./build)
#
# Needs denpex-probe, denpex_bench_gen_coll_log and denpex_bench_abtime built, and /usr/bin/time.
# Targets: median wall time within 10x of grep's (medians of BENCH_DIAG_RUNS interleaved runs);
# peak RSS (max RSS, /usr/bin/time -v) <= 128 MB, and not growing with the file (the same log
# with 1/4 of the steps); `collectives` on 4 files (the log split by node, the same bytes) faster
# than on the one file, and 4 files of one size each within 3x of one of them (both cores read:
# 2x on 2 cores, 4x if read one after the other; one file alone is read on both cores too, its
# lines read and repaired beside the thread that judges them, so 2x is no longer the floor).
# `diagnose` reads its files in order (one collective stream across them), each on both cores.
# Prints the table on stdout; exit 0 even when a target is missed (the row says MISS), 2 when a
# program is missing. Knobs: BENCH_DIAG_RUNS (5), BENCH_DIAG_RANKS (64), BENCH_DIAG_STEPS
# (20000), BENCH_TMP.
set -u
export LC_ALL=C
BUILD=${1:-./build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "bench/diagnose.sh: build directory ${1:-./build} not found" >&2; exit 2; }
PROBE=$BUILD/launch/denpex-probe
GEN=$BUILD/bench/denpex_bench_gen_coll_log
AB=$BUILD/bench/denpex_bench_abtime
for f in "$PROBE" "$GEN" "$AB"; do
  [ -x "$f" ] || { echo "bench/diagnose.sh: $f not built (cmake --build $BUILD --target denpex-probe denpex_bench_gen_coll_log denpex_bench_abtime)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench/diagnose.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
RUNS=${BENCH_DIAG_RUNS:-5}
RANKS=${BENCH_DIAG_RANKS:-64}
STEPS=${BENCH_DIAG_STEPS:-20000}
TMP=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/denpex-diag-bench.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM
field() { awk -v k="$1" -v p="$2" '$1 == p { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$3"; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "PASS" : "MISS" }'; }
# maxrss_kb CMD...: the peak resident set of one run, as /usr/bin/time -v reports it.
maxrss_kb() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ { print $2 }'; }

"$GEN" "$TMP/coll.log" "$RANKS" "$STEPS" || exit 2
"$GEN" "$TMP/short.log" "$RANKS" $((STEPS / 4)) || exit 2
# The same log as four files, one per pair of nodes (8 ranks a node), as per-node logs are kept.
nodes=$(((RANKS + 7) / 8))
for i in 1 2 3 4; do
  : >"$TMP/part$i.log"
done
awk -v n="$nodes" -v dir="$TMP" '{ split($1, h, ":"); k = substr(h[1], 9) + 0; i = int((k - 1) * 4 / n) + 1; if (i < 1) i = 1; if (i > 4) i = 4; print > (dir "/part" i ".log") }' "$TMP/coll.log"
size=$(stat -c %s "$TMP/coll.log")
echo "[bench] $RANKS ranks x $STEPS steps: $(calc "$size / 1048576" 1) MB, $(wc -l <"$TMP/coll.log") lines; $(nproc) cores" >&2
# GNU grep stops at the first match when its output is /dev/null (as abtime sets it): its count
# goes to a file instead, through an exec so that the timed process is grep itself.
GREP=(sh -c "exec grep -c 'NCCL INFO' '$TMP/coll.log' >'$TMP/count'")
"$AB" "$RUNS" 1 "${GREP[@]}" ::: "$PROBE" diagnose -q "$TMP/coll.log" >"$TMP/ab_diag.txt"
"$AB" "$RUNS" 1 "${GREP[@]}" ::: "$PROBE" collectives -q "$TMP/coll.log" >"$TMP/ab_coll.txt"
"$AB" "$RUNS" 1 "$PROBE" collectives -q "$TMP/coll.log" ::: "$PROBE" collectives -q "$TMP"/part{1,2,3,4}.log >"$TMP/ab_split.txt"
"$AB" "$RUNS" 1 "$PROBE" collectives -q "$TMP/part1.log" ::: "$PROBE" collectives -q "$TMP"/part{1,2,3,4}.log >"$TMP/ab_four.txt"
"$AB" "$RUNS" 1 "$PROBE" diagnose -q "$TMP/coll.log" ::: "$PROBE" diagnose -q "$TMP"/part{1,2,3,4}.log >"$TMP/ab_dsplit.txt"
rss_diag=$(maxrss_kb "$PROBE" diagnose -q "$TMP/coll.log")
rss_diag_short=$(maxrss_kb "$PROBE" diagnose -q "$TMP/short.log")
rss_coll=$(maxrss_kb "$PROBE" collectives -q "$TMP/coll.log")
rss_coll_short=$(maxrss_kb "$PROBE" collectives -q "$TMP/short.log")
rss_coll4=$(maxrss_kb "$PROBE" collectives -q "$TMP"/part{1,2,3,4}.log)

printf 'figure\tvalue\tbound\tstatus\n'
for mode in diag coll; do
  name=$([ $mode = diag ] && echo diagnose || echo collectives)
  a=$(field median_ms A "$TMP/ab_$mode.txt"); b=$(field median_ms B "$TMP/ab_$mode.txt")
  r=$(field median_b_over_a ratio "$TMP/ab_$mode.txt")
  printf '%s vs grep -c (median wall ms)\t%s vs %s = %sx\t<= 10x\t%s\n' "$name" "$(calc "$b" 0)" "$(calc "$a" 0)" "$(calc "$r" 1)" "$(verdict "$r" 10)"
  printf '%s throughput (MB/s)\t%s\t\tinfo\n' "$name" "$(calc "$size / 1048.576 / $b" 0)"
done
printf 'diagnose peak RSS (MB)\t%s\t<= 128\t%s\n' "$(calc "$rss_diag / 1024" 1)" "$(verdict "$rss_diag" 131072)"
printf 'diagnose peak RSS, 1/4 of the steps (MB)\t%s\t~ same\tinfo\n' "$(calc "$rss_diag_short / 1024" 1)"
printf 'collectives peak RSS (MB)\t%s\t<= 128\t%s\n' "$(calc "$rss_coll / 1024" 1)" "$(verdict "$rss_coll" 131072)"
printf 'collectives peak RSS, 1/4 of the steps (MB)\t%s\t~ same\tinfo\n' "$(calc "$rss_coll_short / 1024" 1)"
printf 'collectives peak RSS, the log as 4 files (MB)\t%s\t<= 128\t%s\n' "$(calc "$rss_coll4 / 1024" 1)" "$(verdict "$rss_coll4" 131072)"
a=$(field median_ms A "$TMP/ab_split.txt"); b=$(field median_ms B "$TMP/ab_split.txt"); r=$(field median_b_over_a ratio "$TMP/ab_split.txt")
printf 'collectives: the log as 4 files vs as 1 (median wall ms)\t%s vs %s = %sx\t< 1x\t%s\n' "$(calc "$b" 0)" "$(calc "$a" 0)" "$(calc "$r" 2)" "$(verdict "$r" 0.99)"
a=$(field median_ms A "$TMP/ab_four.txt"); b=$(field median_ms B "$TMP/ab_four.txt"); r=$(field median_b_over_a ratio "$TMP/ab_four.txt")
printf 'collectives: 4 files vs 1 of them (median wall ms)\t%s vs %s = %sx\t<= 3x (2x: both cores)\t%s\n' "$(calc "$b" 0)" "$(calc "$a" 0)" "$(calc "$r" 2)" "$(verdict "$r" 3)"
a=$(field median_ms A "$TMP/ab_dsplit.txt"); b=$(field median_ms B "$TMP/ab_dsplit.txt"); r=$(field median_b_over_a ratio "$TMP/ab_dsplit.txt")
printf 'diagnose: the log as 4 files vs as 1 (median wall ms)\t%s vs %s = %sx\t\tinfo (in order, each on both cores)\n' "$(calc "$b" 0)" "$(calc "$a" 0)" "$(calc "$r" 2)"
for f in diag coll split four dsplit; do echo "details $f: $(tr '\n' ' ' <"$TMP/ab_$f.txt")"; done
