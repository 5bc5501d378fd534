#!/usr/bin/env bash
# Makes the real torch site-packages trees the torchrun tests start `torch.distributed.run`
# from, and the real NCCL wheels one agent preloads: from PyPI into the shared wheel cache
# ($DENPEX_WHEEL_CACHE, default /var/cache/denpex-wheels), never into the system Python.
#   torch_env.sh VERSION...   e.g. torch_env.sh 2.3.1 2.7.1 ; NCCL wheels: nccl-2.21.5 ...
# Layout: $CACHE/dl (downloaded wheels), $CACHE/env/torch-V (pip --target trees),
# $CACHE/env/nccl-V (an unpacked nvidia-nccl-cu12 wheel). Idempotent; serialised by
# flock on $CACHE/.lock with every other user of the cache. Exit 0 when every tree is there,
# 1 (one line on stderr) when a download or install failed.
set -euo pipefail
CACHE=${DENPEX_WHEEL_CACHE:-/var/cache/denpex-wheels}
mkdir -p "$CACHE/dl" "$CACHE/env"
exec 9>"$CACHE/.lock"
flock 9
for want in "$@"; do
  case $want in
    nccl-*)
      v=${want#nccl-}
      dest=$CACHE/env/nccl-$v
      [ -e "$dest/nvidia/nccl/lib/libnccl.so.2" ] && continue
      pip download -q --no-deps "nvidia-nccl-cu12==$v" -d "$CACHE/dl" ||
        { echo "torch_env.sh: pip download nvidia-nccl-cu12==$v failed" >&2; exit 1; }
      rm -rf "$dest.part" && mkdir -p "$dest.part"
      python3 -m zipfile -e "$CACHE"/dl/nvidia_nccl_cu12-"$v"-*.whl "$dest.part"
      mv "$dest.part" "$dest" ;;
    *)
      dest=$CACHE/env/torch-$want
      [ -e "$dest/torch/distributed/run.py" ] && continue
      pip download -q "torch==$want" -d "$CACHE/dl" ||
        { echo "torch_env.sh: pip download torch==$want failed" >&2; exit 1; }
      rm -rf "$dest.part"
      pip install -q --no-index --find-links "$CACHE/dl" --target "$dest.part" "torch==$want" ||
        { echo "torch_env.sh: pip install --target $dest torch==$want failed" >&2; exit 1; }
      mv "$dest.part" "$dest" ;;
  esac
done
