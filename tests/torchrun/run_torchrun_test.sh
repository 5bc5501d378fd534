#!/usr/bin/env bash
# The gate under the real torchrun (torch.distributed.run of real torch wheels), with no MPI:
# two elastic agents on this machine, each in its own UTS namespace (hosts node01, node02),
# two workers each, gathering through the c10d TCPStore the agent serves.
#   run_torchrun_test.sh PROBE SCRATCH TORCH_VERSION
# 2.7.1: the c10d rendezvous on 127.0.0.1, the libuv store the agent shares with its workers.
# 2.3.1: the static rendezvous (--master-addr/--master-port), whose agent serves its classic
#        store; its c10d rendezvous serves none for the workers: the gate's rank 0 serves it.
# Every worker runs through a wrapper that records its own exit code, so each case checks the
# workers' codes and torchrun's. Cases: all alike (PASS), one agent's workers preload another
# real NCCL (REJECT naming that agent's ranks), a rank that never reports (rank-timeout), the
# store gone (workers exit 2), not a TCPStore (exit 2), --max-restarts rerunning the gate, and
# the worlds no agent serves a store for (rank 0 serves one).
set -euo pipefail
PROBE=$1
SCRATCH=$2/torchrun-$3
VERSION=$3
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
command -v jq >/dev/null || skip "jq is not installed"
[ "$(id -u)" = 0 ] || skip "needs root for UTS namespaces (one host name per agent)"
bash "$HERE/torch_env.sh" "$VERSION" nccl-2.21.5 ||
  skip "the torch $VERSION wheels could not be fetched into $WHEEL_CACHE (tests/torchrun/torch_env.sh)"
export PYTHONPATH=$WHEEL_TREES/env/torch-$VERSION
OTHER_NCCL=$WHEEL_TREES/env/nccl-2.21.5/nvidia/nccl/lib/libnccl.so.2
[ -e "$OTHER_NCCL" ] || skip "no unpacked nvidia-nccl-cu12 2.21.5 wheel in $WHEEL_TREES/env"
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && chmod 755 "$SCRATCH"
echo "torch $(sed -n "s/^__version__ = '\(.*\)'.*/\1/p" "$PYTHONPATH/torch/version.py")"

# A free TCP port on the loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The worker wrapper: records RANK's exit code under $CASE_DIR (one file per restart).
WRAP=$SCRATCH/worker.sh
cat >"$WRAP" <<'EOF'
#!/bin/sh
# $1 = case directory, $2 = the probe; the rest are its arguments.
dir=$1; probe=$2; shift 2
echo $$ >"$dir/pid.$RANK.$TORCHELASTIC_RESTART_COUNT"
echo "$GROUP_RANK $(hostname) ${TORCHELASTIC_ERROR_FILE:-}" >"$dir/agent.$RANK"
echo "${TORCHELASTIC_USE_AGENT_STORE:-}" >"$dir/agentstore.$RANK"
if [ -n "${HANG_RANK:-}" ] && [ "$RANK" = "$HANG_RANK" ]; then exec sleep 60; fi
# torchrun stops a failed job's workers with SIGTERM to the process group: this shell records
# the probe's own code even then (the trap runs once the probe has exited; the probe itself
# keeps the default disposition, so a probe stopped early shows 143).
trap 'echo "stopped by SIGTERM" >"$dir/term.$RANK.$TORCHELASTIC_RESTART_COUNT"' TERM
if [ -n "${PRELOAD_GROUP:-}" ] && [ "$GROUP_RANK" = "$PRELOAD_GROUP" ]; then
  export LD_PRELOAD=$PRELOAD_LIB
fi
if [ -n "${PRELOAD_RANK:-}" ] && [ "$RANK" = "$PRELOAD_RANK" ]; then
  export LD_PRELOAD=$PRELOAD_LIB
fi
set -- "$@" --json "$dir/report.$RANK.json" ${EXTRA_GATE_ARGS:-}
[ -z "${REPORT_PATTERN:-}" ] || set -- "$@" --rank-report "$REPORT_PATTERN"
"$probe" "$@" >"$dir/out.$RANK.txt" 2>"$dir/err.$RANK.txt"
rc=$?
echo "$rc" >"$dir/rc.$RANK.$TORCHELASTIC_RESTART_COUNT"
exit "$rc"
EOF
chmod +x "$WRAP"

