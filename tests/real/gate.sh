#!/usr/bin/env bash
# The gate on real libraries under the real Open MPI mpirun: ranks given different real NCCL
# wheels and real PyTorch environments by MPMD, every NCCL/CUDA-build/ABI finding of the gate
# from real files. The probe's NCCL versions are checked against the libraries themselves: the
# version literal read with grep, and ncclGetVersion called by the real Python through ctypes on
# this machine without a GPU.
# usage: gate.sh PROBE SCRATCH_BASE
source "$(dirname "$0")/lib.sh"
real_setup "$1" "$2"
command -v mpirun >/dev/null || skip "mpirun not installed (Open MPI: openmpi-bin)"

A=$(nccl_lib nccl-2.21.5) B=$(nccl_lib nccl-2.27.7) B13=$(nccl_lib nccl-cu13-2.27.7)
# -x PATH -x HOME: the ranks see the test's Python and no user site, as probe_alone does.
export PATH="$TEST_PATH:$PATH" HOME=$SCRATCH/home
X="-x PATH -x HOME"

echo "== ncclGetVersion of the real wheels, called without a GPU"
getversion() {
  "$PY" -c 'import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int(0)
rc = lib.ncclGetVersion(ctypes.byref(v))
print(v.value if rc == 0 else "rc=%d" % rc)' "$1"
}
literal() { grep -a -o -m1 'NCCL version [0-9][0-9.]*+cuda[0-9.]*' "$1" | head -1 | sed 's/^NCCL version //'; }
for lib in "$A" "$B" "$B13"; do
  echo "  $lib: ncclGetVersion $(getversion "$lib"), literal $(literal "$lib")"
done
[ "$(getversion "$A")" = 22105 ] || fail "ncclGetVersion of $A: $(getversion "$A"), expected 22105"
[ "$(getversion "$B")" = 22707 ] || fail "ncclGetVersion of $B: $(getversion "$B")"
[ "$(getversion "$B13")" = 22707 ] || fail "ncclGetVersion of $B13: $(getversion "$B13")"

echo "== 2 ranks on the real NCCL 2.21.5 wheel, rank 2 on 2.27.7: nccl-version-mismatch blames rank 2"
J=$SCRATCH/versions.json
real_mpirun "$SCRATCH/versions" 1 -np 2 $X -x LD_LIBRARY_PATH="$(dirname "$A")" "$PROBE" --json "$J" : \
  -np 1 $X -x LD_LIBRARY_PATH="$(dirname "$B")" "$PROBE" --json "$J"
jq_is "$J" '[.findings[] | select(.code=="nccl-version-mismatch") | "\(.severity) \(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "error 2 2.21.5 2.27.7"
# Each rank's record against the library it was given: live ncclGetVersion (method dlopen),
# the code the real call returns, the literal in the file.
for r in 0 2; do
  lib=$A; [ "$r" = 2 ] && lib=$B
  jq_is "$J" "(.configurations[] | select(.ranks|index($r)) | .record) | .nccl | \"\(.status) \(.method) \(.path)\"" "ok dlopen $lib"
  jq_is "$J" "(.configurations[] | select(.ranks|index($r)) | .record) | .nccl.version_code" "$(getversion "$lib")"
  jq_is "$J" "(.configurations[] | select(.ranks|index($r)) | .record) | .nccl | \"\(.static_version)+cuda\(.cuda_build)\"" "$(literal "$lib")"
done

echo "== NCCL 2.27.7 for CUDA 12 on 2 ranks, for CUDA 13 on rank 2: nccl-build-mismatch only"
J=$SCRATCH/build.json
real_mpirun "$SCRATCH/build" 0 -np 2 $X -x LD_LIBRARY_PATH="$(dirname "$B")" "$PROBE" --json "$J" : \
  -np 1 $X -x LD_LIBRARY_PATH="$(dirname "$B13")" "$PROBE" --json "$J"
jq_is "$J" '[.findings[] | select(.code=="nccl-build-mismatch") | "\(.severity) \(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "warning 2 12.9 13.0"
jq_is "$J" '[.findings[] | select(.code=="nccl-version-mismatch")] | length' 0

