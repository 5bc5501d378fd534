#!/usr/bin/env bash
# The real-wheel step: fetches the matrix once into the wheel cache and the trees every step reads
# (tests/real/paths.sh), then runs every real-wheel test
# (CTest label `real`) against the build in BUILD_DIR. Under CI=true a skipped test fails the
# step, as in tools/test.sh.
# usage: tests/real/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
[ -f "$build/CTestTestfile.cmake" ] || { echo "run.sh: $build is not a configured build directory" >&2; exit 2; }
start=$(date +%s)
tests/real/fetch.sh
fetched=$(date +%s)
cmake --build "$build" --target denpex-probe
rc=0
(cd "$build" && ctest -L real -j2 --output-on-failure --timeout 900) | tee "$build/ctest-real.out" || rc=$?
end=$(date +%s)
echo "run.sh: fetch $((fetched - start)) s, tests $((end - fetched)) s"
if grep -q '\*\*\*Skipped' "$build/ctest-real.out" && [ "${CI:-}" = true ]; then
  echo "run.sh: FAIL: real-wheel tests skipped under CI" >&2
  rc=1
fi
exit "$rc"
