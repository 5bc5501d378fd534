#!/usr/bin/env bash
# The cluster gate under the real Open MPI mpirun: MPMD gives ranks different
# environments, `unshare --uts` gives a rank its own host name.
# usage: mpi_gate.sh PROBE STANDINS SCRATCH_BASE
PROBE=$1 STANDINS=$2
source "$(dirname "$0")/lib.sh"
new_scratch "$3"
command -v mpirun >/dev/null || skip "mpirun not installed"
[ -n "$REAL_NCCL" ] && [ -r "$REAL_NCCL" ] || skip "no libnccl.so.2 in the loader cache (ldconfig -p)"

# mpi OUT WANT_EXIT mpirun-args...: every rank must exit WANT_EXIT (mpirun passes the first
# non-zero rank exit code on).
mpi() {
  local out=$1 want=$2; shift 2
  local rc=0
  timeout -k 10 120 mpirun "$@" >"$out.txt" 2>"$out.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$out.txt" "$out.err" >&2; fail "mpirun exit $rc, expected $want"; }
}
J() { echo "--json $SCRATCH/$1.json"; }

echo "== 4 ranks, one environment: pass, exit 0"
mpi "$SCRATCH/same" 0 -np 4 "$PROBE" --json "$SCRATCH/same.json"
jq_is "$SCRATCH/same.json" '"\(.verdict) \(.nranks) \(.configurations|length) \(.configurations[0].ranks|join(","))"' "pass 4 1 0,1,2,3"
jq_is "$SCRATCH/same.json" '.mode' mpi
bytes=$(jq -r '.bytes_at_root' "$SCRATCH/same.json")
[ "$bytes" -gt 0 ] || fail "bytes_at_root not reported"
grep -q "ranks 0-3" "$SCRATCH/same.txt" || fail "human report does not fold ranks 0-3"

echo "== 3 ranks with NCCL 2.28.9, rank 3 with 2.27.3: reject, rank 3 blamed alone"
mpi "$SCRATCH/nccl" 1 -np 3 "$PROBE" --json "$SCRATCH/nccl.json" : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-2.27.3" "$PROBE" --json "$SCRATCH/nccl.json"
jq_is "$SCRATCH/nccl.json" '.verdict' reject
jq_is "$SCRATCH/nccl.json" '[.findings[] | select(.code=="nccl-version-mismatch") | "\(.severity) \(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "error 3 2.28.9 2.27.3"
jq_is "$SCRATCH/nccl.json" '[.findings[] | select(.severity=="error") | .code] | unique | join(",")' "nccl-version-mismatch"
grep -q "nccl-version-mismatch" "$SCRATCH/nccl.txt" || fail "human report lacks the finding"

echo "== NCCL_PROTO set on rank 2 only: nccl-env-mismatch, an error (wire protocol)"
mpi "$SCRATCH/proto" 1 -np 2 "$PROBE" --json "$SCRATCH/proto.json" : \
  -np 1 -x NCCL_PROTO=LL128 "$PROBE" --json "$SCRATCH/proto.json" : -np 1 "$PROBE" --json "$SCRATCH/proto.json"
jq_is "$SCRATCH/proto.json" '[.findings[] | select(.code=="nccl-env-mismatch") | "\(.severity) \(.ranks|join(","))"] | join(";")' "error 2"
jq -r '.findings[] | select(.code=="nccl-env-mismatch") | .message' "$SCRATCH/proto.json" | grep -q NCCL_PROTO \
  || fail "nccl-env-mismatch does not name NCCL_PROTO"

echo "== a net plugin on rank 1 only: nccl-net-plugin-mismatch"
mpi "$SCRATCH/plugin" 1 -np 1 "$PROBE" --json "$SCRATCH/plugin.json" : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/net-v8" "$PROBE" --json "$SCRATCH/plugin.json" : \
  -np 2 "$PROBE" --json "$SCRATCH/plugin.json"
jq_is "$SCRATCH/plugin.json" '[.findings[] | select(.code=="nccl-net-plugin-mismatch") | "\(.severity) \(.ranks|join(","))"] | join(";")' "error 1"

echo "== a different PyTorch on rank 0: torch-version-mismatch blames rank 0"
make_torch_env "$SCRATCH/envA" 2.5.1+cu124 torch-dyn nccl-2.21.5 >/dev/null
make_torch_env "$SCRATCH/envB" 2.4.0+cu124 torch-dyn nccl-2.21.5 >/dev/null
mpi "$SCRATCH/torch" 1 -np 1 -x VIRTUAL_ENV="$SCRATCH/envB" "$PROBE" --json "$SCRATCH/torch.json" : \
  -np 3 -x VIRTUAL_ENV="$SCRATCH/envA" "$PROBE" --json "$SCRATCH/torch.json"
