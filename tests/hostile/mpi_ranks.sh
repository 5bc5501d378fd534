#!/bin/bash
# A rank that stops responding (before MPI_Init, before or after it reported) and a rank that
# dies, under the real Open MPI mpirun.
#   mpi_ranks.sh CASE PROBE STANDINS_DIR SCRATCH_DIR
#   CASE: rank_stops | rank_stops_early | rank_dies | rank_stops_after_report
# Three ranks; ranks 0-1 probe normally with --timeout 6. Rank 2 is slow on purpose (an NCCL
# whose constructor hangs, and --timeout 120 so its own probe waits 10 s for it), and 3 s in,
# well after MPI_Init, it is frozen (SIGSTOP) or killed (SIGKILL).
#  rank_stops: rank 0 stops waiting at its deadline, reports rank 2 as rank-timeout and, since
#    rank 2 never answered, ends the job with MPI_Abort(1) after writing the report: mpirun
#    kills the frozen rank and exits 1, within --timeout + 2 s. Never 139 (mpirun crashing).
#  rank_stops_early: rank 2 is frozen 0.05 s in, before it reaches MPI_Init. MPI_Init waits for
#    every rank, so the others would wait in it forever; the probe's watchdog ends them at the
#    deadline with exit 1 and "MPI_Init did not return within --timeout", and mpirun ends the job.
#  rank_dies: what Open MPI 4.1's mpirun does, documented in tests/hostile/FAULTS.md: it notices
#    the dead rank at once, kills the remaining ranks (rank 0 too, before it can report) and
#    exits 137 (128 + SIGKILL) with "mpirun noticed that process rank 2 ... exited on signal 9
#    (Killed)". Nothing hangs; the job's exit code is non-zero, so a gate still refuses.
#  rank_stops_after_report: rank 1's probe hangs instead (so rank 0 waits to its deadline) and
#    rank 2, which reported at once, is frozen 3 s in while it waits for the verdict. Every rank
#    answered, but MPI_Finalize would wait for rank 2 forever (it did, under both MPIs): rank 2
#    never confirms the verdict, so rank 0 says so and ends the job with MPI_Abort(1), within
#    --timeout + 2 s + the 2 s it waits for confirmations.
# Exit 0 pass, 1 fail, 77 skipped.
set -u
case_name=$1 probe=$2 standins=$3 scratch=$4
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
W=$scratch/mpi_$case_name
rm -rf "$W"
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_rmaps_base_oversubscribe=1
T=6
BOUND=$((T + 2))
fail=0
bad() { echo "FAIL [$case_name]: $*"; fail=1; }

case "$case_name" in
  rank_stops) sig=STOP delay=3 ;;
  rank_stops_early) sig=STOP delay=0.05 ;;
  rank_dies) sig=KILL delay=3 ;;
  rank_stops_after_report) sig=STOP delay=3 BOUND=$((BOUND + 2)) ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
# Rank 2 is the one signalled; the ranks before it are normal, or for rank_stops_after_report
# rank 1 hangs in ncclGetVersion.
slow_lib=nccl-ctor-hang slow_timeout=120 first=(-np 2 "$probe" --timeout "$T" --json "$W/report.json")
if [ "$case_name" = rank_stops_after_report ]; then
  slow_lib="" slow_timeout=$T
  first=(-np 1 "$probe" --timeout "$T" --json "$W/report.json" :
         -np 1 -x LD_LIBRARY_PATH="$standins/nccl-getversion-hang" "$probe" --timeout 120)
fi

t0=$(date +%s%N)
# `exec` keeps the rank's pid, so the signal reaches the probe itself and mpirun sees it.
timeout -s KILL $((BOUND + 30)) mpirun "${first[@]}" : \
  -np 1 -x LD_LIBRARY_PATH="${slow_lib:+$standins/$slow_lib}" \
  sh -c "(sleep $delay; kill -$sig \$\$) & exec \"$probe\" --timeout $slow_timeout --json \"$W/report.json\"" \
  >"$W/out" 2>"$W/err"
