#!/usr/bin/env bash
# No silent singletons: a process whose environment announces a world larger than 1, by any
# launcher's variables, never passes alone. Without --rank-report it exits 2 with one line that
# names the variable and says how to gather; with --rank-report DIR/%j-%r.json it writes its own
# record under the launcher's rank and never judges the job. Rank 0 of a world of one passes.
#   run_singletons.sh DENPEX_PROBE WORKDIR
set -u
probe=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail=0
no() { echo "FAIL: $*"; fail=1; }
# env -i: nothing of the test runner's own launcher (a ctest under srun or mpirun) leaks in.
# A clean environment but for the sanitizer's settings (tests/sanitize.sh): without its
# suppressions, Open MPI's allocations kept until exit turn the exit code into LeakSanitizer's.
run() {
  env -i PATH="$PATH" HOME="$work" ${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
    ${LSAN_OPTIONS:+LSAN_OPTIONS="$LSAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
    ${OMPI_MCA_mca_base_component_disable_dlclose:+OMPI_MCA_mca_base_component_disable_dlclose=1} \
    "$@" "$probe" --timeout 20 "${ARGS[@]}" >"$work/out" 2>"$work/err"
}

ARGS=()
while read -r evidence vars; do
  [ -n "$evidence" ] || continue
  # shellcheck disable=SC2086
  run $vars; rc=$?
  before=$fail
  [ $rc -eq 2 ] || { no "$vars: exit $rc, not 2: $(head -3 "$work/out")"; continue; }
  [ "$(wc -l <"$work/err")" -eq 1 ] || no "$vars: $(wc -l <"$work/err") lines on stderr"
  grep -qF -- "${evidence//+/ }" "$work/err" || no "$vars: the line does not name $evidence: $(cat "$work/err")"
  grep -q "exiting 2" "$work/err" || no "$vars: the line does not say it exits 2"
  grep -q "rank-report\|srun --mpi=pmix" "$work/err" || no "$vars: the line does not say how to gather"
  grep -q "PASS" "$work/out" && no "$vars: a PASS was printed"
  [ $fail = "$before" ] && echo "ok: $vars -> exit 2 naming $evidence"
done <<'CASES'
WORLD_SIZE=16 RANK=1 WORLD_SIZE=16 TORCHELASTIC_RUN_ID=abc
MV2_COMM_WORLD_SIZE=2 MV2_COMM_WORLD_SIZE=2 MV2_COMM_WORLD_RANK=1
Slurm+task+1+of+4 SLURM_STEP_NUM_TASKS=4 SLURM_PROCID=1 SLURM_JOB_ID=7 SLURM_STEP_ID=0
FLUX_JOB_SIZE=4 FLUX_JOB_SIZE=4 FLUX_TASK_RANK=1
JSM_NAMESPACE_SIZE=4 JSM_NAMESPACE_SIZE=4 JSM_NAMESPACE_RANK=0
HOROVOD_SIZE=4 HOROVOD_SIZE=4 HOROVOD_RANK=3
LOCAL_WORLD_SIZE=8 LOCAL_WORLD_SIZE=8 LOCAL_RANK=0
PALS_RANKID=1 PALS_RANKID=1
ALPS_APP_PE=5 ALPS_APP_PE=5
OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=1
PMI_SIZE=4 PMI_SIZE=4 PMI_RANK=2
PMIX_RANK=1 PMIX_RANK=1 PMIX_NAMESPACE=denpex-test
CASES

# With --rank-report the record is written under the launcher's rank, and the job is not judged.
ARGS=(--rank-report "$work/r/%j-%r.json")
mkdir -p "$work/r"
run FLUX_JOB_SIZE=4 FLUX_TASK_RANK=3 FLUX_JOB_ID=f77; rc=$?
[ $rc -eq 0 ] || no "FLUX --rank-report: exit $rc: $(cat "$work/err")"
ls "$work/r" | grep -q -- "-3.json$" || no "FLUX --rank-report: no file for rank 3: $(ls "$work/r")"
run PALS_RANKID=2; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 2 ] || no "PALS --rank-report: exit $rc"
# A world of one may pass alone.
ARGS=()
run RANK=0 WORLD_SIZE=1; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || no "WORLD_SIZE=1: exit $rc: $(cat "$work/err")"
run PMIX_RANK=0 PMIX_NAMESPACE=denpex-test; rc=$?
grep -q "would judge itself alone" "$work/err" && no "PMIX_RANK=0 alone was refused"
[ $fail -eq 0 ] && echo PASS
exit $fail