echo "== real PyTorch 2.7.1 on 2 ranks, 2.3.1 on rank 2: torch-version-mismatch and PyTorch's NCCLs (2.26.2 vs 2.20.5)"
J=$SCRATCH/torch.json
real_mpirun "$SCRATCH/torch" 1 -np 2 $X -x PYTHONPATH="$ENVS/torch-2.7.1" "$PROBE" --json "$J" : \
  -np 1 $X -x PYTHONPATH="$ENVS/torch-2.3.1" "$PROBE" --json "$J"
jq_is "$J" '[.findings[] | select(.code=="torch-version-mismatch") | "\(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "2 2.7.1+cu126 2.3.1+cu121"
jq_is "$J" '[.findings[] | select(.code=="nccl-version-mismatch") | "\(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "2 2.26.2 2.20.5"
# PyTorch's wheel NCCL against the system's (the CUDA toolkit's, in the loader cache): a warning
# on every rank, since no rank runs PyTorch with it.
if [ -n "$REAL_NCCL" ]; then
  jq_is "$J" "$(printf '[.findings[] | select(.code=="torch-nccl-mismatch") | .severity] | unique | join(",")')" warning
fi
jq_is "$J" '(.configurations[] | select(.ranks|index(2)) | .record) | .torch.nccl | "\(.linkage) \(.version)"' "wheel 2.20.5"

echo "== rank 1's PyTorch 2.3.1 has the NCCL 2.18.3 wheel: nccl-abi-mismatch names ncclCommRegister"
copy_env torch-2.3.1 "$SCRATCH/t231-n2183"
swap_nccl "$SCRATCH/t231-n2183" nccl-2.18.3
J=$SCRATCH/abi.json
real_mpirun "$SCRATCH/abi" 1 -np 1 $X -x PYTHONPATH="$ENVS/torch-2.3.1" "$PROBE" --json "$J" : \
  -np 1 $X -x PYTHONPATH="$SCRATCH/t231-n2183" "$PROBE" --json "$J" : \
  -np 1 $X -x PYTHONPATH="$ENVS/torch-2.3.1" "$PROBE" --json "$J"
jq_is "$J" "$(printf '%s' '[.findings[] | select(.code=="nccl-abi-mismatch") | "\(.severity) \(.ranks|join(","))"] | join(";")')" "error 1"
jq -r '.findings[] | select(.code=="nccl-abi-mismatch") | .message' "$J" | grep -q "ncclCommRegister" ||
  fail "nccl-abi-mismatch does not name ncclCommRegister"
jq_is "$J" '[.findings[] | select(.code=="torch-nccl-pin-mismatch") | "\(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "1 nvidia-nccl-cu12==2.20.5 nvidia-nccl-cu12 2.18.3"
jq_is "$J" '[.findings[] | select(.code=="nccl-version-mismatch") | "\(.ranks|join(",")) \(.found)"] | join(";")' "1 2.18.3"

echo "== the system NCCL preloaded into PyTorch 2.3.1: torch-nccl-mismatch is an error"
if [ -n "$REAL_NCCL" ]; then
  probe_alone "$SCRATCH/preload" PYTHONPATH="$ENVS/torch-2.3.1" LD_PRELOAD="$REAL_NCCL"
  [ "$PROBE_RC" = 1 ] || fail "exit $PROBE_RC with the system NCCL preloaded"
  jq_is "$SCRATCH/preload.json" "$(printf '%s' '[.findings[] | select(.code=="torch-nccl-mismatch") | .severity] | join(",")')" error
else
  echo "(no NCCL in the loader cache: the system-NCCL case is left out)"
fi

echo "== a real wheel's libnccl.so.2 cut short: nccl-unloadable, the loader's reason"
mkdir -p "$SCRATCH/cut"
head -c 1048576 "$A" >"$SCRATCH/cut/libnccl.so.2"
probe_alone "$SCRATCH/cut" LD_LIBRARY_PATH="$SCRATCH/cut"
[ "$PROBE_RC" = 1 ] || fail "exit $PROBE_RC for a truncated NCCL"
jq_is "$SCRATCH/cut.json" "$(printf '%s' '[.findings[] | select(.code=="nccl-unloadable") | .severity] | join(",")')" error
echo "PASS"
