#!/usr/bin/env bash
# Benchmark 7: `denpex-probe diagnose` on a 64-rank, 20,000-step NCCL COLL log
# (about 245 MB) against `grep -c 'NCCL INFO'` on the same file, interleaved in the same run.
#
#   bench/diagnose.sh [BUILD_DIR]          (default ./build)
#
# Needs denpex-probe, denpex_bench_gen_coll_log and denpex_bench_abtime built. Targets: median
# wall time within 20x of grep's, peak RSS <= 128 MB; and RSS that does not grow with the file
# (the same log with 5,000 steps has the same peak). Prints the table on stdout; exit 0 even
# when a target is missed (the row says MISS), 2 when a program is missing.
# Knobs: BENCH_DIAG_RUNS (5), BENCH_DIAG_RANKS (64), BENCH_DIAG_STEPS (20000), BENCH_TMP.
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
RUNS=${BENCH_DIAG_RUNS:-5}
RANKS=${BENCH_DIAG_RANKS:-64}
STEPS=${BENCH_DIAG_STEPS:-20000}
TMP=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/denpex-diag-bench.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM
field() { awk -v k="$1" -v p="$2" '$1 == p { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$3"; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "PASS" : "MISS" }'; }

"$GEN" "$TMP/coll.log" "$RANKS" "$STEPS" || exit 2
"$GEN" "$TMP/short.log" "$RANKS" $((STEPS / 4)) || exit 2
size=$(stat -c %s "$TMP/coll.log")
echo "[bench] $RANKS ranks x $STEPS steps: $(calc "$size / 1048576" 1) MB, $(wc -l <"$TMP/coll.log") lines" >&2
# GNU grep stops at the first match when its output is /dev/null (as abtime sets it): its count
# goes to a file instead, through an exec so that the timed process is grep itself.
"$AB" "$RUNS" 1 sh -c "exec grep -c 'NCCL INFO' '$TMP/coll.log' >'$TMP/count'" ::: "$PROBE" diagnose -q "$TMP/coll.log" >"$TMP/ab.txt"
"$AB" 1 0 "$PROBE" diagnose -q "$TMP/short.log" >"$TMP/short.txt"
a=$(field median_ms A "$TMP/ab.txt"); b=$(field median_ms B "$TMP/ab.txt")
r=$(field median_b_over_a ratio "$TMP/ab.txt")
rss=$(field maxrss_kb B "$TMP/ab.txt"); rss_short=$(field maxrss_kb A "$TMP/short.txt")
printf 'figure\tvalue\tbound\tstatus\n'
printf 'diagnose vs grep -c (median wall ms)\t%s vs %s = %sx\t<= 20x\t%s\n' "$(calc "$b" 0)" "$(calc "$a" 0)" "$(calc "$r" 1)" "$(verdict "$r" 20)"
printf 'diagnose peak RSS (MB)\t%s\t<= 128\t%s\n' "$(calc "$rss / 1024" 1)" "$(verdict "$rss" 131072)"
printf 'peak RSS, 1/4 of the steps (MB)\t%s\t~ same\tinfo\n' "$(calc "$rss_short / 1024" 1)"
printf 'throughput (MB/s)\t%s\t\tinfo\n' "$(calc "$size / 1048.576 / $b" 0)"
echo "details: $(cat "$TMP/ab.txt" | tr '\n' ' ')"
