#!/usr/bin/env bash
# The benchmarks, side by side with their floors, in one command:
#
#   bench/run.sh [BUILD_DIR]          (default ./build)
#   bench/run.sh --quick [BUILD_DIR]  (CI: every benchmark once, at small sizes; fails when one
#                                     cannot run, whatever the timings)
#
# Builds nothing: build first with
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
#   cmake --build build -j --target denpex-probe denpex_trace denpex_trace_overhead \
#     denpex_bench_abtime denpex_bench_floor_nccl_version denpex_bench_floor_mpi_hostnames \
#     denpex_bench_gen_records denpex_bench_judge_sim denpex_bench_mpi_root_sim denpex_bench_mpi_clock \
#     denpex_bench_floor_store_keys denpex_bench_exit_clock
#
# Prints progress on stderr and, at the end, the table on stdout (figure, floor or bound, ratio,
# target, PASS/MISS/info) followed by the details behind it. Every side-by-side figure is the
# median of interleaved runs (AB, BA, AB, ...; bench/abtime.c). Exit 0 even when a target is
# missed (the row says MISS); 2 when a program is missing or the machine cannot run a step.
#
# Knobs (environment): BENCH_LOCAL_RUNS (40), BENCH_MPI_RUNS (15), BENCH_MPI_SIZES ("2 4 8"),
# BENCH_COMPARE_SIZES ("1000 10000 100000"), BENCH_JUDGE_RANKS (1000000), BENCH_TRACE_CALLS
# (500000), BENCH_TORCHRUN_RUNS (9), BENCH_TORCHRUN_SIZES ("4 8"), BENCH_TMP (scratch directory
# parent; default $TMPDIR or /tmp).
set -u
export LC_ALL=C

QUICK=0
if [ "${1:-}" = --quick ]; then
  QUICK=1
  shift
  export BENCH_LOCAL_RUNS=${BENCH_LOCAL_RUNS:-2} BENCH_MPI_RUNS=${BENCH_MPI_RUNS:-2} BENCH_MPI_SIZES=${BENCH_MPI_SIZES:-2} \
    BENCH_COMPARE_SIZES=${BENCH_COMPARE_SIZES:-"100 1000"} BENCH_JUDGE_RANKS=${BENCH_JUDGE_RANKS:-10000} \
    BENCH_TRACE_CALLS=${BENCH_TRACE_CALLS:-10000} BENCH_TORCHRUN_RUNS=${BENCH_TORCHRUN_RUNS:-1} \
    BENCH_TORCHRUN_SIZES=${BENCH_TORCHRUN_SIZES:-2}
fi
BUILD=${1:-./build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "bench/run.sh: build directory ${1:-./build} not found" >&2; exit 2; }

LOCAL_RUNS=${BENCH_LOCAL_RUNS:-40}
MPI_RUNS=${BENCH_MPI_RUNS:-15}
MPI_SIZES=${BENCH_MPI_SIZES:-"2 4 8"}
COMPARE_SIZES=${BENCH_COMPARE_SIZES:-"1000 10000 100000"}
JUDGE_RANKS=${BENCH_JUDGE_RANKS:-1000000}
TRACE_CALLS=${BENCH_TRACE_CALLS:-500000}

PROBE=$BUILD/launch/denpex-probe
TRACE_LIB=$BUILD/recorder/libdenpex-trace.so
AB=$BUILD/bench/denpex_bench_abtime
FLOOR_NCCL=$BUILD/bench/denpex_bench_floor_nccl_version
FLOOR_MPI=$BUILD/bench/denpex_bench_floor_mpi_hostnames
GEN=$BUILD/bench/denpex_bench_gen_records
JUDGE_SIM=$BUILD/bench/denpex_bench_judge_sim
TRACE_BENCH=$BUILD/bench/denpex_trace_overhead
ROOT_SIM=$BUILD/bench/denpex_bench_mpi_root_sim
MPI_CLOCK=$BUILD/bench/libdenpex_bench_mpi_clock.so

missing=0
for f in "$PROBE" "$TRACE_LIB" "$AB" "$FLOOR_NCCL" "$FLOOR_MPI" "$GEN" "$JUDGE_SIM" "$TRACE_BENCH" "$ROOT_SIM" "$MPI_CLOCK"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "bench/run.sh: $f not built (see the build line at the top of bench/run.sh)" >&2; missing=1; }
done
command -v mpirun >/dev/null || { echo "bench/run.sh: mpirun not on PATH (apt-get install openmpi-bin)" >&2; missing=1; }
[ -x /usr/bin/time ] || { echo "bench/run.sh: /usr/bin/time missing (apt-get install time)" >&2; missing=1; }
[ $missing = 0 ] || exit 2