rc=$?
t1=$(date +%s%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
echo "mpirun exit $rc after $secs s"
sed 's/^/  mpirun stderr: /' "$W/err" | grep -v '^  mpirun stderr: -*$' | head -12
awk -v s="$secs" -v b="$BOUND" 'BEGIN { exit !(s <= b) }' || bad "took $secs s, more than $BOUND s"

case "$case_name" in
  rank_stops)
    # Not checked: mpirun's own MPI_ABORT notice, which it sometimes loses ("ORTE_ERROR_LOG:
    # Data unpack would read past end of buffer ... show_help.c"); the exit code is the contract.
    [ "$rc" -eq 1 ] || bad "mpirun exit $rc, expected 1 (rank 0's MPI_Abort with the verdict)"
    [ -s "$W/report.json" ] || { bad "rank 0 wrote no report"; exit 1; }
    jq -e '.verdict == "reject"' "$W/report.json" >/dev/null || bad "verdict is not reject"
    jq -e 'any(.findings[]; .code == "rank-timeout" and .severity == "error" and .ranks == [2])' \
      "$W/report.json" >/dev/null || bad "no rank-timeout error blaming rank 2 alone"
    jq -e '.nranks == 3' "$W/report.json" >/dev/null || bad "nranks is not 3"
    echo "  $(jq -r '.findings[] | select(.code == "rank-timeout") | .message' "$W/report.json")"
    ;;
  rank_stops_after_report)
    [ "$rc" -eq 1 ] || bad "mpirun exit $rc, expected 1 (rank 0's MPI_Abort with the verdict)"
    grep -q "rank 0: 1 of 2 ranks did not confirm the verdict within 2.0 s (stopped?); ending the job with MPI_Abort(1)" "$W/err" ||
      bad "rank 0 does not say that a rank did not confirm the verdict"
    [ -s "$W/report.json" ] || { bad "rank 0 wrote no report"; exit 1; }
    jq -e '[.findings[] | select(.code == "rank-timeout") | .ranks] == [[1]]' "$W/report.json" \
      >/dev/null || bad "the report does not blame the hung rank 1 alone"
    ;;
  rank_stops_after_report)
    [ "$rc" -eq 1 ] || bad "mpirun exit $rc, expected 1 (rank 0's MPI_Abort with the verdict)"
    grep -q "rank 0: 1 of 2 ranks did not confirm the verdict within 2.0 s (stopped?); ending the job with MPI_Abort(1)" "$W/err" ||
      bad "rank 0 does not say that a rank did not confirm the verdict"
    [ -s "$W/report.json" ] || { bad "rank 0 wrote no report"; exit 1; }
    jq -e '[.findings[] | select(.code == "rank-timeout") | .ranks] == [[1]]' "$W/report.json" \
      >/dev/null || bad "the report does not blame the hung rank 1 alone"
    ;;
  rank_stops_early)
    [ "$rc" -eq 1 ] || bad "mpirun exit $rc, expected 1"
    grep -q "MPI_Init did not return within --timeout" "$W/err" ||
      bad "stderr does not say that MPI_Init did not return"
    ;;
  rank_dies)
    [ "$rc" -ne 0 ] || bad "mpirun exit 0 although a rank died"
    [ "$rc" -eq 137 ] || echo "  (mpirun exit $rc, Open MPI 4.1.4 gives 137 = 128 + SIGKILL)"
    grep -q "exited on signal 9" "$W/err" || bad "mpirun does not say that rank 2 exited on signal 9"
    ;;
esac
# Nothing may be left behind: a frozen rank that outlived mpirun would hold the node.
sleep 0.5
left=$(pgrep -f -- "--json $W/report.json")
if [ -n "$left" ]; then
  bad "probe process(es) left running: $left"
  for p in $left; do kill -KILL "$p" 2>/dev/null; done  # only the ones this test started
fi
[ $fail -eq 0 ] && echo "PASS [$case_name]"
exit $fail
