#!/usr/bin/env bash
# The crash-safe recorder, one scenario per CTest test.
#
# usage: run_recorder.sh CASE standin NCCL_DIR TRACE_LIB DRIVER DUMP PROBE   (exit 77 = skipped)
#        run_recorder.sh CASE real BLOCKER TRACE_LIB DRIVER DUMP PROBE
#   standin: NCCL_DIR holds the stand-in libnccl.so.2 whose N-th call blocks (tests/standins/blocking_nccl.c)
#   real:    the libnccl.so.2 of the loader cache (ldconfig -p); without a GPU its init fails and
#            every call on the null communicator returns ncclInvalidArgument (4) at once. To block
#            it inside a call, BLOCKER (nccl_blocker.c) is preloaded too: the vsnprintf NCCL formats
#            its error with never returns in the chosen call.
# CASE:
#   kill200k       200,000 AllReduce, then SIGKILL: all 200,000 are in the trace, returned
#   inflight       call 51 blocks (real NCCL: blocked with BLOCKER), SIGKILL: the trace holds 50 returned calls and #50 in flight
#   stuck_rank     4 ranks; rank 3 blocks in call 51, ranks 0-2 in call 52; SIGKILL all: the analysis
#                  names rank 3, AllReduce #50, and ranks 0-2 waiting in #51
#   ring_wrap      a 1024-slot ring after 2,501 calls: sequence numbers continue, 1,477 overwritten;
#                  3 ranks with rings of different sizes are aligned by sequence number
#   unseen         a rank that calls NCCL through a private dlopen handle, ended by SIGTERM: its trace
#                  says NCCL was mapped and no call was seen; the analysis says so and points to logs
#   every_entry    every entry point once, groups nested: each is in the trace
#   group          ncclGroupEnd blocks: the grouped Send/Recv are in flight
#   sighup_ignored SIGHUP ignored (nohup) stays ignored with the recorder preloaded
#   no_dir         DENPEX_TRACE_DIR does not exist: one line on stderr, the program runs on
#   fsize_limit    ulimit -f below the ring size: no SIGXFSZ death, one line on stderr
#   threads        4 threads calling concurrently: nothing lost, torn or misnumbered
#   fork           a forked child gets its own trace; the parent's is untouched
#   launcher_rank  the job rank of a torchrun worker under srun is RANK, not SLURM_PROCID
#   crash_in_nccl  (real NCCL) the process dies inside ncclCommShrink: that call is in flight
set -u
case_=$1 kind=$2 nccl_dir=$3 lib=$4 drv=$5 dump=$6 probe=$7
blocker=$3

dir=$(mktemp -d)
traces=$dir/traces
mkdir "$traces"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

fail=0
say_fail() { echo "FAIL: $*"; fail=1; }

pre=(env DENPEX_TRACE_DIR="$traces" LD_PRELOAD="$lib")
if [ "$kind" = standin ]; then
  pre+=(LD_LIBRARY_PATH="$nccl_dir")