TMP=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/denpex-bench.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM

if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
MPIRUN=(mpirun --oversubscribe)

TABLE=$TMP/table
DETAILS=$TMP/details
: >"$TABLE"
: >"$DETAILS"
T_START=$(date +%s)

log() { echo "[bench $(($(date +%s) - T_START))s] $*" >&2; }
detail() { echo "$*" >>"$DETAILS"; }

# row NAME FIGURE FLOOR RATIO TARGET STATUS
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$TABLE"; }

# field KEY LINE-PREFIX FILE: value of KEY=... on the line starting with PREFIX
field() { awk -v k="$1" -v p="$2" '$1 == p { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$3"; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
# verdict VALUE LIMIT: PASS when VALUE <= LIMIT
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "PASS" : "MISS" }'; }

# --- 1. local probe vs dlopen + ncclGetVersion ---------------------------------------------------
log "1/6 local probe vs dlopen+ncclGetVersion floor ($LOCAL_RUNS interleaved runs each)"
if ! "$FLOOR_NCCL" >/dev/null 2>&1; then
  row "local probe -q vs dlopen+ncclGetVersion" "-" "-" "-" "<= 5x" "MISS (floor cannot load libnccl.so.2)"
else
  "$AB" "$LOCAL_RUNS" 5 "$FLOOR_NCCL" ::: "$PROBE" -q >"$TMP/local.txt"
  a=$(field median_ms A "$TMP/local.txt"); b=$(field median_ms B "$TMP/local.txt")
  r=$(field median_b_over_a ratio "$TMP/local.txt"); ex=$(field exit B "$TMP/local.txt")
  row "local: denpex-probe -q (ms)" "$(calc "$b")" "$(calc "$a")" "$(calc "$r")x" "<= 5x" "$(verdict "$r" 5)"
  detail "local probe: floor median $a ms, probe median $b ms (exit $ex), median of pair ratios $(field median_of_pair_ratios ratio "$TMP/local.txt")x; max RSS floor $(field maxrss_kb A "$TMP/local.txt") KB, probe $(field maxrss_kb B "$TMP/local.txt") KB"
fi

# --- 2. rank 0: MPI_Init to verdict vs MPI_Init + MPI_Gather of host names -------------------------
# Timed inside the processes (bench/mpi_clock.c, preloaded into both): mpirun's own start-up,
# about 350 ms and the same for both, would otherwise hide a regression of 20 ms.
log "2/6 -np {$MPI_SIZES}: rank 0 MPI_Init to verdict vs the floor's MPI_Init to gathered ($MPI_RUNS interleaved runs each)"
median_of() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for np in $MPI_SIZES; do
  : >"$TMP/mpi_floor$np.ms"; : >"$TMP/mpi_probe$np.ms"
  ex=0
  for _ in $(seq "$MPI_RUNS"); do
    "${MPIRUN[@]}" -np "$np" -x LD_PRELOAD="$MPI_CLOCK" -x DENPEX_BENCH_CLOCK="$TMP/mpi_floor$np.ms" \
      "$FLOOR_MPI" >/dev/null 2>&1
    "${MPIRUN[@]}" -np "$np" -x LD_PRELOAD="$MPI_CLOCK" -x DENPEX_BENCH_CLOCK="$TMP/mpi_probe$np.ms" \
      "$PROBE" -q >/dev/null 2>&1 || ex=$?
  done
  a=$(median_of "$TMP/mpi_floor$np.ms"); b=$(median_of "$TMP/mpi_probe$np.ms")
  if [ -z "$a" ] || [ -z "$b" ]; then
    row "-np $np rank 0 MPI_Init to verdict (ms)" "-" "-" "-" "<= floor + 20 ms" "MISS (no time from $([ -z "$a" ] && echo the floor || echo the probe))"
    continue
  fi
  st=$(verdict "$b" "$(calc "$a + 20" 3)")
  [ "$ex" = 0 ] || st="$st (probe exit $ex)"
  row "-np $np rank 0 MPI_Init to verdict (ms)" "$(calc "$b" 1)" "$(calc "$a" 1)" "+$(calc "$b - $a" 1) ms" "<= floor + 20 ms" "$st"
  detail "-np $np rank 0, inside the process: floor (MPI_Init to gathered) median $a ms, probe (MPI_Init to verdict) median $b ms over $MPI_RUNS runs each"
