#!/usr/bin/env bash
# A real failure log for `denpex-probe diagnose`, made now: tests/real/gloo_job.py run by the real
# torchrun of the real PyTorch 2.7.1 wheel on the CPU (gloo), 3 ranks, failing one known way.
# The log is the job's console output as a user has it (torchrun's and every rank's stdout and
# stderr). The test checks that the job failed the way it was made to (the generator's own
# check), then that diagnose names the rank that started it.
# usage: diagnose_case.sh PROBE SCRATCH_BASE CASE
#   detail-mismatch (rank 2), size-mismatch (rank 1), raise-first (rank 1, torchrun's
#   ChildFailedError), sigkill (rank 2), monitored-barrier (rank 1)
source "$(dirname "$0")/lib.sh"
CASE=$3
real_setup "$1" "$2/$CASE"
E=$ENVS/torch-2.7.1
case $CASE in
  detail-mismatch) want=2 debug=DETAIL sign="Detected mismatch between collectives" ;;
  size-mismatch) want=1 debug=DETAIL sign="Detected mismatch between collectives" ;;
  raise-first) want=1 debug=OFF sign="ValueError: bad batch at step 3" ;;
  sigkill) want=2 debug=OFF sign="Signal 9 (SIGKILL)" ;;
  monitored-barrier) want=1 debug=OFF sign="Rank 1 failed to pass monitoredBarrier" ;;
  *) fail "unknown case $CASE" ;;
esac
LOG=$SCRATCH/$CASE.log
mkdir -p "$SCRATCH/tmp"
rc=0
# --standalone: a rendezvous on a free local port; TMPDIR keeps torchelastic's error files here.
env -i PATH="$TEST_PATH" HOME="$SCRATCH/home" TMPDIR="$SCRATCH/tmp" PYTHONPATH="$E" \
  OMP_NUM_THREADS=1 TORCH_DISTRIBUTED_DEBUG=$debug \
  timeout -k 10 180 "$E/bin/torchrun" --standalone --nproc-per-node 3 \
  "$REAL_DIR/gloo_job.py" "$CASE" >"$LOG" 2>&1 || rc=$?
[ "$rc" != 0 ] || { cat "$LOG"; fail "the $CASE job succeeded"; }
[ "$rc" != 124 ] || { cat "$LOG"; fail "the $CASE job hung (timeout)"; }
grep -qF "$sign" "$LOG" || { cat "$LOG"; fail "the $CASE log lacks '$sign': the job did not fail as made to"; }
grep -q "ChildFailedError" "$LOG" || { cat "$LOG"; fail "torchrun printed no ChildFailedError summary"; }
echo "== $CASE: real PyTorch $(grep -o '2\.7\.1' "$E/torch/version.py" | head -1) wrote $(wc -l <"$LOG") lines (torchrun exit $rc); torchrun's root cause:"
sed -n '/Root Cause (first observed failure)/,/^  error_file/p' "$LOG" | grep -E "rank|exitcode" | sed 's/^/  /'

drc=0
timeout 60 "$PROBE" diagnose "$LOG" --json "$SCRATCH/diagnosis.json" >"$SCRATCH/diagnosis.txt" 2>&1 || drc=$?
sed -n '1,4p' "$SCRATCH/diagnosis.txt"
[ -s "$SCRATCH/diagnosis.json" ] || { cat "$SCRATCH/diagnosis.txt"; fail "diagnose wrote no JSON (exit $drc)"; }
got=$(jq -r '.diagnosis.initiating.ranks // [] | join(",")' "$SCRATCH/diagnosis.json")
[ "$got" = "$want" ] || {
  cat "$SCRATCH/diagnosis.txt"
  fail "$CASE: diagnose names initiating rank(s) '$got' (exit $drc), the log's initiating rank is $want"
}
[ "$drc" = 1 ] || fail "$CASE: diagnose exit $drc, expected 1 (an initiating failure is an error)"
echo "PASS: diagnose names rank $want"