# agent DIR NODE_RANK PORT [torchrun options...]: one agent in its own UTS namespace.
agent() {
  local dir=$1 node=$2 port=$3; shift 3
  local rdzv
  if [ "$VERSION" = 2.3.1 ]; then
    rdzv=(--rdzv-backend static --node-rank "$node" --master-addr 127.0.0.1 --master-port "$port")
  else
    rdzv=(--rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" --rdzv-id "job$port"
          --local-addr 127.0.0.1)
  fi
  unshare --uts sh -c 'hostname "$0" && exec "$@"' "node0$((node + 1))" \
    timeout 120 python3 -m torch.distributed.run --nnodes 2 --nproc-per-node 2 "${rdzv[@]}" \
    --log-dir "$dir/agentlogs$node" "$@" --no-python "$WRAP" "$dir" "$PROBE" --color never --timeout "${GATE_TIMEOUT:-10}" \
    >"$dir/agent$node.log" 2>&1
}

# run_case NAME [torchrun options...]: both agents; sets AGENT0_RC, AGENT1_RC, DIR.
run_case() {
  DIR=$SCRATCH/$1; shift
  mkdir -p "$DIR"
  local port; port=$(free_port)
  local t0=$SECONDS
  AGENT0_RC=0 AGENT1_RC=0
  agent "$DIR" 0 "$port" "$@" & local a0=$!
  agent "$DIR" 1 "$port" "$@" & local a1=$!
  wait "$a0" || AGENT0_RC=$?
  wait "$a1" || AGENT1_RC=$?
  echo "  $(basename "$DIR"): torchrun exits $AGENT0_RC/$AGENT1_RC in $((SECONDS - t0)) s"
}

rc_of() { cat "$DIR/rc.$1.${2:-0}" 2>/dev/null || echo none; }
expect_workers() {   # expect_workers CODE RANK... (restart 0)
  local want=$1; shift
  for r in "$@"; do
    [ "$(rc_of "$r")" = "$want" ] || { tail -n 5 "$DIR"/err.*.txt "$DIR"/agent*.log >&2 || true
      fail "$(basename "$DIR"): worker rank $r exited $(rc_of "$r"), expected $want"; }
  done
}
jq_is() {
  local got; got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
  [ "$got" = "$3" ] || { head -c 3000 "$1" >&2; fail "$1: $2: expected '$3', got '$got'"; }
}

echo "== all alike: PASS on 4 ranks, 2 hosts"
run_case pass --max-restarts 0
expect_workers 0 0 1 2 3
[ "$AGENT0_RC/$AGENT1_RC" = 0/0 ] || fail "torchrun exited $AGENT0_RC/$AGENT1_RC for a pass"
jq_is "$DIR/report.0.json" .verdict pass
jq_is "$DIR/report.0.json" .mode torchrun
jq_is "$DIR/report.0.json" .nranks 4
jq_is "$DIR/report.0.json" '.configurations[0].hosts | join(",")' node01,node02
[ ! -e "$DIR/report.1.json" ] || fail "a rank other than 0 wrote the cluster report"

echo "== --rank-report DIR/%j-%r.json: one file per RANK, compare judges them as the live run did"
REPORT_PATTERN=$SCRATCH/reports/%j-%r.json
mkdir -p "$SCRATCH/reports"
REPORT_PATTERN=$REPORT_PATTERN run_case records --max-restarts 0
expect_workers 0 0 1 2 3
n=$(ls "$SCRATCH/reports" | wc -l)
[ "$n" = 4 ] || fail "$n rank reports, expected 4: $(ls "$SCRATCH/reports")"
run_id=$(ls "$SCRATCH/reports" | sed -n 's/-0\.json$//p')
[ -n "$run_id" ] && [ -e "$SCRATCH/reports/$run_id-3.json" ] || fail "%j/%r not expanded: $(ls "$SCRATCH/reports")"
"$PROBE" compare --json "$SCRATCH/compare.json" "$SCRATCH/reports" >/dev/null || fail "compare did not pass"
jq_is "$SCRATCH/compare.json" '"\(.verdict) \(.nranks) \(.nhosts)"' "pass 4 2"
# The ranks of a host with the same environment take one probe: on the host of ranks 2-3 one
# probed and the other took its record (probed_by); nobody took a record from another host,
# and rank 0 probed itself.
shared() { jq -r '.probed_by // "self"' "$SCRATCH/reports/$run_id-$1.json"; }
case "$(shared 2)/$(shared 3)" in
  self/2|3/self) ;;
  *) fail "ranks 2-3 shared no probe: probed_by $(shared 2)/$(shared 3)" ;;
esac
[ "$(shared 0)" = self ] || fail "rank 0 took rank $(shared 0)'s probe"
case "$(shared 1)" in self|0) ;; *) fail "rank 1 took rank $(shared 1)'s probe, of another host" ;; esac

