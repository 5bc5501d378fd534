#!/usr/bin/env bash
# The local probe against its floor (dlopen + ncclGetVersion) on a stand-in GPU host: the H100
# tree of tests/devices/trees.sh mounted where the driver and the kernel keep their files
# (tests/devices/device_host.sh), the NVML stand-in answering for its two GPUs and the driver's
# stand-in (libcuda.so.1, 550.54.15) resolving, so the probe reads GPUs, RDMA ports, NVML and
# the driver as on a GPU node. ROUNDS interleaved runs of RUNS pairs
# each (denpex_bench_abtime); prints each round's ratio, then the median of the rounds' median
# ratios and the load average. Needs root (mount and UTS namespaces).
# usage: bench/devices.sh [BUILD] [ROUNDS] [RUNS]   (defaults ./build 3 100)
set -euo pipefail
BUILD=$(cd "${1:-./build}" && pwd)
ROUNDS=${2:-3} RUNS=${3:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
DEVICES=$HERE/../tests/devices
PROBE=$BUILD/launch/denpex-probe
AB=$BUILD/bench/denpex_bench_abtime
FLOOR=$BUILD/bench/denpex_bench_floor_nccl_version
[ "$(id -u)" = 0 ] || { echo "bench/devices.sh: needs root (mount namespaces)" >&2; exit 2; }
for f in "$PROBE" "$AB" "$FLOOR"; do
  [ -x "$f" ] || { echo "bench/devices.sh: $f is not built" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T=$tmp/hosts FIXTURES=$HERE/../tests/fixtures/devices STANDINS=$BUILD/tests/standins/lib
# shellcheck source=tests/devices/trees.sh
source "$DEVICES/trees.sh"
tree ref
ratios=()
for ((i = 1; i <= ROUNDS; i++)); do
  "$DEVICES/device_host.sh" node01 "$T/ref" env $(nvml_env ref) \
    "LD_LIBRARY_PATH=$STANDINS/nvml:$STANDINS/cuda-550.54.15" \
    "$AB" "$RUNS" 5 "$FLOOR" ::: "$PROBE" -q >"$tmp/round$i.txt"
  r=$(awk '$1 == "ratio" { split($2, kv, "="); print kv[2] }' "$tmp/round$i.txt")
  ratios+=("$r")
  echo "round $i: $(tr '\n' ' ' <"$tmp/round$i.txt")"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
# The processes one probe forks there (strace): the probe's child, the device child (which makes
# the driver's call too) and NCCL's version call.
if command -v strace >/dev/null; then
  "$DEVICES/device_host.sh" node01 "$T/ref" env $(nvml_env ref) \
    "LD_LIBRARY_PATH=$STANDINS/nvml:$STANDINS/cuda-550.54.15" \
    strace -f -e trace=clone,clone3,fork,vfork -o "$tmp/strace.txt" "$PROBE" -q >/dev/null 2>&1 || true
  echo "forks in one probe: $(grep -cE 'clone|fork' "$tmp/strace.txt")"
fi
echo "median ratio over $ROUNDS rounds: ${median}x (bound 5x); load average $(cut -d' ' -f1-3 /proc/loadavg)"
