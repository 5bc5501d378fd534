#!/bin/sh
# Integration test: nccl_loop under `mpirun -np 4` with libdenpex-trace.so preloaded against the
# real NCCL; rank 2 diverges at step 5 per VARIANT; the analyser must name rank 2, step 5 and both
# calls. usage: run_mpi_divergence.sh TRACE_LIB NCCL_LOOP DRIVER VARIANT  (exit 77 = skipped)
set -u
lib=$1 loop=$2 driver=$3 variant=$4  # DRIVER: the denpex-probe binary
k=5
command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
"$loop" check 0 || { echo "SKIP: libnccl.so.2 not loadable"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/traces"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout -k 10 120 mpirun -np 4 --oversubscribe -x LD_PRELOAD="$lib" -x DENPEX_TRACE_DIR="$dir/traces" \
  "$loop" "$variant" "$k" >"$dir/mpirun.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: mpirun exited $rc"; tail -20 "$dir/mpirun.log"; exit 1; fi
n=$(ls "$dir/traces" | wc -l)
[ "$n" -eq 4 ] || { echo "FAIL: expected 4 trace files, got $n"; exit 1; }

timeout 60 "$driver" collectives "$dir/traces" --json "$dir/report.json" >"$dir/human.txt" 2>"$dir/err.txt"
rc=$?
cat "$dir/human.txt" "$dir/err.txt"
fail=0
check() {  # check DESCRIPTION JQ-EXPRESSION
  if ! jq -e "$2" "$dir/report.json" >/dev/null; then echo "FAIL: $1 ($2)"; fail=1; fi
}
contains() {
  if ! grep -qF -- "$1" "$dir/human.txt"; then echo "FAIL: human report lacks: $1"; fail=1; fi
}
check "4 ranks" '.nranks == 4'
expected='Broadcast(count=256, float32, root=0)'
case "$variant" in
  none)
    [ $rc -eq 0 ] || { echo "FAIL: exit $rc, expected 0"; fail=1; }
    check "no findings" '.findings == [] and .verdict == "pass"'
    ;;
  count) code=collective-args-mismatch found='Broadcast(count=257, float32, root=0)' ;;
  root) code=collective-args-mismatch found='Broadcast(count=256, float32, root=1)' ;;
  type) code=collective-mismatch found='AllReduce(count=256, float32, sum)' ;;
  stop) code=collective-missing found='none' ;;
  *) echo "unknown variant $variant"; exit 2 ;;
esac
if [ "$variant" != none ]; then
  [ $rc -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; fail=1; }
  check "one finding" '.verdict == "reject" and (.findings | length) == 1'
  check "code" ".findings[0].code == \"$code\""
  check "rank 2" '.findings[0].ranks == [2]'
  check "step 5" ".findings[0].seq == $k"
  check "found" ".findings[0].found == \"$found\""
  check "expected" ".findings[0].expected == \"$expected\""
  contains "rank 2"
  contains "step $k"
  contains "$found"
  contains "$expected"
fi
[ $fail -eq 0 ] && echo PASS
exit $fail
