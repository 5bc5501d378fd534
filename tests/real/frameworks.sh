#!/usr/bin/env bash
# JAX's and CuPy's NCCL in the record, checked against /proc/PID/maps of their real imports on
# this machine without a GPU: `import jax; jax.devices()` (the CUDA plugin initialises, loads
# NVIDIA's libraries, finds no GPU and falls back to the CPU) and `import cupy.cuda.nccl`
# (CuPy's preload, then its nccl extension). Where the real import maps no NCCL without a GPU,
# the test says so and checks that it does not.
# usage: frameworks.sh PROBE SCRATCH_BASE
source "$(dirname "$0")/lib.sh"
real_setup "$1" "$2"

# check OUT FIELD: the record's FIELD.nccl.path against the mapped libnccl, resolved.
check() {
  local said mapped
  said=$(jq -r ".ranks[0].$2.nccl.path // \"\"" "$1.json")
  mapped=$(mapped_nccl | head -1)
  [ -z "$mapped" ] || mapped=$(readlink -f "$mapped")
  [ -n "$said" ] || { cat "$1.txt"; fail "$1: the record has no $2.nccl"; }
  [ "$said" = "$mapped" ] || fail "$1: the probe says $2 loads '$said', the real import mapped '$mapped'"
  echo "  $2: probe and /proc/PID/maps agree: $said ($(jq -r ".ranks[0].$2.nccl_rule" "$1.json"))"
}
JAX='import jax
print(jax.devices())'
CUPY='import cupy.cuda.nccl as nccl
print("NCCL", nccl.get_version())'

echo "== jax 0.6.2 with jax-cuda12-plugin: the nvidia-nccl-cu12 2.26.2 wheel"
J=$ENVS/jax-0.6.2
probe_alone "$SCRATCH/jax" PYTHONPATH="$J"
jq_is "$SCRATCH/jax.json" '.ranks[0].jax | "\(.status) \(.version) \(.package) \(.nccl.version) \(.nccl.linkage)"' \
  "ok 0.6.2 jax-cuda12-plugin 0.6.2 2.26.2 wheel"
py_run "$SCRATCH/jax.import" "$JAX" PYTHONPATH="$J"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/jax.import.err"; fail "import jax failed"; }
check "$SCRATCH/jax" jax

echo "== the same, with NCCL 2.21.5 from an earlier PYTHONPATH entry holding the nvidia package"
mkdir -p "$SCRATCH/front"
swap_nccl "$SCRATCH/front" nccl-2.21.5
cp -al "$ENVS/nccl-2.21.5/nvidia/__init__.py" "$SCRATCH/front/nvidia/"
probe_alone "$SCRATCH/jax2" PYTHONPATH="$SCRATCH/front:$J"
jq_is "$SCRATCH/jax2.json" '.ranks[0].jax.nccl.version' 2.21.5
py_run "$SCRATCH/jax2.import" "$JAX" PYTHONPATH="$SCRATCH/front:$J"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/jax2.import.err"; fail "import jax failed"; }
check "$SCRATCH/jax2" jax

echo "== jax without an importable nvidia.nccl: the plugin's own dlopen, which needs a GPU"
copy_env jax-0.6.2 "$SCRATCH/jax-nonccl"
rm -rf "$SCRATCH/jax-nonccl/nvidia" "$SCRATCH/jax-nonccl"/nvidia_nccl_cu12-*.dist-info
probe_alone "$SCRATCH/jax3" PYTHONPATH="$SCRATCH/jax-nonccl"
jq -r '.ranks[0].jax.nccl_rule' "$SCRATCH/jax3.json" | grep -q "xla_cuda_plugin.so's dlopen" ||
  fail "the record does not say the plugin's dlopen decides"
py_run "$SCRATCH/jax3.import" "$JAX" PYTHONPATH="$SCRATCH/jax-nonccl"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/jax3.import.err"; fail "import jax failed"; }
if [ -n "$(mapped_nccl)" ]; then
  check "$SCRATCH/jax3" jax
else
  echo "  not checked against maps: without a GPU the real import maps no NCCL here (the plugin's"
  echo "  own dlopen of libnccl.so.2 does not happen during backend initialisation); the record names"
  echo "  $(jq -r '.ranks[0].jax.nccl.path // "none"' "$SCRATCH/jax3.json"), the loader's answer for that dlopen"
fi

echo "== cupy-cuda12x 13.6.0: preloads the nvidia-nccl-cu12 2.21.5 wheel"
K=$ENVS/cupy-13.6.0
probe_alone "$SCRATCH/cupy" PYTHONPATH="$K"
jq_is "$SCRATCH/cupy.json" '.ranks[0].cupy | "\(.status) \(.version) \(.package) \(.nccl.version) \(.nccl.linkage)"' \
  "ok 13.6.0 cupy-cuda12x 13.6.0 2.21.5 wheel"
jq_is "$SCRATCH/cupy.json" '[.ranks[0].abi[] | select(.consumer|test("cupy_backends")) | .missing | length] | join(",")' 0
py_run "$SCRATCH/cupy.import" "$CUPY" PYTHONPATH="$K"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/cupy.import.err"; fail "import cupy.cuda.nccl failed"; }
grep -q "^NCCL 22105" "$SCRATCH/cupy.import.out" || fail "cupy's nccl.get_version() is not 22105"
check "$SCRATCH/cupy" cupy

echo "== cupy without the NCCL wheel: its extension's DT_NEEDED libnccl.so.2, through the loader"
copy_env cupy-13.6.0 "$SCRATCH/cupy-nowheel"
rm -rf "$SCRATCH/cupy-nowheel/nvidia" "$SCRATCH/cupy-nowheel"/nvidia_nccl_cu12-*.dist-info
LIB=$(dirname "$(nccl_lib nccl-2.27.7)")
probe_alone "$SCRATCH/cupy2" PYTHONPATH="$SCRATCH/cupy-nowheel" LD_LIBRARY_PATH="$LIB"
jq_is "$SCRATCH/cupy2.json" '.ranks[0].cupy.nccl | "\(.version) \(.linkage)"' "2.27.7 system"
py_run "$SCRATCH/cupy2.import" "$CUPY" PYTHONPATH="$SCRATCH/cupy-nowheel" LD_LIBRARY_PATH="$LIB"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/cupy2.import.err"; fail "import cupy.cuda.nccl failed"; }
check "$SCRATCH/cupy2" cupy

echo "== cupy with the NCCL 2.18.3 wheel (above its minimum 2.16.5): preloaded"
copy_env cupy-13.6.0 "$SCRATCH/cupy-old"
swap_nccl "$SCRATCH/cupy-old" nccl-2.18.3
probe_alone "$SCRATCH/cupy3" PYTHONPATH="$SCRATCH/cupy-old"
jq_is "$SCRATCH/cupy3.json" '.ranks[0].cupy.nccl.version' 2.18.3
py_run "$SCRATCH/cupy3.import" "$CUPY" PYTHONPATH="$SCRATCH/cupy-old"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/cupy3.import.err"; fail "import cupy.cuda.nccl failed"; }
check "$SCRATCH/cupy3" cupy
echo "PASS"
