#!/usr/bin/env bash
# Fetches torch 2.7.1 into the wheel cache if needed, then check_kubernetes_examples.py.
#   run_kubernetes_examples.sh PROBE EXAMPLES_DIR SCRATCH
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
bash "$HERE/torch_env.sh" 2.7.1 || { echo "SKIP: torch 2.7.1 wheels could not be fetched into $WHEEL_CACHE" >&2; exit 77; }
rm -rf "$3" && mkdir -p "$3"
exec /usr/bin/python3 "$HERE/check_kubernetes_examples.py" "$1" "$2" "$3" "$WHEEL_TREES/env/torch-2.7.1"
