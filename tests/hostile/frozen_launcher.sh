#!/bin/bash
# The report against a launcher that is not reading: under MPICH's mpiexec.hydra (whose mpiexec
# stops forwarding output once an abort reaches it) and Open MPI's mpirun, rank 3 is frozen
# before it reports, so rank 0 ends the job with MPI_Abort after its report; the process that
# reads the ranks' output (hydra's proxy, mpirun itself) is frozen too, from before rank 0
# prints until after it would have aborted.
#
#   frozen_launcher.sh PROBE STANDINS_DIR SCRATCH [--runs N]
#
#   short   the launcher is frozen for 1.2 s, less than rank 0's wait for its output to be read
#           (collect/forwarded_output.h): rank 0 waits for the read, then aborts. The report
#           reaches stdout, exit 1, and rank 0 never says the launcher had not read it (the
#           line it prints when it aborts with output still in its pipe: without the wait, every
#           run here prints it).
#   long    frozen for 4 s, longer than that wait: rank 0 aborts anyway, says so on stderr when
#           it gets there, and the job still ends with 1, without hanging. The report may be
#           lost: that is what the wait cannot help.
# Exit 0 pass, 1 fail, 77 skipped (a launcher missing).
set -u
probe=$1 standins=$2 scratch=$3
runs=3
[ "${4:-}" = --runs ] && runs=$5
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed (tools/install-deps.sh)"; exit 77; }
command -v mpiexec.hydra >/dev/null || { echo "SKIP: mpiexec.hydra not installed (tools/install-deps.sh)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_rmaps_base_oversubscribe=1
W=$scratch/frozen_launcher
rm -rf "$W"
mkdir -p "$W"
T=5          # ranks 0-2's --timeout: rank 0 reports 4 s after it started
FREEZE_AT=3.5
NOT_READ='the launcher had not read this rank'
failures=0

# run_once LAUNCHER FREEZE_SECONDS DIR: sets rc, secs, and problem (empty when a launcher
# process was found and frozen).
run_once() {
  local launcher=$1 freeze=$2 d=$3 job frozen t0 cmd
  cmd="(sleep 2.5; kill -STOP \$\$) & exec '$probe' --timeout 300 --json '$d/report.json'"
  t0=$(date +%s%N)
  if [ "$launcher" = hydra ]; then
    timeout -k 5 40 mpiexec.hydra -n 3 "$probe" --timeout "$T" --color never --json "$d/report.json" : \
      -n 1 -env LD_LIBRARY_PATH "$standins/nccl-ctor-hang" sh -c "$cmd" >"$d/out" 2>"$d/err" &
  else
    timeout -k 5 40 mpirun -np 3 "$probe" --timeout "$T" --color never --json "$d/report.json" : \
      -np 1 -x LD_LIBRARY_PATH="$standins/nccl-ctor-hang" sh -c "$cmd" >"$d/out" 2>"$d/err" &
  fi
  job=$!
  sleep "$FREEZE_AT"
  # The reader of the ranks' pipes: hydra's proxy, or mpirun (a child of timeout) on one node.
  if [ "$launcher" = hydra ]; then
    frozen=$(pgrep -x hydra_pmi_proxy -P "$(pgrep -x mpiexec.hydra -P "$job")")
  else
    frozen=$(pgrep -x mpirun -P "$job")
  fi
  [ -n "$frozen" ] && kill -STOP $frozen
  sleep "$freeze"
  [ -n "$frozen" ] && kill -CONT $frozen
  wait "$job"
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  problem=""
  [ -n "$frozen" ] || problem="no launcher process to freeze was found"
}

for ((i = 1; i <= runs; i++)); do
  for launcher in hydra mpirun; do
    for c in short long; do
      d=$W/$launcher-$c-$i
      mkdir -p "$d"
      freeze=1.2
      [ "$c" = long ] && freeze=4
      run_once "$launcher" "$freeze" "$d"
      if [ -z "$problem" ]; then
        if [ "$rc" != 1 ]; then
          problem="exit $rc, expected 1"
        elif [ "$c" = short ] && ! grep -q '^denpex-probe: REJECT' "$d/out"; then
          problem="no report on stdout"
        elif [ "$c" = short ] && grep -q "$NOT_READ" "$d/err"; then
          problem="rank 0 aborted before the launcher had read its output"
        elif ! jq -e '.verdict == "reject" and .nranks == 4' "$d/report.json" >/dev/null 2>&1; then
          problem="the JSON report is not a 4-rank reject"
        fi
      fi
      pkill -KILL -f -- "$d/report.json" 2>/dev/null
      if [ -n "$problem" ]; then
        failures=$((failures + 1))
        echo "FAIL run $i $launcher $c: $problem (exit $rc after $secs s; kept in $d)"
        sed 's/^/    stderr: /' "$d/err" | grep -v -- '-----' | head -6
      else
        note=""
        [ "$c" = long ] && grep -q "$NOT_READ" "$d/err" && note=" (rank 0 said the launcher had not read its output)"
        echo "ok   run $i $launcher $c: exit 1 after $secs s$note"
        rm -rf "$d"
      fi
    done
  done
done
if [ "$failures" -gt 0 ]; then
  echo "FAIL: $failures run(s) (above)"
  exit 1
fi
echo PASS
