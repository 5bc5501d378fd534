#!/usr/bin/env bash
# The torchrun benchmark: rank 0's time from start to verdict, and its bytes, for the gate over
# torchrun's c10d store, beside a floor that only puts and gets one key per rank in the same
# store (bench/floor_store_keys.cpp). Both run under the same real torchrun (torch 2.7.1 from
# the wheel cache, one agent, N workers), interleaved, timed inside rank 0 (bench/exit_clock.c).
#   bench/torchrun.sh BUILD_DIR TABLE DETAILS
# Appends rows to TABLE and lines to DETAILS in bench/run.sh's format. Knobs:
# BENCH_TORCHRUN_RUNS (9), BENCH_TORCHRUN_SIZES ("4 8"), BENCH_TORCHRUN_INSTALLED: a prefix
# whose bin/denpex-probe is the gate as torchrun users install it (the manylinux wheel's, or the
# portable tarball unpacked: static libstdc++, fmt and decompressors, so no shared library but
# glibc's to load at each rank's start), timed in the same interleaved runs, with its own row. The probe alone in the same
# environment (torch on PYTHONPATH, no world) is timed too, interleaved, as an info row: the
# floor probes nothing, and the gate's rank 0 waits for every rank's own probe (N of them at
# once on this machine's cores), so the probe is most of the gap. Subtracting one from the
# other is no measure of the transport (N probes at once contend, staggered starts overlap),
# so no row claims it. A third program, the gate with PYTHONPATH unset (no PyTorch to inspect,
# a probe of a few ms), shows what is left beside the floor: the transport and the judgement.
set -u
BUILD=$1 TABLE=$2 DETAILS=$3
RUNS=${BENCH_TORCHRUN_RUNS:-9}
SIZES=${BENCH_TORCHRUN_SIZES:-"4 8"}
# shellcheck source=tests/real/paths.sh
source "$(dirname "$0")/../tests/real/paths.sh"
TORCH=$WHEEL_TREES/env/torch-2.7.1
PROBE=$BUILD/launch/denpex-probe
FLOOR=$BUILD/bench/denpex_bench_floor_store_keys
CLOCK=$BUILD/bench/libdenpex_bench_exit_clock.so
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$TABLE"; }
detail() { echo "$*" >>"$DETAILS"; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
median_of() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
if [ ! -e "$TORCH/torch/distributed/run.py" ]; then
  row "torchrun rank 0 start to verdict" "-" "-" "-" "<= floor + 20 ms" "info (no torch 2.7.1 in $WHEEL_TREES: tests/torchrun/torch_env.sh 2.7.1)"
  exit 0
fi
INSTALLED=${BENCH_TORCHRUN_INSTALLED:+$BENCH_TORCHRUN_INSTALLED/bin/denpex-probe}
for f in "$PROBE" "$FLOOR" "$CLOCK" $INSTALLED; do
  [ -e "$f" ] || { echo "bench/torchrun.sh: $f not built" >&2; exit 2; }
done
TMP=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/denpex-bench-torchrun.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
trun() {   # trun N CLOCKFILE OUT PROGRAM ARGS...
  local n=$1 clock=$2 out=$3; shift 3
  PYTHONPATH=$TORCH LD_PRELOAD= DENPEX_BENCH_CLOCK=$clock timeout 300 python3 -m torch.distributed.run \
    --nnodes 1 --nproc-per-node "$n" --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$(port)" \
    --max-restarts 0 --no-python env LD_PRELOAD="$CLOCK" "$@" >"$out" 2>&1
}
for n in $SIZES; do
  : >"$TMP/floor$n.ms"; : >"$TMP/probe$n.ms"; : >"$TMP/alone$n.ms"; : >"$TMP/bare$n.ms"
  : >"$TMP/inst$n.ms"; ex=0
  for i in $(seq "$RUNS"); do
    RANK=0 PYTHONPATH=$TORCH DENPEX_BENCH_CLOCK=$TMP/alone$n.ms LD_PRELOAD=$CLOCK "$PROBE" -q \
      >/dev/null 2>&1
    # Interleaved, alternating which goes first.
    if [ $((i % 2)) = 1 ]; then
      trun "$n" "$TMP/floor$n.ms" "$TMP/floor$n.out" "$FLOOR"
      trun "$n" "$TMP/probe$n.ms" "$TMP/probe$n.out" "$PROBE" -q --json "$TMP/probe$n.json" || ex=$?
    else
      trun "$n" "$TMP/probe$n.ms" "$TMP/probe$n.out" "$PROBE" -q --json "$TMP/probe$n.json" || ex=$?
      trun "$n" "$TMP/floor$n.ms" "$TMP/floor$n.out" "$FLOOR"
    fi
    # The same gate with no PyTorch on the workers' search path: the probe is then a few ms,
    # and what is left beside the floor is mostly the transport and the judgement.
    trun "$n" "$TMP/bare$n.ms" "$TMP/bare$n.out" env -u PYTHONPATH "$PROBE" -q \
      --json "$TMP/bare$n.json" || ex=$?
    if [ -n "$INSTALLED" ]; then
      trun "$n" "$TMP/inst$n.ms" "$TMP/inst$n.out" "$INSTALLED" -q --json "$TMP/inst$n.json" ||
        ex=$?
    fi
  done
  a=$(median_of "$TMP/floor$n.ms"); b=$(median_of "$TMP/probe$n.ms")
  if [ -z "$a" ] || [ -z "$b" ]; then
    row "torchrun -nproc $n rank 0 start to verdict (ms)" "-" "-" "-" "<= floor + 20 ms" "MISS (no time from $([ -z "$a" ] && echo the floor || echo the probe))"
    continue
  fi
  st=MISS; awk "BEGIN { exit !($b <= $a + 20) }" && st=PASS
  [ "$ex" = 0 ] || st="$st (probe exit $ex)"
  row "torchrun -nproc $n rank 0 start to verdict (ms)" "$(calc "$b" 1)" "$(calc "$a" 1)" "+$(calc "$b - $a" 1) ms" "<= floor + 20 ms" "$st"
  c=$(median_of "$TMP/alone$n.ms")
  row "  the probe alone, same environment (ms)" "$(calc "${c:-0}" 1)" "-" "-" "-" "info"
  d=$(median_of "$TMP/bare$n.ms")
  if [ -n "$d" ]; then
    st=MISS; awk "BEGIN { exit !($d <= $a + 20) }" && st=PASS
    row "torchrun -nproc $n, no PyTorch to inspect (ms)" "$(calc "$d" 1)" "$(calc "$a" 1)" "+$(calc "$d - $a" 1) ms" "<= floor + 20 ms" "$st"
  fi
  e=$(median_of "$TMP/inst$n.ms")
  if [ -n "$e" ]; then
    st=MISS; awk "BEGIN { exit !($e <= $a + 20) }" && st=PASS
    row "torchrun -nproc $n, the gate as installed (ms)" "$(calc "$e" 1)" "$(calc "$a" 1)" "+$(calc "$e - $a" 1) ms" "<= floor + 20 ms" "$st"
  fi
  fb=$(sed -n 's/^.*bytes_at_root=\([0-9]*\).*/\1/p' "$TMP/floor$n.out" | tail -1)
  pb=$(sed -n 's/.*"bytes_at_root": *\([0-9-]*\).*/\1/p' "$TMP/probe$n.json" | head -1)
  row "torchrun -nproc $n bytes at rank 0" "${pb:--}" "${fb:--}" "$( [ -n "$pb" ] && [ -n "$fb" ] && calc "$pb / $fb" 2)x" "(K=1: digests only)" "info"
  # Every figure here is CPU-bound on a shared machine: the load beside it says how shared.
  load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
  detail "torchrun -nproc $n (torch 2.7.1, libuv store): rank 0 start to exit, inside the process, median of $RUNS interleaved runs: floor $a ms, probe $b ms (exit $ex), the probe alone $c ms, the gate with no PyTorch on its path $d ms${e:+, the gate as installed ($INSTALLED) $e ms}; bytes at rank 0: probe $pb, floor $fb; load average ${load:-unknown}"
done