done

# --- 2t. the same over torchrun's c10d store (bench/torchrun.sh; skipped without torch wheels) ---
log "2t/6 torchrun -nproc {${BENCH_TORCHRUN_SIZES:-4 8}}: rank 0 start to verdict vs puts and gets of one key per rank"
bash "$(dirname "$0")/torchrun.sh" "$BUILD" "$TABLE" "$TMP/torchrun.details" ||
  row "torchrun rank 0 start to verdict" "-" "-" "-" "<= floor + 20 ms" "MISS (bench/torchrun.sh failed)"
[ -f "$TMP/torchrun.details" ] && while read -r l; do detail "$l"; done <"$TMP/torchrun.details"

# --- 3. bytes at rank 0 ----------------------------------------------------------------------------
log "3/6 bytes at rank 0, N = {$MPI_SIZES}, K = 1 and 2"
bytes_of() { sed -n 's/.*"bytes_at_root": *\([0-9-]*\).*/\1/p' "$1" | head -1; }
HOSTLEN=$(hostname | tr -d '\n' | wc -c)
for np in $MPI_SIZES; do
  "${MPIRUN[@]}" -np "$np" "$PROBE" -q --json "$TMP/k1_$np.json" >/dev/null 2>&1
  "${MPIRUN[@]}" -np $((np - 1)) "$PROBE" -q --json "$TMP/k2_$np.json" : \
    -np 1 -x NCCL_PROTO=Simple "$PROBE" -q --json "$TMP/k2_$np.json" >/dev/null 2>&1
  b1=$(bytes_of "$TMP/k1_$np.json"); b2=$(bytes_of "$TMP/k2_$np.json")
  if [ -z "$b1" ] || [ -z "$b2" ]; then
    row "bytes at rank 0, N=$np" "-" "-" "-" "<= 64/rank + K rec" "MISS (no bytes_at_root in --json)"
    continue
  fi
  # K=1: rank 0 represents the only configuration, so every byte is digest + host.
  # K=2: the same plus the full record of rank N-1 (the MPMD rank with NCCL_PROTO=Simple).
  per_rank=$(calc "$b1 / ($np - 1)" 1)
  rec=$((b2 - b1))
  bound1=$((64 * np + 1 * rec)); bound2=$((64 * np + 2 * rec))
  row "bytes at rank 0, N=$np K=1" "$b1" "$bound1" "$(calc "$b1 / $bound1" 3)" "<= 1 (64N+K*rec)" "$(verdict "$b1" "$bound1")"
  row "bytes at rank 0, N=$np K=2" "$b2" "$bound2" "$(calc "$b2 / $bound2" 3)" "<= 1 (64N+K*rec)" "$(verdict "$b2" "$bound2")"
  row "  bytes per rank, N=$np" "$per_rank" "64" "$(calc "$per_rank / 64" 3)" "<= 1" "$(verdict "$per_rank" 64)"
  detail "bytes N=$np: K=1 $b1 B = $((np - 1)) x $per_rank B (8-byte digest + ${HOSTLEN}-byte host name); K=2 $b2 B = $b1 + one full record of $rec B (compact JSON)"
done

# --- 4. compare over saved records --------------------------------------------------------------
log "4/6 compare over {$COMPARE_SIZES} saved records, 3 configurations"
"$PROBE" -q --rank-report "$TMP/template.json" >/dev/null 2>&1
if [ ! -s "$TMP/template.json" ]; then
  row "compare" "-" "-" "-" "linear" "MISS (could not write a template record)"
