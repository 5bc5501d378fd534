#!/usr/bin/env bash
# The portable build as a manylinux wheel (tools/portable-wheel.py), installed the way torchrun
# users install things: `pip install` of the wheel file into a fresh venv, then the gate run
# from there alone, under the real torchrun (torch 2.7.1 from the wheel cache) and under
# mpirun (the MPI plugins found beside the venv's binary), and `pip uninstall` leaving nothing.
#   tests/torchrun/wheel_test.sh TARBALL WORKDIR
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
tarball=$1 work=$2
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
wheel=$(python3 "$SRC/tools/portable-wheel.py" "$tarball" "$work/dist")
case $(basename "$wheel") in
  denpex_probe-*-py3-none-manylinux_2_31_x86_64.whl) ;;
  *) fail "unexpected wheel name $wheel" ;;
esac
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --no-index "$wheel"
bin=$work/venv/bin/denpex-probe
[ -x "$bin" ] || fail "pip did not install bin/denpex-probe"
file -b "$bin" | grep -q ELF || fail "bin/denpex-probe is not the binary itself: $(file -b "$bin")"
"$bin" --version | grep -q "^denpex-probe " || fail "--version"
[ "$("$work/venv/bin/python" -c 'import denpex_probe; print(denpex_probe.binary())')" = "$bin" ] ||
  fail "denpex_probe.binary() does not name the installed binary"
ls "$work/venv/lib/denpex/"denpex-mpi-*.so >/dev/null 2>&1 || fail "no MPI plugins in the venv's lib/denpex"
echo "ok installed: $(basename "$wheel") -> $bin"

rc=0; "$bin" -q --json "$work/alone.json" || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "alone: exit $rc"
echo "ok alone: exit $rc, verdict $(jq -r .verdict "$work/alone.json")"

if [ -e "$WHEEL_TREES/env/torch-2.7.1/torch/distributed/run.py" ]; then
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rc=0
  PYTHONPATH=$WHEEL_TREES/env/torch-2.7.1 timeout 300 python3 -m torch.distributed.run --nnodes 1 \
    --nproc-per-node 2 --rdzv-backend c10d --rdzv-endpoint "127.0.0.1:$port" --max-restarts 0 \
    --no-python "$bin" -q --json "$work/torchrun.json" >"$work/torchrun.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { tail -20 "$work/torchrun.txt" >&2; fail "torchrun: exit $rc"; }
  [ "$(jq -r '"\(.mode) \(.nranks) \(.verdict)"' "$work/torchrun.json")" = "torchrun 2 pass" ] ||
    fail "torchrun report: $(jq -c '{mode,nranks,verdict}' "$work/torchrun.json")"
  echo "ok torchrun --no-python <venv>/bin/denpex-probe: 2 ranks, pass"
else
  echo "(no torch 2.7.1 in $WHEEL_TREES: the torchrun run is left out; tests/torchrun/torch_env.sh 2.7.1)"
fi
if command -v mpirun >/dev/null; then
  rc=0
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp \
    OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo \
    timeout 300 mpirun --oversubscribe -np 2 "$bin" -q --json "$work/mpi.json" >"$work/mpi.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { tail -20 "$work/mpi.txt" >&2; fail "mpirun: exit $rc"; }
  [ "$(jq -r '"\(.mode) \(.nranks)"' "$work/mpi.json")" = "mpi 2" ] || fail "mpirun report"
  echo "ok mpirun -np 2 <venv>/bin/denpex-probe: 2 ranks through the venv's MPI plugin"
fi
"$work/venv/bin/pip" uninstall -y -q denpex-probe
left=$(find "$work/venv" -name 'denpex*' | head -5)
[ -z "$left" ] || fail "pip uninstall left: $left"
echo "ok: the wheel installs, gates (alone, torchrun, mpirun) and uninstalls cleanly"
