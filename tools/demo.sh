#!/usr/bin/env bash
# Installs, builds and gates this machine as a 4-rank job: the README's first quick-start
# command. Usage: tools/demo.sh [BUILD_DIR] [NRANKS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-4}
tools/install-deps.sh
# The same flags as tools/test.sh (CI: warnings are errors), so running both reuses one build.
werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDENPEX_WERROR="$werror" >/dev/null
cmake --build "$build" -j"$(nproc)" --target denpex-probe
# Open MPI refuses root unless told; this machine has fewer cores than ranks.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
mpirun --oversubscribe -np "$n" "$build/launch/denpex-probe" || rc=$?
echo "mpirun -np $n denpex-probe exited $rc (0 pass, 1 reject, 2 could not judge)"
exit "$rc"