else
  detail "record file: $(wc -c <"$TMP/template.json") B (indented JSON, from denpex-probe --rank-report)"
  declare -A CT CR
  for n in $COMPARE_SIZES; do
    d=$TMP/records$n
    mkdir -p "$d"
    "$GEN" "$TMP/template.json" "$d" "$n" 3 || { row "compare $n records" "-" "-" "-" "" "MISS (generator failed)"; continue; }
    runs=5; [ "$n" -ge 100000 ] && runs=3
    # Floor: reading every file once (find + cat), the I/O no judge can avoid.
    "$AB" "$runs" 1 find "$d" -name '*.json' -exec cat {} + ::: "$PROBE" compare -q "$d" >"$TMP/cmp$n.txt"
    a=$(field median_ms A "$TMP/cmp$n.txt"); b=$(field median_ms B "$TMP/cmp$n.txt")
    ex=$(field exit B "$TMP/cmp$n.txt")
    /usr/bin/time -v "$PROBE" compare -q "$d" >/dev/null 2>"$TMP/cmp$n.time"
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$TMP/cmp$n.time")
    CT[$n]=$b; CR[$n]=$rss
    row "compare $n records (ms)" "$(calc "$b" 1)" "$(calc "$a" 1)" "$(calc "$b / $a" 2)x" "(read floor)" "info"
    row "compare $n records (max RSS KB)" "$rss" "-" "-" "-" "info"
    detail "compare $n: median $b ms over $runs runs (exit $ex: 1 = reject, NCCL_PROTO differs), floor (find|cat) $a ms, max RSS $rss KB, $(calc "$rss / $n" 2) KB per record"
    rm -rf "$d"
  done
  prev=""
  for n in $COMPARE_SIZES; do
    if [ -n "$prev" ] && [ -n "${CT[$n]:-}" ] && [ -n "${CT[$prev]:-}" ]; then
      f=$((n / prev)); lim=$(calc "$f * 1.2" 1)
      tr=$(calc "${CT[$n]} / ${CT[$prev]}" 2); rr=$(calc "${CR[$n]} / ${CR[$prev]}" 2)
      row "compare time ${n}/${prev}" "${tr}x" "${f}x" "$(calc "$tr / $f" 2)" "<= ${lim}x" "$(verdict "$tr" "$lim")"
      row "compare max RSS ${n}/${prev}" "${rr}x" "${f}x" "$(calc "$rr / $f" 2)" "<= ${lim}x" "$(verdict "$rr" "$lim")"
    fi
    prev=$n
  done
fi

# --- 5. judging alone, simulated ranks ----------------------------------------------------------
log "5/6 judge + report for a simulated $JUDGE_RANKS ranks (and $((JUDGE_RANKS / 10)) for scaling)"
if [ -s "$TMP/template.json" ]; then
  # 3 runs at each size; the run with the median total is reported.
  for n in $((JUDGE_RANKS / 10)) "$JUDGE_RANKS"; do
    for i in 1 2 3; do "$JUDGE_SIM" "$TMP/template.json" "$n" $((n / 8)) >"$TMP/judge${n}_$i.txt"; done
    best=$(for i in 1 2 3; do echo "$(awk '$1 == "total_judging" { print $2 }' "$TMP/judge${n}_$i.txt") $i"; done | sort -n | sed -n 2p | cut -d' ' -f2)
    cp "$TMP/judge${n}_$best.txt" "$TMP/judge$n.txt"
  done
  small=$((JUDGE_RANKS / 10))
  jt=$(awk '$1 == "total_judging" { print $2 }' "$TMP/judge$JUDGE_RANKS.txt")
  js=$(awk '$1 == "total_judging" { print $2 }' "$TMP/judge$small.txt")
  jr=$(awk '$1 == "peak_rss_kb" { print $2 }' "$TMP/judge$JUDGE_RANKS.txt")
  row "judge+report $JUDGE_RANKS ranks (ms)" "$(calc "$jt" 1)" "-" "-" "measured" "info"
  # Measured, not bounded: folding host names and sorting ranks
  # are n log n, so 10x the ranks costs about 10 x log(10n)/log(n) ~ 12x here.
  row "judge+report ${JUDGE_RANKS}/${small} time" "$(calc "$jt / $js" 2)x" "10x" "$(calc "$jt / $js / 10" 2)" "measured (n log n)" "info"
  detail "judge simulation, $JUDGE_RANKS ranks on $((JUDGE_RANKS / 8)) hosts, 3 configurations, 2 missing ranks (median of 3 runs; peak RSS $jr KB):"
  while read -r _ name ms _; do detail "    $name: $ms ms"; done < <(grep '^phase' "$TMP/judge$JUDGE_RANKS.txt")
  detail "    $(grep '^verdict' "$TMP/judge$JUDGE_RANKS.txt")"
fi

