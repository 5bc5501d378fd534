#!/usr/bin/env bash
# The same four rank environments under the real mpirun (MPI transport) and under the real
# torchrun of torch 2.7.1 (its c10d store): the gate must give the same verdict, the same
# configurations and the same findings (codes, severities, ranks, hosts, messages) both ways.
# Ranks 2-3 preload a real NCCL 2.21.5 wheel, rank 3 also sets NCCL_PROTO=Simple.
#   run_same_findings_test.sh PROBE SCRATCH
set -euo pipefail
PROBE=$1
SCRATCH=$2/same-findings
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
command -v jq >/dev/null || skip "jq is not installed"
bash "$HERE/torch_env.sh" 2.7.1 nccl-2.21.5 ||
  skip "the torch 2.7.1 wheels could not be fetched into $WHEEL_CACHE (tests/torchrun/torch_env.sh)"
export PYTHONPATH=$WHEEL_TREES/env/torch-2.7.1
export OTHER_NCCL=$WHEEL_TREES/env/nccl-2.21.5/nvidia/nccl/lib/libnccl.so.2
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH" && chmod 755 "$SCRATCH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_rmaps_base_oversubscribe=1

WRAP=$SCRATCH/rank_env.sh
cat >"$WRAP" <<'EOS'
#!/bin/sh
# Gives each rank its environment by its launcher's rank, then runs the probe.
r=${RANK:-$OMPI_COMM_WORLD_RANK}
case $r in
  2) export LD_PRELOAD=$OTHER_NCCL ;;
  3) export LD_PRELOAD=$OTHER_NCCL NCCL_PROTO=Simple ;;
esac
exec "$@"
EOS
chmod +x "$WRAP"

rc=0
timeout 300 mpirun -np 4 -x PYTHONPATH -x OTHER_NCCL "$WRAP" "$PROBE" --timeout 30 -q \
  --json "$SCRATCH/mpi.json" >"$SCRATCH/mpi.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/mpi.txt" >&2; fail "mpirun exited $rc, expected 1 (reject)"; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rc=0
timeout 300 python3 -m torch.distributed.run --nnodes 1 --nproc-per-node 4 --rdzv-backend c10d \
  --rdzv-endpoint "127.0.0.1:$port" --max-restarts 0 --no-python "$WRAP" "$PROBE" --timeout 30 \
  -q --json "$SCRATCH/torchrun.json" >"$SCRATCH/torchrun.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/torchrun.txt" >&2; fail "torchrun exited $rc, expected 1"; }

shape='{verdict, nranks, nhosts,
        configurations: [.configurations[] | {ranks, hosts}],
        findings: [.findings[] | {code, severity, ranks, hosts, expected, found, message}]}'
jq -S "$shape" "$SCRATCH/mpi.json" >"$SCRATCH/mpi.shape"
jq -S "$shape" "$SCRATCH/torchrun.json" >"$SCRATCH/torchrun.shape"
diff "$SCRATCH/mpi.shape" "$SCRATCH/torchrun.shape" >&2 || fail "mpirun and torchrun disagree"
[ "$(jq -r .mode "$SCRATCH/mpi.json")/$(jq -r .mode "$SCRATCH/torchrun.json")" = mpi/torchrun ] ||
  fail "the reports do not say which transport carried them"
n=$(jq '.findings | length' "$SCRATCH/mpi.shape")
codes=$(jq -r '[.findings[].code] | unique | join(",")' "$SCRATCH/mpi.shape")
case $codes in *nccl-env-mismatch*) ;; *) fail "rank 3's NCCL_PROTO=Simple was not found: $codes" ;; esac
echo "ok: mpirun and torchrun give the same $n findings ($codes)"
