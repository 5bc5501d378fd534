#!/usr/bin/env bash
# Makes sure the real torch site-packages trees the torchrun tests start `torch.distributed.run`
# from, and the real NCCL wheels one agent preloads, are in the wheel trees unpacked from the
# shared wheel cache (tests/real/paths.sh), never in the system Python.
#   torch_env.sh VERSION...   e.g. torch_env.sh 2.3.1 2.7.1 ; NCCL wheels: nccl-2.21.5 ...
# Each name is a line of the real-wheel matrix (tests/real/matrix.txt: env/torch-V, env/nccl-V),
# and tests/real/fetch.sh fills the cache and the trees: one layout, one copy of every wheel
# (hard links), one lock, whichever test asks first. Exit 0 when every tree is there, 1 (one line on stderr) when
# the fetch failed or a name is not in the matrix.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
envs=()
for want in "$@"; do
  case $want in
    nccl-*) envs+=("$want") ;;
    *) envs+=("torch-$want") ;;
  esac
done
for e in "${envs[@]}"; do
  grep -q "^$e:" "$HERE/../real/matrix.txt" ||
    { echo "torch_env.sh: $e is not a line of tests/real/matrix.txt" >&2; exit 1; }
done
if ! "$HERE/../real/fetch.sh" --check >/dev/null 2>&1; then
  "$HERE/../real/fetch.sh" >&2 || { echo "torch_env.sh: tests/real/fetch.sh failed" >&2; exit 1; }
fi
for e in "${envs[@]}"; do
  [ -s "$WHEEL_TREES/env/$e/.denpex-env" ] || { echo "torch_env.sh: no $WHEEL_TREES/env/$e after the fetch" >&2; exit 1; }
done
