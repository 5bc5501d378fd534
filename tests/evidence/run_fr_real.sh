#!/usr/bin/env bash
# Makes Flight Recorder dumps with the real torch (2.8.0 or later: the first whose recorder
# records gloo) on the CPU, then runs the [real-torch-dumps] cases of evidence_fr_dump_test on
# them instead of the committed ones. Skips (77) where no such torch is installed.
#   run_fr_real.sh TEST_BINARY WORKDIR
# The torch: $DENPEX_FR_TORCH (a site-packages directory), else the first of the wheel caches'
# torch-2.8.0 environments that exists (tests/real/paths.sh's trees, then a trees directory made
# for it alone).
set -u
bin=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
site=${DENPEX_FR_TORCH:-}
if [ -z "$site" ]; then
  # shellcheck source=tests/real/paths.sh
  source "$here/../real/paths.sh"
  for d in "$WHEEL_TREES/env/torch-2.8.0" /var/cache/denpex-fr/env/torch-2.8.0; do
    [ -d "$d/torch" ] && { site=$d; break; }
  done
fi
if [ -z "$site" ] || [ ! -d "$site/torch" ]; then
  echo "SKIP: no torch 2.8.0+ site-packages (set DENPEX_FR_TORCH); the committed dumps were made by fr_gloo_gen.py with torch 2.8.0"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
PYTHONPATH=$site timeout 600 python3 "$here/fr_gloo_gen.py" "$work" >"$work/gen.log" 2>&1 ||
  { tail -20 "$work/gen.log"; echo "FAIL: fr_gloo_gen.py"; exit 1; }
head -1 "$work/gen.log"
DENPEX_FR_REAL_DIR=$work "$bin" "[real-torch-dumps]"