elif ! { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libnccl\.so\.2 '; then
  # No real NCCL here: the case still runs, against the stand-in (DENPEX_STANDIN_NCCL, set by
  # CTest), which crashes where the real one does when asked to.
  echo "no libnccl.so.2 in the loader cache: running against the stand-in NCCL in $DENPEX_STANDIN_NCCL"
  kind=standin
  pre+=(LD_LIBRARY_PATH="$DENPEX_STANDIN_NCCL" DENPEX_STANDIN_CRASH_IN=ncclCommShrink)
fi
# Without the stand-in's blocking knobs unless a case sets them.
unset DENPEX_STANDIN_BLOCK_AT DENPEX_STANDIN_BLOCK_IN DENPEX_TRACE_SLOTS RANK

# block_in K: the environment that makes NCCL block inside AllReduce call K (0-based) of `loop`.
block_in() {
  if [ "$kind" = standin ]; then
    echo "DENPEX_STANDIN_BLOCK_AT=$(($1 + 1))"
  else
    echo "LD_PRELOAD=$lib:$blocker DRIVER_BLOCK_AT=$1"
  fi
}

trace_of() { ls "$traces"/denpex-trace.*."$1".trace 2>/dev/null | head -1; }

# wait_until DESCRIPTION COMMAND...: polls until COMMAND succeeds; gives up after 240 s (a bound
# against hanging the suite, not a timing assertion).
wait_until() {
  local what=$1
  shift
  for _ in $(seq 1200); do
    "$@" && return 0
    sleep 0.2
  done
  say_fail "gave up waiting for: $what"
  exit 1
}
# in_flight_at PID REGEX: the trace of PID shows the call matching REGEX in flight. Specific on
# purpose: every call is in flight for a moment, and a kill then would catch the wrong one.
in_flight_at() {
  local f
  f=$(trace_of "$1")
  [ -n "$f" ] && "$dump" "$f" 2>/dev/null | grep -Eq "$2"
}
done_in() { grep -q '^done$' "$1" 2>/dev/null; }

# start OUT VAR=VALUE... -- ARGS...: the driver in the background with the recorder preloaded.
start() {
  local out=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  "${pre[@]}" "${envs[@]}" "$drv" "$@" >"$out" 2>&1 &
  last_pid=$!
  pids+=("$last_pid")
}

dump_of() {  # dump_of PID OUT
  local f
  f=$(trace_of "$1")
  [ -n "$f" ] || { say_fail "no trace file for pid $1 in $traces: $(ls "$traces")"; return 1; }
  "$dump" "$f" >"$2" || { say_fail "trace_dump could not read $f"; return 1; }
}

expect_line() {  # expect_line FILE REGEX DESCRIPTION
  grep -Eq -- "$2" "$1" || { say_fail "$3: no line matching '$2' in $1"; head -20 "$1"; }
}

status_ok=0
[ "$kind" = real ] && status_ok=4  # ncclInvalidArgument on the null communicator

case "$case_" in
kill200k)
  start "$dir/out" DRIVER_WAIT=1 -- loop 0 1 200000
  pid=$last_pid
  wait_until "200,000 calls made" done_in "$dir/out"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=200001 recorded=200001 overwritten=0 torn=0 dropped=0 in_flight=0 end=killed-or-running ' "process summary"
  n=$(grep -c " AllReduce .* returned status=$status_ok " "$dir/d")
  [ "$n" -eq 200000 ] || say_fail "$n returned AllReduce calls in the trace, expected 200000"
  expect_line "$dir/d" " AllReduce coll=199999 seq=199999 returned" "the last call"
  ;;
inflight)
  # shellcheck disable=SC2046
  start "$dir/out" $(block_in 50) -- loop 0 1 100
  pid=$last_pid
  wait_until "call 51 in flight" in_flight_at "$pid" ' AllReduce coll=50 .* in_flight '
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=52 recorded=52 .* in_flight=1 end=killed-or-running ' "process summary"
  expect_line "$dir/d" ' AllReduce coll=50 seq=50 in_flight status=-1 ' "call #50 in flight"
  n=$(grep -c " AllReduce .* returned" "$dir/d")
  [ "$n" -eq 50 ] || say_fail "$n returned calls, expected 50"
  "$probe" collectives "$traces" >"$dir/report" 2>&1
  rc=$?
  [ $rc -eq 0 ] || say_fail "collectives exit $rc, expected 0 (one rank waiting: a warning)"
  expect_line "$dir/report" 'collective-in-flight' "finding code"
  expect_line "$dir/report" 'rank 0 is waiting in AllReduce #50 on communicator [0-9a-f]+ since [0-9-]+ [0-9:]+ UTC' "message"
  ;;
stuck_rank)
  for r in 0 1 2 3; do
    at=51
    [ $r = 3 ] && at=50
    # shellcheck disable=SC2046
    start "$dir/out$r" RANK=$r $(block_in $at) -- loop $r 4 100
    rp[$r]=$last_pid
  done
  for r in 0 1 2 3; do
    at=51
    [ $r = 3 ] && at=50
    wait_until "rank $r in flight in #$at" in_flight_at "${rp[$r]}" " AllReduce coll=$at .* in_flight "
  done
  for r in 0 1 2 3; do kill -9 "${rp[$r]}"; done
  wait 2>/dev/null
  "$probe" collectives "$traces" --json "$dir/report.json" >"$dir/report" 2>&1
  rc=$?
  cat "$dir/report"
  [ $rc -eq 1 ] || say_fail "collectives exit $rc, expected 1"
  expect_line "$dir/report" '^error rank-stuck  rank 3  comm [0-9a-f]+  step 50$' "finding header"
  expect_line "$dir/report" 'rank 3 is stuck in AllReduce #50 on communicator [0-9a-f]+ since [0-9-]+ [0-9:]+ UTC \(entered, never returned\); ranks 0-2 returned from #50 and are waiting in AllReduce #51 since' "message"
  jq -e '.findings | length == 1 and .[0].code == "rank-stuck" and .[0].ranks == [3] and .[0].seq == 50' \
    "$dir/report.json" >/dev/null || say_fail "JSON: one finding, rank-stuck for rank 3 at step 50"
  ;;
