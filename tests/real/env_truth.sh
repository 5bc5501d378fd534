#!/usr/bin/env bash
# Python environment truth on real wheels, in the layouts people install into: a real venv
# (python3 -m venv, real pip uninstall), a conda-style prefix assembled from PyPI wheels (no
# conda channel is reachable here: the real torch and NCCL wheels, the interpreter given conda's
# DT_RPATH $ORIGIN/../lib, conda's own NCCL in <prefix>/lib), and `pip install --user`. In each,
# what the probe says PyTorch loads is checked against /proc/PID/maps of the real import.
# usage: env_truth.sh PROBE SCRATCH_BASE [venv|conda|user]   (no section: all three)
# CTest runs each section as its own test; the conda layout's name says it is assembled from
# PyPI wheels.
source "$(dirname "$0")/lib.sh"
real_setup "$1" "$2"
SECTION=${3:-all}
case $SECTION in all | venv | conda | user) ;; *) fail "unknown section '$SECTION' (venv, conda or user)" ;; esac
want() { [ "$SECTION" = all ] || [ "$SECTION" = "$1" ]; }
"$PY" -m venv --help >/dev/null 2>&1 || skip "$PY has no venv module (Debian: apt-get install python3-venv)"
command -v patchelf >/dev/null || skip "patchelf not installed (the conda-style interpreter needs it)"

# torch_maps OUT PYTHON [VAR=value...]: the real import; the libnccl it mapped.
IMPORT='import torch
print("TORCH " + torch.__version__)'
torch_loads() {
  local out=$1 python=$2; shift 2
  PY_RC=0
  env -i PATH="$TEST_PATH" HOME="$SCRATCH/home" LD_BIND_NOW=1 "$@" "$python" -c "$IMPORT
$MAPS" >"$out.out" 2>"$out.err" || PY_RC=$?
  LAST_PY_OUT=$out.out
}
# agree JSON: the probe's PyTorch NCCL is the file the import mapped (or both have none).
agree() {
  local said mapped
  said=$(jq -r '.ranks[0].torch.nccl.path // ""' "$1")
  mapped=$(mapped_nccl | head -1)
  [ -z "$mapped" ] || mapped=$(readlink -f "$mapped")
  [ "$said" = "$mapped" ] || fail "$1: the probe says PyTorch loads '$said', the real import mapped '$mapped'"
  echo "  probe and /proc/PID/maps agree: ${said:-no NCCL}"
}

if want venv; then
echo "== a venv with torch 2.3.1 and, installed after it, nvidia-nccl-cu13 2.27.7"
V=$SCRATCH/venv
"$PY" -m venv "$V" || fail "python3 -m venv failed"
SITE=$(echo "$V"/lib/python3.*/site-packages)
cp -al "$ENVS/torch-2.3.1/." "$SITE/"
rm -f "$SITE/.denpex-env"
add_wheel "$SITE" nccl-cu13-2.27.7
probe_alone "$SCRATCH/two" VIRTUAL_ENV="$V" PATH="$V/bin:$TEST_PATH"
[ "$PROBE_RC" = 1 ] || { cat "$SCRATCH/two.txt"; fail "exit $PROBE_RC with two NCCL wheels"; }
jq_is "$SCRATCH/two.json" "$(printf '%s' '[.findings[] | select(.code=="nccl-wheel-conflict") | .severity] | join(",")')" error
jq -r '.findings[] | select(.code=="nccl-wheel-conflict") | .fix' "$SCRATCH/two.json" |
  grep -qF "pip uninstall -y nvidia-nccl-cu12 nvidia-nccl-cu13, then pip install nvidia-nccl-cu12==2.20.5" ||
  fail "nccl-wheel-conflict's fix does not name both wheels and torch's pin"
jq_is "$SCRATCH/two.json" '[.ranks[0].nccl_wheels[] | "\(.project) \(.version) \(.owns_library)"] | join(";")' \
  "nvidia-nccl-cu12 2.20.5 no;nvidia-nccl-cu13 2.27.7 yes"
jq_is "$SCRATCH/two.json" '.ranks[0].torch.nccl | "\(.version) \(.cuda_build) \(.linkage)"' "2.27.7 13.0 wheel"
jq_is "$SCRATCH/two.json" "$(printf '%s' '[.findings[] | select(.code=="torch-nccl-pin-mismatch") | .found] | join(",")')" \
  "nvidia-nccl-cu13 2.27.7"
torch_loads "$SCRATCH/two.import" "$V/bin/python"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/two.import.err"; fail "import torch failed in the two-wheel venv"; }
agree "$SCRATCH/two.json"

