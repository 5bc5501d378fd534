#!/bin/bash
# Integration test of denpex-prolog and `srun denpex-probe` against real Slurm daemons.
#
# Starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge) as a one-node cluster on
# loopback with a temporary configuration under WORKDIR, and always stops them. Cases:
#   (a) the node matches its pinned baseline: `srun -N1 true` runs, the prolog spools the record;
#   (c) `srun --mpi=pmix -n 3 denpex-probe` (pmi2 if pmix is not offered) prints the 3-rank
#       cluster report;
#   (d) `srun --mpi=none -n 4 denpex-probe` exits 2 (no task judges itself alone); with
#       --rank-report every task writes its record and `compare` judges the 4 together;
#   (b) the baseline pinned to another NCCL version: the job does not start and the node is
#       drained with the reason visible in `sinfo -R`.
# (b) runs last because it leaves the node drained.
#
# usage: run_slurm_test.sh PROBE PROLOG STANDINS_DIR WORKDIR
# Exit: 0 pass, 1 fail, 77 skipped (daemons cannot start here; the reason is printed).
set -euo pipefail

probe=${1:?usage: run_slurm_test.sh PROBE PROLOG STANDINS_DIR WORKDIR}
prolog=${2:?missing PROLOG}
standins=${3:?missing STANDINS_DIR}
workroot=${4:?missing WORKDIR}

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; dump_logs; exit 1; }
note() { echo "--- $*"; }

