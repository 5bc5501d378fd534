#!/usr/bin/env bash
# Alone on one process: the real NCCL, the real CUDA stub, PyTorch stand-ins.
# usage: single_rank.sh PROBE STANDINS SCRATCH_BASE
PROBE=$1 STANDINS=$2
source "$(dirname "$0")/lib.sh"
new_scratch "$3"
[ -n "$REAL_NCCL" ] && [ -r "$REAL_NCCL" ] || skip "no libnccl.so.2 in the loader cache (ldconfig -p)"

echo "== this machine: real NCCL 2.28.9 from the loader cache, no driver"
run_probe 0 "$SCRATCH/plain.json" PATH=/usr/bin:/bin
jq_is "$SCRATCH/plain.json" '.ranks[0].nccl | [.status,.path,.version,.version_code,.cuda_build,.method] | join(" ")' \
  "ok $REAL_NCCL 2.28.9 22809 13.0 dlopen"
jq_is "$SCRATCH/plain.json" '.ranks[0].cuda_driver.status' missing
jq_is "$SCRATCH/plain.json" '[.findings[] | "\(.code)/\(.severity)"] | join(",")' "cuda-driver-missing/warning"
jq_is "$SCRATCH/plain.json" '.verdict' pass
lines=$(wc -l <"$SCRATCH/plain.json.txt")
[ "$lines" -le 15 ] || fail "human report is $lines lines; keep it short"
grep -q "PASS" "$SCRATCH/plain.json.txt" || fail "no PASS line in the human report"
grep -q "2.28.9" "$SCRATCH/plain.json.txt" || fail "human report does not name the NCCL version"

echo "== --require-gpu makes the missing driver an error"
rc=0; PATH=/usr/bin:/bin "$PROBE" --require-gpu -q || rc=$?
[ "$rc" = 1 ] || fail "--require-gpu without a driver: exit $rc, expected 1"

echo "== the toolkit's stub first on LD_LIBRARY_PATH: cuda-driver-stub, exit 1"
if [ -r "$CUDA_STUB" ]; then
  mkdir -p "$SCRATCH/stub"
  ln -sf "$CUDA_STUB" "$SCRATCH/stub/libcuda.so.1"
  run_probe 1 "$SCRATCH/stub.json" PATH=/usr/bin:/bin LD_LIBRARY_PATH="$SCRATCH/stub"
  jq_is "$SCRATCH/stub.json" '.ranks[0].cuda_driver.status' stub
  jq_is "$SCRATCH/stub.json" '[.findings[] | select(.code=="cuda-driver-stub") | .severity] | join(",")' error
  jq_is "$SCRATCH/stub.json" '.verdict' reject
else
  echo "(no CUDA stub at $CUDA_STUB: stub case not run)"
fi

echo "== a driver stand-in reporting CUDA 12.4 under NCCL built for 13.0: cuda-driver-too-old"
run_probe 1 "$SCRATCH/old.json" PATH=/usr/bin:/bin LD_LIBRARY_PATH="$STANDINS/cuda-550.54.15"
jq_is "$SCRATCH/old.json" '.ranks[0].cuda_driver | "\(.status) \(.cuda_version) \(.library_version)"' "ok 12.4 550.54.15"
jq_is "$SCRATCH/old.json" '[.findings[].code] | join(",")' "cuda-driver-too-old"

echo "== PyTorch whose wheel bundles NCCL 2.21.5 beside the system 2.28.9"
site=$(make_torch_env "$SCRATCH/venv" 2.5.1+cu124 torch-dyn nccl-2.21.5)
run_probe 0 "$SCRATCH/torch.json" PATH=/usr/bin:/bin VIRTUAL_ENV="$SCRATCH/venv" LD_LIBRARY_PATH="$STANDINS/cuda-550.54.15"
jq_is "$SCRATCH/torch.json" '.ranks[0].torch.nccl | "\(.version) \(.linkage) \(.path)"' \
  "2.21.5 wheel $site/nvidia/nccl/lib/libnccl.so.2"
