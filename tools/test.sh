#!/usr/bin/env bash
# Installs, builds and runs the whole test suite: the README's second quick-start command and
# what .ci/run calls. Usage: tools/test.sh [BUILD_DIR]
# A test skips only when this machine lacks what it needs; the skipped tests and the reasons
# they gave are listed at the end. Under CI (CI=true) a skip fails the run: CI's machine has
# everything, so a skip there is a test that silently stopped testing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tools/install-deps.sh
# Under CI every warning is an error (DENPEX_WERROR); a user's newer compiler only warns.
werror=OFF
[ "${CI:-}" = true ] && werror=ON
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDENPEX_WERROR="$werror"
cmake --build "$build" -j"$(nproc)"
rc=0
(cd "$build" && ctest --output-on-failure -j2 --timeout 600) | tee "$build/ctest.out" || rc=$?
skipped=$(sed -n 's/^.*Test *#[0-9]*: \([^ ]*\) .*\*\*\*Skipped.*$/\1/p' "$build/ctest.out")
if [ -n "$skipped" ]; then
  echo "tools/test.sh: skipped tests and their reasons:"
  for t in $skipped; do
    reason=$(awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" {on=1} on && /SKIP/ {print; exit}' \
      "$build/Testing/Temporary/LastTest.log")
    echo "  $t: ${reason:-no reason printed}"
  done
  if [ "${CI:-}" = true ]; then
    echo "tools/test.sh: FAIL: tests skipped under CI, whose machine has everything they need" >&2
    rc=1
  fi
fi
exit "$rc"
