#!/usr/bin/env bash
# Issue 11 item 2 and issue 15 item 2: which launcher started the probe, and whether the MPI it
# loaded talks to that launcher. N singletons (each rank a world of one) must never pass.
#   - mpiexec.hydra (Debian's mpich) starting a probe whose MPI is Open MPI: every rank is a
#     singleton; MPI_Comm_size (1) differs from PMI_SIZE (3): exit 2, one line, no PASS.
# usage: mpi_launchers.sh PROBE STANDINS SCRATCH_BASE
PROBE=$1 STANDINS=$2
source "$(dirname "$0")/lib.sh"
new_scratch "$3"
command -v mpiexec.hydra >/dev/null || skip "mpiexec.hydra not installed (Debian package mpich)"

echo "== mpiexec.hydra -n 3 with an Open MPI transport: 3 singletons, exit 2, no PASS"
rc=0
timeout 120 mpiexec.hydra -n 3 "$PROBE" --timeout 20 >"$SCRATCH/single.txt" 2>"$SCRATCH/single.err" || rc=$?
cat "$SCRATCH/single.err"
[ "$rc" = 2 ] || { cat "$SCRATCH/single.txt"; fail "exit $rc, expected 2"; }
! grep -q "PASS" "$SCRATCH/single.txt" || fail "a singleton claimed a pass"
[ "$(grep -c "MPI_Comm_size is 1 but mpiexec.hydra started 3 ranks (PMI_SIZE=3)" "$SCRATCH/single.err")" = 3 ] ||
  fail "not every rank said that MPI_Comm_size is 1 but PMI_SIZE is 3"
echo PASS