[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs; this test is not root"
for c in munged slurmctld slurmd srun sinfo scontrol squeue scancel timeout; do
  command -v "$c" >/dev/null 2>&1 ||
    skip "$c not found; install the packages listed in tests/slurm/install-deps.sh"
done
[ -x "$probe" ] || fail "denpex-probe $probe is not executable (build target denpex-probe)"
[ -x "$prolog" ] || fail "prolog $prolog is not executable"
[ -e "$standins/nccl-2.27.3/libnccl.so.2" ] || fail "stand-in $standins/nccl-2.27.3 missing (build target denpex_standins)"

node=$(hostname -s)
mkdir -p "$workroot"
# slurmd runs only a Prolog named by an absolute path.
probe=$(realpath "$probe"); prolog=$(realpath "$prolog")
standins=$(realpath "$standins"); workroot=$(realpath "$workroot")
chmod 755 "$workroot"
T=$(mktemp -d "$workroot/slurm.XXXXXX")
chmod 755 "$T"
pids=()

dump_logs() {
  [ -n "${T:-}" ] || return 0
  for f in "$T"/log/*.log "$T"/denpex-spool/*.txt "$T"/prolog-trace.log; do
    [ -f "$f" ] || continue
    echo "===== $f (last 25 lines)" >&2
    tail -n 25 "$f" >&2 || true
  done
}

cleanup() {
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ "${#pids[@]}" -gt 0 ]; then
    timeout 10 scancel --quiet --full "--partition=denpex" >/dev/null 2>&1
  fi
  # Our own daemons only, by the PIDs we started; slurmd's job steps die with it.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null; done
  for _ in $(seq 1 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  if [ "${DENPEX_KEEP_SLURM_DIR:-0}" = 1 ]; then
    echo "kept $T" >&2
  else
    rm -rf "$T"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Two free ports on loopback, away from Slurm's defaults (6817/6818).
# Nothing answers a connection on loopback (bash's /dev/tcp; no iproute2 needed).
port_free() { ! timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }
base=$((20000 + RANDOM % 20000))
while ! port_free "$base" || ! port_free $((base + 1)); do base=$((base + 2)); done
ctld_port=$base
slurmd_port=$((base + 1))

mkdir -p "$T"/{log,state,slurmd,munge,denpex-spool}
chmod 700 "$T/munge"

# --- munge ------------------------------------------------------------------------------------
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munge_socket=$T/munge/munge.socket
munged --force --key-file="$T/munge/munge.key" --socket="$munge_socket" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/log/munged.log" \
  --seed-file="$T/munge/munged.seed" >"$T/log/munged.out" 2>&1 ||
  skip "munged did not start: $(tail -n 1 "$T/log/munged.out" 2>/dev/null)"
for _ in $(seq 1 50); do [ -s "$T/munge/munged.pid" ] && break; sleep 0.1; done
[ -s "$T/munge/munged.pid" ] || skip "munged wrote no pid file"
pids+=("$(cat "$T/munge/munged.pid")")
if command -v munge >/dev/null && command -v unmunge >/dev/null; then
  timeout 10 munge -n -S "$munge_socket" | timeout 10 unmunge -S "$munge_socket" >/dev/null 2>&1 ||
    skip "munge credentials do not round-trip through $munge_socket"
fi

# --- the prolog, through a wrapper that names its configuration -------------------------------
# slurmd passes the prolog only SLURM_* variables, so the configuration path is fixed in a
# wrapper (an operator uses the default /etc/denpex/prolog.conf and needs no wrapper).
cat >"$T/prolog" <<EOF
#!/bin/sh
DENPEX_PROLOG_CONF=$T/prolog.conf exec "$prolog" "\$@" 2>>"$T/prolog-trace.log"
EOF
chmod 755 "$T/prolog"

write_prolog_conf() { # write_prolog_conf BASELINE
  cat >"$T/prolog.conf" <<EOF
baseline = $1
spool = $T/denpex-spool
timeout = 20
probe = $probe
on_error = drain
scontrol_drain = yes
syslog = no
EOF
}

# --- baselines ----------------------------------------------------------------------------------
# Written in an environment like the prolog's (no job variables, a fixed PATH).
clean_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
"${clean_env[@]}" timeout 60 "$probe" --quiet --write-baseline "$T/baseline-good.json" ||
  true  # the node may be rejected (no driver is only a warning); the baseline is still written
[ -s "$T/baseline-good.json" ] || fail "denpex-probe --write-baseline wrote no $T/baseline-good.json"
"${clean_env[@]}" LD_LIBRARY_PATH="$standins/nccl-2.27.3" timeout 60 "$probe" --quiet \
  --write-baseline "$T/baseline-other.json" || true
grep -q '"2.27.3"' "$T/baseline-other.json" ||
  fail "baseline-other.json does not pin NCCL 2.27.3: $(cat "$T/baseline-other.json")"
good_nccl=$(grep -o '"version": *"[0-9.]*"' "$T/baseline-good.json" | head -n 1 | grep -o '[0-9][0-9.]*')
[ -n "$good_nccl" ] && [ "$good_nccl" != 2.27.3 ] ||
  fail "the node's own NCCL ($good_nccl) must differ from 2.27.3 for case (b)"
write_prolog_conf "$T/baseline-good.json"

# --- slurm ----------------------------------------------------------------------------------------
export SLURM_CONF=$T/slurm.conf
cpus=$(nproc)
cat >"$SLURM_CONF" <<EOF
ClusterName=denpextest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/slurmd
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
Prolog=$T/prolog
PrologEpilogTimeout=90
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=denpex Nodes=$node Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
EOF

slurmctld -D -c -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
pids+=("$!")
slurmd -D -c -f "$SLURM_CONF" -N "$node" >"$T/log/slurmd.out" 2>&1 &
pids+=("$!")

state=
for _ in $(seq 1 60); do
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || skip "a Slurm daemon exited at start: $(cat "$T"/log/slurm*.out 2>/dev/null | tail -n 3 | tr '\n' ' ') $(grep -h -i -m2 'error\|fatal' "$T"/log/slurm*.log 2>/dev/null | tr '\n' ' ')"
  done
  state=$(timeout 5 sinfo -h -N -n "$node" -o '%T' 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || skip "node $node not idle 30 s after starting the daemons (state '$state'): $(grep -h -i -m3 'error\|fatal' "$T"/log/slurm*.log 2>/dev/null | tr '\n' ' ')"
note "slurm up: node $node idle, ports $ctld_port/$slurmd_port, $(srun --version)"

# --- (a) the node matches its baseline ------------------------------------------------------
note "(a) srun -N1 true against the node's own baseline"
out=$(timeout 90 srun -N1 --time=2 true 2>&1) || fail "(a) srun -N1 true failed: $out"
[ -s "$T/denpex-spool/$(hostname).json" ] ||
  fail "(a) the prolog spooled no record at $T/denpex-spool/$(hostname).json"
timeout 60 "$probe" compare --quiet "$T/denpex-spool" ||
  fail "(a) denpex-probe compare on the spool exited $?"
grep -q '"rank": 0' "$T/denpex-spool/$(hostname).json" || fail "(a) spooled record has no rank 0"
state=$(timeout 10 sinfo -h -N -n "$node" -o '%T')
[ "$state" = idle ] || fail "(a) node is '$state' after the job, expected idle"
echo "ok (a): job ran; record spooled; node idle"

# --- (c) an srun job step over 3 tasks prints the cluster report ---------------------------
note "(c) srun --mpi=... -n 3 denpex-probe"
mpis=$(timeout 10 srun --mpi=list 2>&1 || true)
mpi_used=
for mpi in pmix pmi2; do
  echo "$mpis" | grep -qw "$mpi" || continue
  rm -f "$T/report-c.json"
  set +e
  out=$(OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
        timeout 120 srun --mpi="$mpi" -N1 -n 3 --overcommit --time=3 \
        "$probe" --timeout 40 --color never --json "$T/report-c.json" 2>&1)
  rc=$?
  set -e
  if [ "$rc" = 0 ] && [ -s "$T/report-c.json" ]; then mpi_used=$mpi; break; fi
  echo "srun --mpi=$mpi did not give a report (exit $rc):" >&2
  echo "$out" | tail -n 15 >&2
done
[ -n "$mpi_used" ] || fail "(c) neither srun --mpi=pmix nor --mpi=pmi2 ran denpex-probe (offered: $(echo "$mpis" | tr '\n' ' '))"
echo "$out"
grep -q '"nranks": 3' "$T/report-c.json" || fail "(c) report does not have nranks 3: $(head -c 400 "$T/report-c.json")"
grep -q '"mode": "mpi"' "$T/report-c.json" || echo "note: report has no \"mode\": \"mpi\" key" >&2
grep -q '"verdict": "pass"' "$T/report-c.json" || fail "(c) verdict is not pass"
echo "$out" | grep -q '^denpex-probe: PASS .*(3 ranks on 1 host)' ||
  fail "(c) the human report does not say 'PASS ... (3 ranks on 1 host)'"
# Exactly one report: rank 0 prints it, the other ranks print nothing.
[ "$(echo "$out" | grep -c '^denpex-probe: PASS')" = 1 ] || fail "(c) the report was printed more than once"
echo "ok (c): srun --mpi=$mpi_used -n 3 printed the 3-rank report"
echo "MPI_PLUGIN_USED=$mpi_used"

# --- (d) srun -n 4 without an MPI plugin ---------------------------------------------------
note "(d) srun --mpi=none -n 4 denpex-probe: no task may judge itself alone"
set +e
out=$(timeout 120 srun --mpi=none -N1 -n 4 --overcommit --time=3 "$probe" --timeout 20 --color never 2>&1)
rc=$?
set -e
echo "$out" | head -n 4
[ "$rc" = 2 ] || fail "(d) srun --mpi=none -n 4 exited $rc, expected 2"
! echo "$out" | grep -q "PASS" || fail "(d) a task printed PASS"
[ "$(echo "$out" | grep -c 'was started without an MPI launcher.*srun --mpi=pmix')" = 4 ] ||
  fail "(d) not every task said it was started without an MPI launcher"
note "(d) the explicit per-task use: --rank-report on every task, then compare"
mkdir -p "$T/tasks"
set +e
out=$(timeout 120 srun --mpi=none -N1 -n 4 --overcommit --time=3 "$probe" --timeout 20 \
      --rank-report "$T/tasks/%h-%r.json" 2>&1)
rc=$?
set -e
echo "$out" | head -n 4
[ "$rc" = 0 ] || fail "(d) per-task srun exited $rc, expected 0"
! echo "$out" | grep -q "PASS" || fail "(d) a per-task run claimed a pass"
[ "$(echo "$out" | grep -c 'record written to .*not judged alone')" = 4 ] ||
  fail "(d) not every task said it wrote its record and judged nothing"
[ "$(ls "$T/tasks" | wc -l)" = 4 ] || fail "(d) expected 4 records, got: $(ls "$T/tasks")"
for r in 0 1 2 3; do
  grep -q "\"rank\": $r," "$T/tasks/$(hostname)-$r.json" || fail "(d) record of task $r does not carry rank $r"
done
out=$(timeout 60 "$probe" compare --color never "$T/tasks" 2>&1) || fail "(d) compare of the task records exited $?: $out"
echo "$out" | grep -q "(4 ranks on 1 host)" || fail "(d) compare did not judge 4 ranks: $out"
note "(d) a one-task step still runs alone"
set +e
out=$(timeout 90 srun -N1 -n 1 --time=2 "$probe" --timeout 20 --color never 2>&1)
rc=$?
set -e
echo "$out" | grep -q "(1 rank on 1 host)" || fail "(d) srun -n 1 did not run alone (exit $rc): $out"
echo "ok (d): srun -n 4 without MPI exits 2; --rank-report per task + compare judges 4 ranks"

# --- (b) a baseline pinned to another NCCL version ------------------------------------------
note "(b) srun -N1 true against a baseline pinned to NCCL 2.27.3"
write_prolog_conf "$T/baseline-other.json"
set +e
out=$(timeout 60 srun -N1 --time=2 --immediate=30 true 2>&1)
rc=$?
set -e
[ "$rc" != 0 ] || fail "(b) srun -N1 true succeeded on a node that does not match its baseline"
[ "$rc" != 124 ] || echo "note: srun was still waiting after 60 s (job requeued); cancelling" >&2
echo "srun exited $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
reason=
for _ in $(seq 1 40); do
  reason=$(timeout 10 sinfo -h -R -n "$node" -o '%E' 2>/dev/null || true)
  [ -n "$reason" ] && break
  sleep 0.5
done
state=$(timeout 10 sinfo -h -N -n "$node" -o '%T')
echo "sinfo -R: $(timeout 10 sinfo -R | tr '\n' '|')"
case $state in drain*|drained) ;; *) fail "(b) node state is '$state', expected drained" ;; esac
expected="denpex: nccl-version-mismatch"
case $reason in
  "$expected"*) ;;
  *) fail "(b) drain reason is '$reason', expected it to start with '$expected'" ;;
esac
grep -q "2.27.3" <<<"$reason" || fail "(b) drain reason '$reason' does not name 2.27.3"
grep -q "denpex: nccl-version-mismatch" "$T/prolog-trace.log" ||
  fail "(b) the prolog wrote no one-line reason on stderr"
echo "ok (b): job did not start; node $state; reason: $reason"
echo "PASS"