echo "== --each-rank: every rank probes itself"
rm -rf "$SCRATCH/reports"; mkdir -p "$SCRATCH/reports"
EXTRA_GATE_ARGS=--each-rank REPORT_PATTERN=$REPORT_PATTERN run_case each --max-restarts 0
expect_workers 0 0 1 2 3
[ -z "$(jq -r '.probed_by // empty' "$SCRATCH"/reports/*.json)" ] ||
  fail "a rank took another's probe under --each-rank"

echo "== rank 3 alone preloads NCCL 2.21.5: its host's other rank does not take its probe"
PRELOAD_RANK=3 PRELOAD_LIB=$OTHER_NCCL run_case odd --max-restarts 0
expect_workers 1 0 1 2 3
jq_is "$DIR/report.0.json" \
  '[.findings[] | select(.code == "torch-nccl-mismatch" and .severity == "error") |
    .ranks | join("-")] | join(";")' 3

echo "== every rank given one --rank-report file: the first wins, the others refused, the gate still judges"
REPORT_PATTERN=$SCRATCH/one.json run_case collide --max-restarts 0
expect_workers 0 0 1 2 3
refused=$(grep -l "already written by rank .* of this run: two processes map to one file" "$DIR"/err.*.txt | wc -l)
[ "$refused" = 3 ] || { cat "$DIR"/err.*.txt >&2; fail "$refused ranks refused, expected 3"; }
writer=$(jq -r .rank "$SCRATCH/one.json")
grep -q "\"run\": \"torchrun:" "$SCRATCH/one.json" || fail "the report does not carry its run"
[ ! -s "$DIR/err.$writer.txt" ] || fail "the rank that wrote one.json ($writer) complained"

echo "== agent 1's workers preload NCCL 2.21.5: REJECT naming ranks 2-3 (GROUP_RANK 1)"
PRELOAD_GROUP=1 PRELOAD_LIB=$OTHER_NCCL run_case reject --max-restarts 0
expect_workers 1 0 1 2 3
[ "$AGENT0_RC/$AGENT1_RC" = 1/1 ] || fail "torchrun exited $AGENT0_RC/$AGENT1_RC for a reject"
grep -q ChildFailedError "$DIR/agent0.log" || fail "torchrun did not report ChildFailedError"
jq_is "$DIR/report.0.json" .verdict reject
# The c10d rendezvous gives GROUP_RANK 1 to either agent: the host is the one its ranks saw.
read -r group host1 _ <"$DIR/agent.2"
read -r group3 host3 _ <"$DIR/agent.3"
[ "$group/$group3" = 1/1 ] && [ "$host3" = "$host1" ] || fail "ranks 2-3 are not GROUP_RANK 1's"
# 2 ranks against 2 tie on the version (the finding names both groups); the rules with a
# reference (PyTorch's own NCCL) blame agent 1's ranks alone. torch 2.7.1 also needs symbols
# NCCL 2.21.5 lacks (2.3.1, built with 2.20.5, does not).
codes=torch-nccl-mismatch
[ "$VERSION" = 2.3.1 ] || codes="$codes nccl-abi-mismatch"
for code in $codes; do
  jq_is "$DIR/report.0.json" "[.findings[] | select(.code == \"$code\" and .severity == \"error\") |
    \"\\(.ranks | join(\"-\")) \\(.hosts | join(\",\"))\"] | join(\";\")" "2-3 $host1"
done
jq_is "$DIR/report.0.json" \
  '.findings[] | select(.code == "nccl-version-mismatch") | .found | sub(".*; "; "")' \
  "2.21.5 (ranks 2-3)"

echo "== rank 3 never reports: rank-timeout, every other worker exits 1"
HANG_RANK=3 GATE_TIMEOUT=6 run_case hang --max-restarts 0
expect_workers 1 0 1 2
[ "$AGENT0_RC/$AGENT1_RC" = 1/1 ] || fail "torchrun exited $AGENT0_RC/$AGENT1_RC for a hung rank"
jq_is "$DIR/report.0.json" '[.findings[] | select(.code == "rank-timeout") | .ranks[]] | join(",")' 3

echo "== --max-restarts 1: torchrun reruns the gate (a new key prefix), rejects again"
PRELOAD_GROUP=1 PRELOAD_LIB=$OTHER_NCCL run_case restart --max-restarts 1
[ "$AGENT0_RC/$AGENT1_RC" = 1/1 ] || fail "torchrun exited $AGENT0_RC/$AGENT1_RC after restarts"
for r in 0 1 2 3; do
  [ "$(rc_of $r 0)/$(rc_of $r 1)" = 1/1 ] || fail "rank $r: attempts exited $(rc_of $r 0)/$(rc_of $r 1)"
done

