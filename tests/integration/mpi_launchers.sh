#!/usr/bin/env bash
# MPI is loaded, not linked, and the probe loads the MPI of
# the launcher that started it; N singletons (each rank a world of one) never pass.
#   - denpex-probe has no libmpi among its NEEDED entries; alone mode and compare run from a
#     copy with no plugins beside it; under mpirun that copy says which plugin it lacks (exit 2)
#   - mpiexec.hydra -n 3 (Debian's mpich) prints the 3-rank report through the MPICH plugin
#   - mpirun -np 3 (Open MPI) prints it through the Open MPI plugin
#   - mpiexec.hydra -n 3 with --mpi open-mpi: 3 Open MPI singletons; MPI_Comm_size (1) differs
#     from PMI_SIZE (3): exit 2 on every rank, one line each, no PASS
# usage: mpi_launchers.sh PROBE STANDINS SCRATCH_BASE
PROBE=$1 STANDINS=$2
source "$(dirname "$0")/lib.sh"
new_scratch "$3"
command -v mpirun >/dev/null || skip "mpirun not installed"
PLUGINS=$(cd "$(dirname "$PROBE")/../lib/denpex" && pwd) || fail "no lib/denpex beside $PROBE"
[ -f "$PLUGINS/denpex-mpi-open-mpi.so" ] || fail "the Open MPI plugin was not built"

echo "== readelf -d: no libmpi among denpex-probe's NEEDED entries, nor the plugins'"
needed=$(readelf -d "$PROBE" | grep NEEDED)
echo "$needed"
! grep -q "libmpi" <<<"$needed" || fail "denpex-probe links an MPI library"
! readelf -d "$PLUGINS"/*.so | grep NEEDED | grep -q libmpi || fail "a plugin names its libmpi"

echo "== a copy with no plugins beside it: alone mode and compare need no MPI"
mkdir -p "$SCRATCH/bare/bin"
cp "$PROBE" "$SCRATCH/bare/bin/denpex-probe"
BARE=$SCRATCH/bare/bin/denpex-probe
rc=0; "$BARE" --rank-report "$SCRATCH/bare.json" >"$SCRATCH/bare.txt" 2>&1 || rc=$?
[ "$rc" -le 1 ] || { cat "$SCRATCH/bare.txt"; fail "alone mode exited $rc"; }
grep -q "(1 rank on 1 host)" "$SCRATCH/bare.txt" || fail "alone mode printed no report"
rc=0; "$BARE" compare "$SCRATCH/bare.json" >/dev/null 2>&1 || rc=$?
[ "$rc" -le 1 ] || fail "compare exited $rc"
echo "== the same copy under mpirun: exit 2, naming the plugin it lacks"
rc=0; timeout 120 mpirun -np 2 "$BARE" --timeout 20 >"$SCRATCH/bare_mpi.txt" 2>"$SCRATCH/bare_mpi.err" || rc=$?
cat "$SCRATCH/bare_mpi.err" | head -3
[ "$rc" = 2 ] || fail "exit $rc, expected 2"
grep -q "started by Open MPI's mpirun (OMPI_COMM_WORLD_SIZE): libmpi.so.40 resolves to .* and its transport plugin $SCRATCH/bare/lib/denpex/denpex-mpi-open-mpi.so is not there" "$SCRATCH/bare_mpi.err" ||
  fail "no line naming the missing Open MPI plugin"

command -v mpiexec.hydra >/dev/null || skip "mpiexec.hydra not installed (Debian package mpich; tools/install-deps.sh)"
[ -f "$PLUGINS/denpex-mpi-mpich.so" ] || fail "the MPICH plugin was not built (libmpich-dev missing at configure time)"

echo "== mpiexec.hydra -n 3 (MPICH): the 3-rank report"
rc=0
timeout 120 mpiexec.hydra -n 3 "$PROBE" --timeout 20 --color never --json "$SCRATCH/hydra.json" \
  >"$SCRATCH/hydra.txt" 2>"$SCRATCH/hydra.err" || rc=$?
[ "$rc" = 0 ] || { cat "$SCRATCH/hydra.txt" "$SCRATCH/hydra.err"; fail "exit $rc, expected 0"; }
jq_is "$SCRATCH/hydra.json" '"\(.mode) \(.nranks) \(.verdict)"' "mpi 3 pass"
[ "$(grep -c '^denpex-probe: PASS .*(3 ranks on 1 host)' "$SCRATCH/hydra.txt")" = 1 ] ||
  fail "not exactly one 3-rank PASS line: $(cat "$SCRATCH/hydra.txt")"

echo "== mpiexec.hydra with a rank on another NCCL: the MPICH transport carries the records"
rc=0
timeout 120 mpiexec.hydra -n 2 "$PROBE" --timeout 20 --json "$SCRATCH/hydra_nccl.json" : \
  -n 1 -env LD_LIBRARY_PATH "$STANDINS/nccl-2.27.3" "$PROBE" --timeout 20 \
  >"$SCRATCH/hydra_nccl.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/hydra_nccl.txt"; fail "exit $rc, expected 1"; }
jq_is "$SCRATCH/hydra_nccl.json" '[.findings[] | select(.code=="nccl-version-mismatch") | .ranks | join(",")] | join(";")' "2"

echo "== mpirun -np 3 (Open MPI): the 3-rank report"
rc=0
timeout 120 mpirun -np 3 "$PROBE" --timeout 20 --json "$SCRATCH/ompi.json" >"$SCRATCH/ompi.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$SCRATCH/ompi.txt"; fail "exit $rc, expected 0"; }
jq_is "$SCRATCH/ompi.json" '"\(.mode) \(.nranks) \(.verdict)"' "mpi 3 pass"

echo "== mpiexec.hydra -n 3 --mpi open-mpi: 3 singletons, exit 2, no PASS"
rc=0
timeout 120 mpiexec.hydra -n 3 "$PROBE" --mpi open-mpi --timeout 20 >"$SCRATCH/single.txt" 2>"$SCRATCH/single.err" || rc=$?
cat "$SCRATCH/single.err"
[ "$rc" = 2 ] || { cat "$SCRATCH/single.txt"; fail "exit $rc, expected 2"; }
! grep -q "PASS" "$SCRATCH/single.txt" || fail "a singleton claimed a pass"
[ "$(grep -c "MPI_Comm_size is 1 but mpiexec.hydra started 3 ranks (PMI_SIZE=3)" "$SCRATCH/single.err")" = 3 ] ||
  fail "not every rank said that MPI_Comm_size is 1 but PMI_SIZE is 3"
echo PASS