echo "== the real pip uninstalls nvidia-nccl-cu13: the cu12 wheel's libnccl.so.2 goes with it"
"$V/bin/python" -m pip uninstall -y -q nvidia-nccl-cu13 >"$SCRATCH/uninstall.out" 2>&1 ||
  { cat "$SCRATCH/uninstall.out"; fail "pip uninstall nvidia-nccl-cu13 failed"; }
[ ! -e "$SITE/nvidia/nccl/lib/libnccl.so.2" ] || fail "pip left nvidia/nccl/lib/libnccl.so.2"
[ -d "$SITE/nvidia_nccl_cu12-2.20.5.dist-info" ] || fail "pip removed the cu12 dist-info too"
probe_alone "$SCRATCH/gone" VIRTUAL_ENV="$V" PATH="$V/bin:$TEST_PATH"
jq_is "$SCRATCH/gone.json" '[.ranks[0].nccl_wheels[] | "\(.project) \(.owns_library)"] | join(";")' "nvidia-nccl-cu12 no"
jq -r '.findings[] | select(.code=="torch-nccl-pin-mismatch") | .message' "$SCRATCH/gone.json" |
  grep -q "nvidia-nccl-cu12 2.20.5 recorded in .* but its libnccl.so.2 gone" ||
  fail "the pin warning does not say the cu12 wheel's library is gone"
torch_loads "$SCRATCH/gone.import" "$V/bin/python"
if [ -n "$REAL_NCCL" ]; then
  # PyTorch's RPATH finds nothing now: the loader cache's NCCL (the CUDA toolkit's) is loaded.
  jq_is "$SCRATCH/gone.json" '.ranks[0].torch.nccl.linkage' system
  [ "$PY_RC" = 0 ] || { cat "$SCRATCH/gone.import.err"; fail "import torch failed with the system NCCL"; }
else
  jq_is "$SCRATCH/gone.json" '.ranks[0].nccl.status' missing
  grep -q "libnccl.so.2: cannot open shared object file" "$SCRATCH/gone.import.err" ||
    fail "import torch did not fail for want of libnccl.so.2"
fi
agree "$SCRATCH/gone.json"

echo "== the fix: both uninstalled, the pinned wheel reinstalled: no finding about NCCL wheels"
"$V/bin/python" -m pip uninstall -y -q nvidia-nccl-cu12 >"$SCRATCH/uninstall2.out" 2>&1 ||
  { cat "$SCRATCH/uninstall2.out"; fail "pip uninstall nvidia-nccl-cu12 failed"; }
add_wheel "$SITE" nccl-2.20.5  # pip install nvidia-nccl-cu12==2.20.5, from the cache
probe_alone "$SCRATCH/fixed" VIRTUAL_ENV="$V" PATH="$V/bin:$TEST_PATH"
[ "$PROBE_RC" = 0 ] || { cat "$SCRATCH/fixed.txt"; fail "exit $PROBE_RC after the fix"; }
jq_is "$SCRATCH/fixed.json" '[.findings[] | select(.code|test("wheel|pin|abi"))] | length' 0
jq_is "$SCRATCH/fixed.json" '.ranks[0].torch.nccl_requirement_met' yes
torch_loads "$SCRATCH/fixed.import" "$V/bin/python"
[ "$PY_RC" = 0 ] || fail "import torch failed after the fix"
agree "$SCRATCH/fixed.json"
fi