jq_is "$SCRATCH/torch.json" '.ranks[0].nccl | "\(.version) \(.status) \(.method)"' "2.21.5 ok dlopen"
jq_is "$SCRATCH/torch.json" '.ranks[0].torch.version' 2.5.1+cu124
jq_is "$SCRATCH/torch.json" '[.findings[] | select(.code=="torch-nccl-mismatch") | .severity] | join(",")' warning
msg=$(jq -r '.findings[] | select(.code=="torch-nccl-mismatch") | .message' "$SCRATCH/torch.json")
for want in 2.21.5 2.28.9 "$site/nvidia/nccl/lib/libnccl.so.2" "$REAL_NCCL"; do
  case "$msg" in *"$want"*) ;; *) fail "torch-nccl-mismatch message does not name $want: $msg" ;; esac
done

echo "== PyTorch importing ncclCommRegister beside a wheel NCCL without it: nccl-abi-mismatch"
make_torch_env "$SCRATCH/venv2" 2.5.1+cu124 torch-dyn-reg nccl-2.21.5 >/dev/null
run_probe 1 "$SCRATCH/abi.json" PATH=/usr/bin:/bin VIRTUAL_ENV="$SCRATCH/venv2" LD_LIBRARY_PATH="$STANDINS/cuda-550.54.15"
jq_is "$SCRATCH/abi.json" '[.findings[] | select(.code=="nccl-abi-mismatch") | .severity] | join(",")' error
jq -r '.findings[] | select(.code=="nccl-abi-mismatch") | .message' "$SCRATCH/abi.json" | grep -q ncclCommRegister \
  || fail "nccl-abi-mismatch does not name ncclCommRegister"

echo "== bad usage and bad inputs: exit 2, one line naming the problem"
rc=0; "$PROBE" --no-such-option >/dev/null 2>"$SCRATCH/usage.err" || rc=$?
[ "$rc" = 2 ] || fail "unknown option: exit $rc"
grep -q -- "--no-such-option" "$SCRATCH/usage.err" || fail "usage error does not name the option"
rc=0; "$PROBE" --baseline "$SCRATCH/none.json" >/dev/null 2>"$SCRATCH/bl.err" || rc=$?
[ "$rc" = 2 ] || fail "missing baseline: exit $rc"
grep -q "none.json" "$SCRATCH/bl.err" || fail "missing baseline error does not name the file"
rc=0; "$PROBE" --timeout abc >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "bad --timeout: exit $rc"

echo "== --rank-report expands %r and %h"
"$PROBE" -q --rank-report "$SCRATCH/rec-%r-%h.json" || true
ls "$SCRATCH"/rec-0-"$(hostname)".json >/dev/null || fail "--rank-report did not write rec-0-<host>.json"
jq_is "$SCRATCH/rec-0-$(hostname).json" '.nccl.version' 2.28.9
echo "== tasks of a Slurm step without MPI: one record per task (%r = SLURM_PROCID), then compare"
mkdir -p "$SCRATCH/tasks"
for t in 0 1 2; do
  rc=0
  env SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_PROCID=$t SLURM_STEP_NUM_TASKS=3 \
    "$PROBE" -q --rank-report "$SCRATCH/tasks/%h-%r.json" || rc=$?
  [ "$rc" = 0 ] || fail "task $t: exit $rc"
  jq_is "$SCRATCH/tasks/$(hostname)-$t.json" .rank "$t"
done
rc=0; "$PROBE" compare "$SCRATCH/tasks/" --json "$SCRATCH/tasks.json" >/dev/null || rc=$?
[ "$rc" = 0 ] || fail "compare of the task records: exit $rc"
jq_is "$SCRATCH/tasks.json" '"\(.nranks) \(.configurations[0].ranks | join(","))"' "3 0,1,2"
echo PASS