ring_wrap)
  start "$dir/out" DENPEX_TRACE_SLOTS=1000 -- loop 0 1 2500
  pid=$last_pid
  wait "$pid"
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=2501 recorded=1024 overwritten=1477 torn=0 dropped=0 in_flight=0 end=exited ' "process summary (1000 slots round up to 1024)"
  # The 1,024 newest calls, numbered on from where the overwritten ones stopped, none missing.
  grep '^call .* AllReduce ' "$dir/d" | sed 's/.* coll=\([0-9]*\) .*/\1/' >"$dir/colls"
  first=$(head -1 "$dir/colls") last=$(tail -1 "$dir/colls") n=$(wc -l <"$dir/colls")
  [ "$first" = 1476 ] && [ "$last" = 2499 ] && [ "$n" = 1024 ] || say_fail "collective numbers $first..$last ($n), expected 1476..2499 (1024)"
  awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' "$dir/colls" || say_fail "collective numbers not contiguous"
  # Three ranks whose rings hold different windows; rank 0 passes count 1000 at collective 2400.
  rm -f "$traces"/*
  start "$dir/o0" RANK=0 DENPEX_TRACE_SLOTS=1024 -- loop 0 3 2500 2400
  a=$last_pid
  start "$dir/o1" RANK=1 DENPEX_TRACE_SLOTS=2048 -- loop 1 3 2500
  b=$last_pid
  start "$dir/o2" RANK=2 DENPEX_TRACE_SLOTS=4096 -- loop 2 3 2500
  c=$last_pid
  wait "$a" "$b" "$c"
  "$probe" collectives "$traces" --json "$dir/report.json" >"$dir/report" 2>&1
  rc=$?
  [ $rc -eq 1 ] || { say_fail "collectives exit $rc, expected 1"; cat "$dir/report"; }
  jq -e '.findings | length == 1 and .[0].code == "collective-args-mismatch" and .[0].ranks == [0] and .[0].seq == 2400' \
    "$dir/report.json" >/dev/null || { say_fail "expected one args mismatch of rank 0 at step 2400"; cat "$dir/report"; }
  ;;
unseen)
  start "$dir/o0" RANK=0 -- loop 0 2 10
  a=$last_pid
  start "$dir/o1" RANK=1 -- private
  b=$last_pid
  wait "$a"
  wait_until "rank 1 made its calls" done_in "$dir/o1"
  kill -TERM "$b"
  wait "$b"
  rc=$?
  [ $rc -eq 143 ] || say_fail "rank 1 exit $rc, expected 143 (SIGTERM, re-raised after the recorder's handler)"
  dump_of "$b" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=0 recorded=0 .* end=signalled signal=15 rank=1 nccl_mapped=1$' "rank 1's trace"
  "$probe" collectives "$traces" >"$dir/report" 2>&1
  rc=$?
  cat "$dir/report"
  [ $rc -eq 0 ] || say_fail "collectives exit $rc, expected 0 (warnings)"
  expect_line "$dir/report" '^warning collective-rank-unseen  rank 1' "finding"
  expect_line "$dir/report" 'the recorder could not see rank 1 \(pid [0-9]+ .*libnccl\.so' "message names rank 1 and the NCCL"
  expect_line "$dir/report" "read rank 1's own log: run with NCCL_DEBUG=INFO" "points to the logs"
  ;;
every_entry)
  start "$dir/out" -- all
  pid=$last_pid
  wait "$pid" || say_fail "driver exit $?"
  dump_of "$pid" "$dir/d" || exit 1
  for op in AllReduce:2 Broadcast:2 Reduce:1 AllGather:1 ReduceScatter:1 AlltoAll:1 Gather:1 Scatter:1 Send:1 Recv:1 \
            GroupStart:2 GroupEnd:2 CommInitRank:1 CommInitRankConfig:1 CommInitRankScalable:1 CommInitAll:1 \
            CommSplit:1 CommRevoke:1 CommAbort:1 CommFinalize:1 CommDestroy:1; do
    expect_line "$dir/d" "^op ${op%:*} ${op#*:}\$" "operation ${op%:*}"
  done
  expect_line "$dir/d" ' Send coll=-1 seq=0 returned .* group=1 ' "Send inside the nested group"
  expect_line "$dir/d" ' AllReduce coll=0 seq=2 returned .* group=1 ' "AllReduce inside the outer group"
  expect_line "$dir/d" ' Broadcast coll=1 seq=3 returned .* group=0 ' "Broadcast after the group"
  expect_line "$dir/d" '^process calls=[0-9]+ .* in_flight=0 end=exited ' "every call returned"
  if [ "$kind" = standin ]; then
    expect_line "$dir/d" "^op CommShrink 1\$" "operation CommShrink"
    # Split and InitAll communicators are identified: calls on them are attributed.
    expect_line "$dir/d" '^unattributed 0$' "no unattributed calls"
    expect_line "$dir/d" ' 0 1 AllReduce coll=0 seq=0 returned' "AllReduce on the split communicator (rank 0 of 1)"
    expect_line "$dir/d" ' 0 2 CommInitRank returned status=0' "init"
  fi
  ;;
group)
  [ "$kind" = standin ] || { echo "SKIP: only the stand-in blocks"; exit 77; }
  start "$dir/out" DENPEX_STANDIN_BLOCK_IN=ncclGroupEnd -- group
  pid=$last_pid
  # Once GroupEnd is recorded it is the call in flight: the stand-in blocks the first one.
  wait_until "GroupEnd in flight" in_flight_at "$pid" '^op GroupEnd 1$'
  wait_until "GroupEnd in flight" in_flight_at "$pid" '^process .* in_flight=1 '

  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" ' Send coll=-1 seq=0 in_flight .* group=1 ' "grouped Send in flight"
  expect_line "$dir/d" ' Recv coll=-1 seq=1 in_flight .* group=1 ' "grouped Recv in flight"
  "$probe" collectives "$traces" >"$dir/report" 2>&1
  expect_line "$dir/report" 'rank 0 is waiting in Send to peer 1 \(call 0 on the communicator\) \(grouped: its ncclGroupEnd has not returned\)' "message"
  ;;
sighup_ignored)
  # As nohup starts it: SIGHUP ignored, inherited through exec. Then SIGHUP and SIGTERM: the
  # process must end by SIGTERM (143, the trace says signal 15), not by SIGHUP (lower signal
  # numbers are delivered first, so a handler installed over SIG_IGN would end it with 129).
  ( trap '' HUP; exec "${pre[@]}" DRIVER_WAIT=1 "$drv" loop 0 1 10 ) >"$dir/out" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait_until "10 calls made" done_in "$dir/out"
  kill -HUP "$pid"
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  [ $rc -eq 143 ] || say_fail "exit $rc, expected 143 (ended by SIGTERM; 129 = the ignored SIGHUP ended it)"
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=11 recorded=11 .* end=signalled signal=15 ' "trace says SIGTERM"
  ;;
no_dir)
  # DENPEX_TRACE_DIR names a directory that does not exist: the program runs on, and says once why
  # nothing is recorded.
  "${pre[@]}" DENPEX_TRACE_DIR="$dir/missing" "$drv" loop 0 1 100 >"$dir/out" 2>"$dir/err"
  rc=$?
  [ $rc -eq 0 ] || say_fail "driver exit $rc, expected 0"
  n=$(grep -c "^libdenpex-trace.so: cannot create $dir/missing/denpex-trace\..*\.trace: No such file or directory; NCCL calls of this process are not recorded (set DENPEX_TRACE_DIR to a writable directory)\$" "$dir/err")
  [ "$n" -eq 1 ] || { say_fail "expected the message once on stderr, got $n"; cat "$dir/err"; }
  ;;
fsize_limit)
  # A file size limit below the ring (ulimit -f 1024: 1 MiB, the default ring is 32 MiB): the
  # reservation fails with EFBIG and SIGXFSZ, which must not end the program.
  ( ulimit -f 1024; exec "${pre[@]}" "$drv" loop 0 1 100 ) >"$dir/out" 2>"$dir/err"
  rc=$?
  [ $rc -eq 0 ] || say_fail "driver exit $rc, expected 0 (153 = killed by SIGXFSZ)"
  grep -q "^libdenpex-trace.so: cannot create .*: File too large; NCCL calls of this process are not recorded" "$dir/err" \
    || { say_fail "no 'File too large' line on stderr"; cat "$dir/err"; }
  [ -z "$(ls "$traces")" ] || say_fail "a partial trace file was left: $(ls "$traces")"
  ;;
crash_in_nccl)
  # The process dies inside an NCCL call (the real 2.28.9 crashes in ncclCommShrink(NULL)): the
  # call is in the trace, in flight, and the process ended by SIGSEGV.
  "${pre[@]}" "$drv" shrink_null >"$dir/out" 2>&1
  rc=$?
  [ $rc -eq 3 ] && { echo "SKIP: this NCCL does not crash in ncclCommShrink(NULL)"; exit 77; }
  [ $rc -eq 139 ] || say_fail "driver exit $rc, expected 139 (SIGSEGV)"
  f=$(ls "$traces"/denpex-trace.*.trace | head -1)
  "$dump" "$f" >"$dir/d" || { say_fail "trace unreadable"; exit 1; }
  expect_line "$dir/d" '^process calls=7 recorded=7 overwritten=0 torn=0 dropped=0 in_flight=1 end=signalled signal=11 ' "process summary"
  expect_line "$dir/d" '^unflight CommShrink \(communicator (handle )?[0-9a-fx]+\)$' "CommShrink in flight"
  "$probe" collectives "$traces" >"$dir/report" 2>&1
  expect_line "$dir/report" '^error rank-stuck' "finding"
  expect_line "$dir/report" 'was inside CommShrink \(communicator (handle )?[0-9a-fx]+\) when signal 11 ended it' "message"
  ;;
launcher_rank)
  # srun torchrun: every worker inherits the node's SLURM_PROCID; torchrun's RANK is the job rank.
  "${pre[@]}" SLURM_PROCID=1 RANK=13 TORCHELASTIC_RUN_ID=job7 "$drv" loop 5 16 3 >"$dir/out" 2>&1 &
  a=$!
  "${pre[@]}" SLURM_PROCID=1 RANK=13 "$drv" loop 5 16 3 >"$dir/out2" 2>&1 &  # plain srun: Slurm's rank
  b=$!
  wait "$a" "$b"
  dump_of "$a" "$dir/da" || exit 1
  dump_of "$b" "$dir/db" || exit 1
  expect_line "$dir/da" '^process .* rank=13 ' "torchrun worker named by RANK"
  expect_line "$dir/db" '^process .* rank=1 ' "srun task named by SLURM_PROCID"
  ;;
fork)
  # A forked child writes its own trace, never into the parent's shared mapping.
  start "$dir/out" -- fork
  pid=$last_pid
  wait "$pid" || say_fail "driver exit $?"
  child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$dir/out")
  dump_of "$pid" "$dir/dp" || exit 1
  dump_of "$child" "$dir/dc" || exit 1
  expect_line "$dir/dp" '^process calls=5 recorded=5 .* end=exited ' "parent: init + 4 calls"
  [ "$(grep -c '^call .* count=16$' "$dir/dp")" -eq 0 ] || say_fail "the child's calls are in the parent's trace"
  expect_line "$dir/dc" '^process calls=2 recorded=2 .* end=exited ' "child: its 2 calls"
  [ "$(grep -c '^call .* AllReduce .* count=16$' "$dir/dc")" -eq 2 ] || say_fail "the child's trace lacks its 2 calls"
  ;;
threads)
  # 4 threads calling at once, each on its own communicator: every call in, each communicator's
  # numbers contiguous, nothing torn.
  start "$dir/out" -- threads
  pid=$last_pid
  wait "$pid" || say_fail "driver exit $?"
  dump_of "$pid" "$dir/d" || exit 1
  expect_line "$dir/d" '^process calls=200004 recorded=200004 overwritten=0 torn=0 dropped=0 in_flight=0 end=exited ' "process summary"
  for t in 0 1 2 3; do
    grep "^call .* AllReduce .* count=$((100 + t))\$" "$dir/d" | sed 's/.* coll=\([0-9]*\) .*/\1/' >"$dir/c$t"
    n=$(wc -l <"$dir/c$t")
    [ "$n" -eq 50000 ] || say_fail "thread $t: $n calls, expected 50000"
    awk 'NR == 1 && $1 != 0 { bad = 1 } NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' "$dir/c$t" \
      || say_fail "thread $t: collective numbers not 0..49999 in order"
  done
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
[ $fail -eq 0 ] && echo PASS
exit $fail