echo "== the store goes away while the workers wait: they exit 2"
DIR=$SCRATCH/gone; mkdir -p "$DIR"
port=$(free_port)
HANG_RANK=3 GATE_TIMEOUT=40 agent "$DIR" 0 "$port" --max-restarts 0 & a0=$!
HANG_RANK=3 GATE_TIMEOUT=40 agent "$DIR" 1 "$port" --max-restarts 0 & a1=$!
for _ in $(seq 600); do [ -e "$DIR/pid.2.0" ] && [ -e "$DIR/pid.0.0" ] && break; sleep 0.1; done
sleep 3   # the workers have put their keys and wait: rank 0 for rank 3, the others for it
# The store lives in the python of the agent with GROUP_RANK 0 (the one whose log directory
# rank 0's error file is in; the timeout around it is its parent); its workers outlive it.
logs=$(awk '{print $3}' "$DIR/agent.0" | grep -o 'agentlogs[01]')
store_agent=""
for p in $(pgrep -f "$DIR/$logs" || true); do
  case $(readlink "/proc/$p/exe" 2>/dev/null) in *python*) store_agent=$p ;; esac
done
[ -n "$store_agent" ] || fail "could not find agent 0's process"
kill -9 "$store_agent"
for _ in $(seq 300); do
  [ -e "$DIR/rc.0.0" ] && [ -e "$DIR/rc.1.0" ] && [ -e "$DIR/rc.2.0" ] && break; sleep 0.1
done
kill "$(cat "$DIR/pid.3.0")" 2>/dev/null || true   # the hung rank (agent 1 may be waiting on it)
wait "$a0" || true; wait "$a1" || true
expect_workers 2 0 1 2
grep -qh "went away\|cannot judge" "$DIR"/err.[012].txt || fail "no line says the store went away"

echo "== MASTER_PORT is not a TCPStore: exit 2, one line naming MASTER_ADDR:MASTER_PORT"
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4); print(s.getsockname()[1], flush=True)
end = time.time() + 20
conns = []
while time.time() < end:
    s.settimeout(end - time.time())
    try: c, _ = s.accept(); conns.append(c)   # accepts, reads nothing, answers nothing
    except OSError: break
' >"$SCRATCH/silent.port" & silent=$!
for _ in $(seq 50); do [ -s "$SCRATCH/silent.port" ] && break; sleep 0.1; done
sport=$(cat "$SCRATCH/silent.port")
rc=0
env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$sport" TORCHELASTIC_RUN_ID=x \
  TORCHELASTIC_USE_AGENT_STORE=True "$PROBE" --timeout 4 >"$SCRATCH/silent.txt" 2>&1 || rc=$?
kill "$silent" 2>/dev/null || true
[ "$rc" = 2 ] || { cat "$SCRATCH/silent.txt" >&2; fail "exit $rc against a server that is not a TCPStore"; }
[ "$(wc -l <"$SCRATCH/silent.txt")" = 1 ] || fail "more than one line: $(cat "$SCRATCH/silent.txt")"
grep -q "127.0.0.1:$sport (MASTER_ADDR:MASTER_PORT)" "$SCRATCH/silent.txt" || fail "the line names no MASTER_ADDR:MASTER_PORT"

if [ "$VERSION" = 2.3.1 ]; then
  echo "== torch 2.3.1's c10d rendezvous serves no store for the workers: the gate's rank 0 serves it"
  DIR=$SCRATCH/c10d231; mkdir -p "$DIR"
  port=$(free_port); rc=0
  timeout 120 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --rdzv-backend c10d \
    --rdzv-endpoint "127.0.0.1:$port" --max-restarts 0 --no-python "$WRAP" "$DIR" "$PROBE" \
    >"$DIR/agent.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$DIR"/err.*.txt >&2; fail "torchrun exited $rc"; }
  [ "$(cat "$DIR/agentstore.0")" = False ] || fail "the workers were told the agent serves a store"
  expect_workers 0 0 1
  jq_is "$DIR/report.0.json" '"\(.verdict) \(.nranks)"' "pass 2"
fi

echo "== the env:// variables without torchrun (Kubeflow's PyTorchJob running a command): rank 0 serves"
DIR=$SCRATCH/envworld; mkdir -p "$DIR"
port=$(free_port)
pids=()
for r in 0 1 2; do
  env RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$PROBE" -q --timeout 10 \
    --json "$DIR/report.$r.json" >"$DIR/err.$r.txt" 2>&1 & pids+=($!)
done
codes=""
for p in "${pids[@]}"; do rc=0; wait "$p" || rc=$?; codes="$codes$rc"; done
[ "$codes" = 000 ] || { cat "$DIR"/err.*.txt >&2; fail "exit codes $codes"; }
jq_is "$DIR/report.0.json" '"\(.verdict) \(.nranks)"' "pass 3"

echo "ok: torch $VERSION's torchrun: pass, records, reject, rank-timeout, restarts, store gone, not a store, served by rank 0"
