#!/usr/bin/env bash
# Flight Recorder dumps at scale: a simulated job's dumps (bench/gen_fr_dumps.cpp: RANKS ranks x
# ENTRIES entries with FRAMES-frame stacks, in torch's pickle) read and judged as `diagnose`
# does (bench/fr_read.cpp: evidence/fr_analyse on 2 reader threads). Targets: wall time under
# 10 s and peak RSS under 256 MB for 1,000 x 2,000 x 20; the two planted faults found (rank 417's
# size, rank 803 behind). States the bytes read, the CPU time, and the machine's load average,
# since the machine is shared.
#
#   bench/fr_dumps.sh [BUILD_DIR]        (default ./build)
# Needs denpex_bench_gen_fr_dumps and denpex_bench_fr_read built. Knobs: BENCH_FR_RANKS (1000),
# BENCH_FR_ENTRIES (2000), BENCH_FR_FRAMES (20), BENCH_FR_RUNS (3), BENCH_TMP.
# Prints the table on stdout; exit 0 even when a target is missed (MISS), 2 when a program is
# missing, 1 when the faults are not found.
set -u
export LC_ALL=C
BUILD=${1:-./build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "bench/fr_dumps.sh: build directory ${1:-./build} not found" >&2; exit 2; }
GEN=$BUILD/bench/denpex_bench_gen_fr_dumps
READ=$BUILD/bench/denpex_bench_fr_read
for f in "$GEN" "$READ"; do
  [ -x "$f" ] || { echo "bench/fr_dumps.sh: $f not built (cmake --build $BUILD --target denpex_bench_gen_fr_dumps denpex_bench_fr_read)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "bench/fr_dumps.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
RANKS=${BENCH_FR_RANKS:-1000}
ENTRIES=${BENCH_FR_ENTRIES:-2000}
FRAMES=${BENCH_FR_FRAMES:-20}
RUNS=${BENCH_FR_RUNS:-3}
TMP=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/denpex-fr-bench.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM
mkdir -p "$TMP/dumps"
echo "fr_dumps: generating $RANKS x $ENTRIES x $FRAMES" >&2
bytes=$("$GEN" "$TMP/dumps" "$RANKS" "$ENTRIES" "$FRAMES" | sed -n 's/^bytes=//p') || exit 2
walls=() cpus=() rss=()
for i in $(seq "$RUNS"); do
  /usr/bin/time -f "time wall=%e user=%U sys=%S rss=%M" -o "$TMP/time.$i" "$READ" "$TMP/dumps" >"$TMP/out.$i" || exit 2
  read -r wall user sys kb < <(sed -n 's/^time wall=\([^ ]*\) user=\([^ ]*\) sys=\([^ ]*\) rss=\(.*\)$/\1 \2 \3 \4/p' "$TMP/time.$i")
  walls+=("$wall"); cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')"); rss+=("$kb")
  echo "fr_dumps: run $i: wall ${wall}s cpu ${cpus[-1]}s rss ${kb} KB" >&2
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
wall=$(median "${walls[@]}"); cpu=$(median "${cpus[@]}"); kb=$(median "${rss[@]}")
mb=$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v + 0 <= l + 0) ? "PASS" : "MISS" }'; }
found=PASS
if [ "$RANKS" -ge 1000 ]; then
  grep -q '^finding collective-args-mismatch 417 seq=' "$TMP/out.1" || found=FAIL
  grep -q '^finding collective-missing 803 seq=' "$TMP/out.1" || found=FAIL
fi
head -1 "$TMP/out.1" >&2
echo "| benchmark | figure | bound | result |"
echo "| --- | ---: | ---: | --- |"
echo "| FR dumps ${RANKS}x${ENTRIES}x${FRAMES}: read + judge, wall (s, median of $RUNS) | $wall | 10 | $(verdict "$wall" 10) |"
echo "| FR dumps: CPU time, user + sys (s) | $cpu | - | info |"
echo "| FR dumps: peak RSS (MB) | $mb | 256 | $(verdict "$mb" 256) |"
echo "| FR dumps: bytes read | $bytes | - | info |"
echo "| FR dumps: planted faults named (rank 417 size, rank 803 behind) | $found | - | $found |"
echo "| machine load average (1 min) at the end | $(cut -d' ' -f1 /proc/loadavg) | 2 cores | info |"
[ "$found" = PASS ] || exit 1
