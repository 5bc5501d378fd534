#!/bin/sh
# run_catch.sh NEED BINARY: runs the Catch2 cases of BINARY tagged [NEED] (what a machine may
# lack: real-nccl, cuda-stub, root, ptrace), with -w NoAssertions like every Catch2 run. When this machine
# lacks NEED it prints why and exits 77, which CTest counts as skipped (tools/test.sh lists it,
# and fails under CI=true). The checks are the ones users' tools make: the loader cache for
# NCCL, $CUDA_HOME or /usr/local/cuda for the toolkit's stub.
need=$1 bin=$2
skip() { echo "SKIP: $*"; exit 77; }
case "$need" in
  real-nccl)
    { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libnccl\.so\.2 (' ||
      skip "no libnccl.so.2 in the loader cache (ldconfig -p): install NCCL to run these cases" ;;
  cuda-stub)
    [ -r "${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so" ] ||
      skip "no CUDA toolkit stub at ${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so" ;;
  root)
    [ "$(id -u)" = 0 ] || skip "these cases check what the probe refuses to load as root: run as root" ;;
  ptrace)
    # Nothing to check from a shell: a case refused ptrace says so and, asserting nothing, fails.
    # Separate so that a machine without ptrace (qemu-user, .ci/aarch64.sh) can leave it out.
    ;;
  *) echo "run_catch.sh: unknown need '$need'" >&2; exit 2 ;;
esac
# A tag that matches no case is a mistake in the test list, not a pass.
"$bin" --list-test-names-only "[$need]" | grep -q . || { echo "run_catch.sh: no case tagged [$need] in $bin" >&2; exit 1; }
exec "$bin" -w NoAssertions "[$need]"