# A conda environment's layout: <prefix>/bin/python3.11 with DT_RPATH $ORIGIN/../lib (conda's
# interpreter links its own libraries that way), <prefix>/lib/python3.11 the standard library,
# site-packages, conda-meta/. Debian's site.py puts no prefix's lib/python3.11/site-packages on
# sys.path outside a venv (it adds dist-packages); conda's adds it after the user site, which is
# what site.addsitedir does here.
make_conda() {
  local P=$1 real_py
  real_py=$(readlink -f "$PY")
  mkdir -p "$P/bin" "$P/lib/python3.11/site-packages" "$P/conda-meta"
  cp "$real_py" "$P/bin/python3.11"
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$P/bin/python3.11"
  ln -s python3.11 "$P/bin/python3"
  local f
  for f in /usr/lib/python3.11/*; do
    [ "$(basename "$f")" = site-packages ] || ln -s "$f" "$P/lib/python3.11/$(basename "$f")"
  done
  echo "==> 2026-12-01 conda create -p $P python=3.11 (assembled from PyPI wheels) <==" >"$P/conda-meta/history"
}
conda_import() {  # conda_import OUT PREFIX [VAR=value...]
  local out=$1 P=$2; shift 2
  PY_RC=0
  env -i PATH="$P/bin:$TEST_PATH" HOME="$SCRATCH/home" CONDA_PREFIX="$P" LD_BIND_NOW=1 "$@" \
    "$P/bin/python3" -c "import site; site.addsitedir('$P/lib/python3.11/site-packages')
$IMPORT
$MAPS" >"$out.out" 2>"$out.err" || PY_RC=$?
  LAST_PY_OUT=$out.out
}

C=$SCRATCH/conda
CSITE=$C/lib/python3.11/site-packages
# new_conda: the conda-style prefix with torch 2.3.1 and its wheel NCCL in site-packages.
new_conda() {
  make_conda "$C"
  cp -al "$ENVS/torch-2.3.1/." "$CSITE/" && rm -f "$CSITE/.denpex-env"
}

if want conda; then
echo "== conda layout from PyPI wheels: torch 2.3.1 with its wheel NCCL"
new_conda
probe_alone "$SCRATCH/conda1" CONDA_PREFIX="$C" PATH="$C/bin:$TEST_PATH"
[ "$PROBE_RC" = 0 ] || { cat "$SCRATCH/conda1.txt"; fail "exit $PROBE_RC in the conda layout"; }
jq_is "$SCRATCH/conda1.json" '.ranks[0].torch | "\(.version) \(.site_packages) \(.nccl.linkage)"' "2.3.1+cu121 $CSITE wheel"
conda_import "$SCRATCH/conda1.import" "$C"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/conda1.import.err"; fail "import torch failed in the conda layout"; }
agree "$SCRATCH/conda1.json"

echo "== conda layout: conda's own NCCL 2.18.3 in <prefix>/lib, the NCCL wheel removed"
cp "$(nccl_lib nccl-2.18.3)" "$C/lib/libnccl.so.2"
rm -rf "$CSITE/nvidia/nccl" "$CSITE"/nvidia_nccl_cu12-*.dist-info
probe_alone "$SCRATCH/conda2" CONDA_PREFIX="$C" PATH="$C/bin:$TEST_PATH"
[ "$PROBE_RC" = 1 ] || { cat "$SCRATCH/conda2.txt"; fail "exit $PROBE_RC with conda's NCCL 2.18.3"; }
jq_is "$SCRATCH/conda2.json" '.ranks[0].torch.nccl | "\(.path) \(.version)"' "$C/lib/libnccl.so.2 2.18.3"
jq_is "$SCRATCH/conda2.json" '[.ranks[0].abi[0].missing[]] | join(",")' "ncclCommDeregister,ncclCommRegister"
conda_import "$SCRATCH/conda2.import" "$C"
[ "$PY_RC" != 0 ] || fail "import torch succeeded against conda's NCCL 2.18.3"
grep -q "undefined symbol: ncclComm\(De\)\?[Rr]egister" "$SCRATCH/conda2.import.err" ||
  { cat "$SCRATCH/conda2.import.err"; fail "import torch did not fail on ncclCommRegister"; }
echo "  probe: nccl-abi-mismatch with $C/lib/libnccl.so.2; import: $(grep -o 'undefined symbol: [A-Za-z]*' "$SCRATCH/conda2.import.err" | head -1)"

fi

if want user; then
[ -d "$C" ] || new_conda
echo "== pip install --user: torch 2.7.1 in ~/.local shadows the conda environment's torch 2.3.1"
U=$SCRATCH/home/.local/lib/python3.11/site-packages
mkdir -p "$(dirname "$U")"
cp -al "$ENVS/torch-2.7.1" "$U" && rm -f "$U/.denpex-env"
probe_alone "$SCRATCH/user" CONDA_PREFIX="$C" PATH="$C/bin:$TEST_PATH"
jq_is "$SCRATCH/user.json" '.ranks[0].torch | "\(.version) \(.site_packages)"' "2.7.1+cu126 $U"
conda_import "$SCRATCH/user.import" "$C"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/user.import.err"; fail "import torch failed with the user site"; }
grep -q "^TORCH 2.7.1" "$SCRATCH/user.import.out" || fail "the real import did not get the user site's torch"
agree "$SCRATCH/user.json"

echo "== pip install --user with the system python3: the probe finds the user site"
probe_alone "$SCRATCH/user2"
jq_is "$SCRATCH/user2.json" '.ranks[0].torch | "\(.version) \(.site_packages)"' "2.7.1+cu126 $U"
torch_loads "$SCRATCH/user2.import" "$PY"
[ "$PY_RC" = 0 ] || { cat "$SCRATCH/user2.import.err"; fail "import torch from the user site failed"; }
agree "$SCRATCH/user2.json"
echo "== PYTHONNOUSERSITE=1: neither finds it"
probe_alone "$SCRATCH/nouser" PYTHONNOUSERSITE=1
jq_is "$SCRATCH/nouser.json" '.ranks[0].torch.status' missing
torch_loads "$SCRATCH/nouser.import" "$PY" PYTHONNOUSERSITE=1
grep -q "No module named 'torch'" "$SCRATCH/nouser.import.err" ||
  fail "import torch under PYTHONNOUSERSITE=1 did not fail for want of torch"
fi
echo "PASS"