jq_is "$SCRATCH/torch.json" '[.findings[] | select(.code=="torch-version-mismatch") | "\(.severity) \(.ranks|join(",")) \(.expected) \(.found)"] | join(";")' \
  "error 0 2.5.1+cu124 2.4.0+cu124"

echo "== the odd host is named: rank 3 runs on node02 with another NCCL"
if unshare --uts true 2>/dev/null; then
  mpi "$SCRATCH/host" 1 -np 3 "$PROBE" --json "$SCRATCH/host.json" : \
    -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-2.27.3" unshare --uts sh -c "hostname node02 && exec $PROBE --json $SCRATCH/host.json"
  jq_is "$SCRATCH/host.json" '[.findings[] | select(.code=="nccl-version-mismatch") | "\(.ranks|join(",")) \(.hosts|join(","))"] | join(";")' "3 node02"
  jq_is "$SCRATCH/host.json" '.nhosts' 2
  grep -q "node02" "$SCRATCH/host.txt" || fail "human report does not name node02"
else
  echo "(unshare --uts not permitted here: host naming covered by compare/ unit tests only)"
fi

echo "== a rank whose probe hangs, with a longer --timeout: it gives up at rank 0's deadline and"
echo "   reports, so rank-timeout names why, every rank finalizes and the job ends near the deadline"
start=$(date +%s.%N)
mpi "$SCRATCH/hang" 1 -np 3 "$PROBE" --timeout 5 --json "$SCRATCH/hang.json" : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-ctor-hang" "$PROBE" --timeout 120 --json "$SCRATCH/hang.json"
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
jq_is "$SCRATCH/hang.json" '[.findings[] | select(.code=="rank-timeout") | "\(.severity) \(.ranks|join(","))"] | join(";")' "error 3"
jq_is "$SCRATCH/hang.json" '.verdict' reject
jq -r '.findings[] | select(.code=="rank-timeout") | .message' "$SCRATCH/hang.json" |
  grep -Eq "its probe did not return within [0-9.]+ s \(hung; the probe killed it\)" ||
  fail "rank 3 did not report why: $(jq -c '.findings' "$SCRATCH/hang.json")"
! grep -q "MPI_ABORT" "$SCRATCH/hang.err" || fail "the job was aborted although every rank answered"
echo "elapsed ${elapsed}s (deadline 5 s)"
awk -v e="$elapsed" 'BEGIN { exit !(e < 12) }' || fail "took ${elapsed}s, more than the 5 s deadline plus a few seconds"
echo "== the record's pid is the rank's process, not the probe's forked child"
# exec keeps the shell's pid, so each rank knows its own pid before the probe starts.
mpi "$SCRATCH/pid" 0 -np 2 sh -c 'echo $$ >"$0/pid.$OMPI_COMM_WORLD_RANK"; exec "$1" -q --rank-report "$0/rank-%r.json"' \
  "$SCRATCH" "$PROBE"
for r in 0 1; do
  jq_is "$SCRATCH/rank-$r.json" .pid "$(cat "$SCRATCH/pid.$r")"
done

echo "== a rank hung, and the representative of another NCCL whose own --timeout ends"
echo "   first: it waits for rank 0's deadline, so both rank-timeout and nccl-version-mismatch"
mpi "$SCRATCH/hang_minority" 1 -np 2 "$PROBE" --timeout 8 --json "$SCRATCH/hang_minority.json" : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-ctor-hang" "$PROBE" --timeout 120 : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-2.27.3" "$PROBE" --timeout 4
jq_is "$SCRATCH/hang_minority.json" '[.findings[] | select(.severity=="error") | "\(.code) \(.ranks|join(","))"] | sort | join(";")' \
  "nccl-version-mismatch 3;rank-timeout 2"

echo "== the same with the representative's --timeout equal to rank 0's (the usual command line)"
mpi "$SCRATCH/hang_minority_eq" 1 -np 2 "$PROBE" --timeout 6 --json "$SCRATCH/hang_minority_eq.json" : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-ctor-hang" "$PROBE" --timeout 120 : \
  -np 1 -x LD_LIBRARY_PATH="$STANDINS/nccl-2.27.3" "$PROBE" --timeout 6
jq_is "$SCRATCH/hang_minority_eq.json" '[.findings[] | select(.severity=="error") | "\(.code) \(.ranks|join(","))"] | sort | join(";")' \
  "nccl-version-mismatch 3;rank-timeout 2"
echo PASS