# --- 5b. rank 0's memory in the digest protocol, simulated ranks -----------------------------------
log "5b/6 rank 0 memory in collect() for a simulated $JUDGE_RANKS ranks"
if [ -s "$TMP/template.json" ]; then
  "$ROOT_SIM" "$TMP/template.json" "$JUDGE_RANKS" $((JUDGE_RANKS / 8)) >"$TMP/rootsim.txt"
  bpr=$(awk '$1 == "bytes_per_rank" { print $2 }' "$TMP/rootsim.txt")
  peak=$(awk '$1 == "peak_rss_kb" { print $2 }' "$TMP/rootsim.txt")
  hb=$(awk '$1 == "ranks" { print $8 }' "$TMP/rootsim.txt")
  # O(N x (8 + host name) + K x record): rank 0 keeps a digest and a host index per rank.
  bound=$((8 + hb + 32))
  row "rank 0 memory, $JUDGE_RANKS ranks (bytes/rank)" "$bpr" "$bound" "$(calc "$bpr / $bound" 2)" "<= 8 + host + 32" "$(verdict "$bpr" "$bound")"
  detail "rank 0 collect() simulated: $JUDGE_RANKS ranks on $((JUDGE_RANKS / 8)) hosts ($hb-byte names), 3 configurations: peak RSS $peak KB, $bpr bytes per rank over the process's start; $(awk '$1 == "collect_ms" { print $2 }' "$TMP/rootsim.txt") ms"
fi

# --- 6. collective recorder overhead ------------------------------------------------------------
log "6/6 recorder overhead per call ($TRACE_CALLS calls, 3 interleaved runs with/without LD_PRELOAD)"
mkdir -p "$TMP/trace"
: >"$TMP/trace_direct.txt"; : >"$TMP/trace_traced.txt"; : >"$TMP/trace_overhead.txt"
trace_ok=1
for i in 1 2 3; do
  "$TRACE_BENCH" "$TRACE_CALLS" >"$TMP/t.txt" 2>/dev/null || trace_ok=0
  awk '$1 == "traced" { print $2 }' "$TMP/t.txt" >>"$TMP/trace_direct.txt"
  DENPEX_TRACE_DIR=$TMP/trace LD_PRELOAD=$TRACE_LIB "$TRACE_BENCH" "$TRACE_CALLS" >"$TMP/t.txt" 2>/dev/null || trace_ok=0
  awk '$1 == "traced" { print $2 }' "$TMP/t.txt" >>"$TMP/trace_traced.txt"
  # Same process, same moment: traced minus direct (the crash-safe ring on).
  awk '$1 == "overhead" { print $2 }' "$TMP/t.txt" >>"$TMP/trace_overhead.txt"
  rm -rf "$TMP/trace"/*
done
if [ $trace_ok = 1 ]; then
  med() { sort -n "$1" | sed -n 2p; }
  td=$(med "$TMP/trace_direct.txt"); tt=$(med "$TMP/trace_traced.txt")
  row "recorder: ns per ncclAllReduce call" "$tt" "$td" "$(calc "$tt / $td" 2)x" "report" "info"
  to=$(med "$TMP/trace_overhead.txt")
  row "recorder overhead (ns per call over direct)" "$to" "500" "$(calc "$to / 500" 2)" "<= 500 ns" "$(verdict "$to" 500)"
  detail "recorder overhead: $(calc "$tt - $td" 1) ns per call (traced $tt ns, direct $td ns; medians of 3 runs of $TRACE_CALLS calls on a null communicator, see bench/trace_overhead.md)"
else
  row "recorder: ns per ncclAllReduce call" "-" "-" "-" "report" "MISS (NCCL or the recorder could not be loaded)"
fi

# --- the table ------------------------------------------------------------------------------------
{
  echo
  echo "denpex-probe benchmarks: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(date -u +%Y-%m-%dT%H:%MZ), run took $(($(date +%s) - T_START)) s"
  echo
  printf '| %s | %s | %s | %s | %s | %s |\n' benchmark figure "floor/bound" ratio target result
  printf '| --- | ---: | ---: | ---: | --- | --- |\n'
  while IFS=$'\t' read -r a b c d e f; do printf '| %s | %s | %s | %s | %s | %s |\n' "$a" "$b" "$c" "$d" "$e" "$f"; done <"$TABLE"
  echo
  echo "details:"
  sed 's/^/  /' "$DETAILS"
  misses=$(grep -c $'\tMISS' "$TABLE")
  echo
  echo "$misses target(s) missed"
}
if [ $QUICK = 1 ]; then
  # Quick mode judges that every benchmark ran and produced its figures, not the timings.
  broken=$(awk -F'\t' '$2 == "-" || $6 ~ /MISS \(/ || $6 ~ /probe exit [2-9]/' "$TABLE")
  if [ -n "$broken" ]; then
    echo "bench/run.sh --quick: FAIL: a benchmark did not run:" >&2
    echo "$broken" >&2
    exit 1
  fi
  echo "bench/run.sh --quick: every benchmark ran (timings not judged in quick mode)"
fi
exit 0
