# Shared helpers for the end-to-end tests: run the real denpex-probe (alone or under the real
# Open MPI mpirun) and assert on its JSON report with jq. Sourced by each test script.
#   PROBE      the denpex-probe binary
#   STANDINS   the stand-in library directory (tests/standins)
#   SCRATCH    a per-test directory under the build tree (trusted as root, unlike /tmp)
set -euo pipefail

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no InfiniBand probing noise on a machine without it.
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_rmaps_base_oversubscribe=1

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# The real NCCL found the way users' programs find it (the loader cache), and the toolkit's stub
# where nvcc's toolkit keeps it; "" / a missing file when absent.
REAL_NCCL=$({ /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } |
  sed -n 's/^[[:space:]]*libnccl\.so\.2 (.*) => //p' | head -1)
# The file ld.so maps for it, which the probe reports: NVIDIA's packages (and Debian-layout arm64
# nodes) install libnccl.so.2 as a symlink to libnccl.so.2.X.Y.
[ -z "$REAL_NCCL" ] || REAL_NCCL=$(readlink -f "$REAL_NCCL")
CUDA_STUB=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so

new_scratch() {
  mkdir -p "$1"
  SCRATCH="$(cd "$1" && pwd)/$(basename "$0" .sh)"
  rm -rf "$SCRATCH"
  mkdir -p "$SCRATCH"
  chmod 755 "$SCRATCH"
}

# jq_is FILE FILTER EXPECTED: the filter's raw output must equal EXPECTED.
jq_is() {
  local got
  got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
  [ "$got" = "$3" ] || { echo "--- $1:" >&2; head -c 4000 "$1" >&2; fail "$2: expected '$3', got '$got'"; }
}

# run_probe EXPECTED_EXIT JSON_OUT [env/args...]: runs `env ... denpex-probe --json OUT`.
run_probe() {
  local want=$1 out=$2; shift 2
  local rc=0
  env "$@" "$PROBE" --json "$out" >"$out.txt" 2>"$out.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out.txt" "$out.err" >&2; fail "exit $rc, expected $want"; }
}

# A PyTorch-like site-packages: torch $2 whose libtorch_cuda.so is stand-in $3, and the
# nvidia-nccl wheel stand-in $4 ("" for none). Prints the site-packages path.
make_torch_env() {
  local root=$1 version=$2 torch=$3 wheel=$4
  local site=$root/lib/python3.11/site-packages
  mkdir -p "$site/torch/lib"
  printf "__version__ = '%s'\ncuda: Optional[str] = '12.4'\n" "$version" >"$site/torch/version.py"
  cp "$STANDINS/$torch/libtorch_cuda.so" "$site/torch/lib/"
  if [ -n "$wheel" ]; then
    mkdir -p "$site/nvidia/nccl/lib"
    cp "$STANDINS/$wheel/libnccl.so.${wheel#nccl-}" "$site/nvidia/nccl/lib/libnccl.so.2"
  fi
  echo "$site"
}
