#!/bin/bash
# `denpex-probe --root DIR` on image trees built here from the stand-in libraries:
#   debian   usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.21.5, etc/ld.so.conf.d, no
#            ld.so.cache (origin "ld.so.conf"), no Python
#   conda    /opt/conda/lib/python3.11/site-packages/torch + the nvidia-nccl wheel, whose NCCL is
#            the marker library (its constructor writes a file when loaded) + a system NCCL
#   escape   every libnccl symlink points out of the tree (absolute and ../ chains): nothing
#            outside may be read
#   static   torch in /usr/local/lib/python3.10/dist-packages with NCCL linked in
#   marker   the marker library as the image's system NCCL, listed in LD_PRELOAD too
#   sitepkg  torch in a non-standard directory, found only with --site-packages (image path
#            or host path into the image)
# Exact versions, paths, origins asserted from the JSON; the marker file must never appear.
#
# usage: run_root_test.sh PROBE STANDINS_DIR MARKER_DIR WORKDIR
set -euo pipefail

probe=$(realpath "${1:?usage: run_root_test.sh PROBE STANDINS_DIR MARKER_DIR WORKDIR}")
standins=$(realpath "${2:?missing STANDINS_DIR}")
marker_dir=${3:?missing MARKER_DIR}
work=${4:?missing WORKDIR}

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null || fail "jq not found (apt-get install jq)"
marker=$marker_dir/nccl-loaded
[ -e "$standins/nccl-marker/libnccl.so.2.26.2" ] || fail "stand-ins missing in $standins (build target denpex_standins)"

rm -rf "$work"
mkdir -p "$work"
chmod 755 "$work"
work=$(realpath "$work")
rm -f "$marker"

# jq_is FILE FILTER EXPECTED
jq_is() {
  local got
  got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
  [ "$got" = "$3" ] || { head -c 3000 "$1" >&2; echo >&2; fail "$(basename "$1"): $2: expected '$3', got '$got'"; }
}

# probe_root NAME EXPECTED_EXIT ARGS...: runs the probe on $work/NAME with an empty environment
# (the probing shell's variables must not leak into the image's judgement), JSON in NAME.json.
probe_root() {
  local name=$1 want=$2 rc=0
  shift 2
  env -i PATH=/nonexistent "$probe" --root "$work/$name" --color never --json "$work/$name.json" "$@" \
    >"$work/$name.txt" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.txt" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
  [ ! -e "$marker" ] || fail "$name: the marker library was loaded ($marker exists)"
  echo "ok $name (exit $rc)"
}

# The versioned file of a stand-in NCCL variant (libnccl.so.2.X.Y).
nccl_real() { realpath "$standins/$1/libnccl.so.2"; }

nccl_file() { # nccl_file VARIANT DEST_DIR: libnccl.so.2.X.Y + libnccl.so.2 link, like NVIDIA's packages
  local f
  f=$(nccl_real "$1")
  mkdir -p "$2"
  cp "$f" "$2/"
  ln -sfn "$(basename "$f")" "$2/libnccl.so.2"
}

torch_site() { # torch_site SITE VERSION STANDIN [WHEEL_VARIANT]
  mkdir -p "$1/torch/lib"
  printf "__version__ = '%s'\ndebug = False\ncuda: Optional[str] = '12.4'\ngit_version = '0123'\n" "$2" \
    >"$1/torch/version.py"
  cp "$standins/$3/libtorch_cuda.so" "$1/torch/lib/"
  if [ -n "${4:-}" ]; then
    local f
    f=$(nccl_real "$4")
    mkdir -p "$1/nvidia/nccl/lib" "$1/nvidia_nccl_cu12-${f##*libnccl.so.}.dist-info"
    cp "$f" "$1/nvidia/nccl/lib/libnccl.so.2"
  fi
}

debian_etc() { # debian_etc ROOT: ld.so.conf with the multiarch include, no ld.so.cache
  mkdir -p "$1/etc/ld.so.conf.d"
  echo "include /etc/ld.so.conf.d/*.conf" >"$1/etc/ld.so.conf"
  printf '# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n' \
    >"$1/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
}

# --- debian ------------------------------------------------------------------------------------
R=$work/debian
debian_etc "$R"
nccl_file nccl-2.21.5 "$R/usr/lib/x86_64-linux-gnu"
probe_root debian 0
J=$work/debian.json
jq_is "$J" .verdict pass
jq_is "$J" .nranks 1
jq_is "$J" '.ranks[0].mode' static
jq_is "$J" '.ranks[0].root' "$R"
jq_is "$J" '.ranks[0].nccl.status' not-loaded
jq_is "$J" '.ranks[0].nccl.version' 2.21.5
jq_is "$J" '.ranks[0].nccl.version_code' 22105
jq_is "$J" '.ranks[0].nccl.cuda_build' 12.4
jq_is "$J" '.ranks[0].nccl.path' /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5
jq_is "$J" '.ranks[0].nccl.origin' ld.so.conf
jq_is "$J" '.ranks[0].torch.status' missing
jq_is "$J" '.ranks[0].cuda_driver.status' missing
jq_is "$J" '[.ranks[0].nccl_candidates[] | .version] | join(",")' 2.21.5
jq_is "$J" '[.findings[] | .code] | join(",")' ''  # no driver expected in an image

# --- conda: PyTorch with the wheel NCCL (the marker library) and a system NCCL -----------------
R=$work/conda
debian_etc "$R"
nccl_file nccl-2.21.5 "$R/usr/lib/x86_64-linux-gnu"
SP=$R/opt/conda/lib/python3.11/site-packages
torch_site "$SP" 2.5.1+cu124 torch-dyn nccl-marker
probe_root conda 0
J=$work/conda.json
W=/opt/conda/lib/python3.11/site-packages
jq_is "$J" '.ranks[0].torch.status' ok
jq_is "$J" '.ranks[0].torch.version' 2.5.1+cu124
jq_is "$J" '.ranks[0].torch.cuda' 12.4
jq_is "$J" '.ranks[0].torch.path' "$W/torch"
jq_is "$J" '.ranks[0].torch.nccl.linkage' wheel
jq_is "$J" '.ranks[0].torch.nccl.version' 2.26.2
jq_is "$J" '.ranks[0].torch.nccl.path' "$W/nvidia/nccl/lib/libnccl.so.2"
jq_is "$J" '.ranks[0].nccl.version' 2.26.2
jq_is "$J" '.ranks[0].nccl.cuda_build' 12.8
jq_is "$J" '.ranks[0].nccl.status' not-loaded
jq_is "$J" '.ranks[0].nccl.method' dlopen
jq_is "$J" '.ranks[0].nccl.origin' torch-rpath
jq_is "$J" '.ranks[0].system_nccl.version' 2.21.5
jq_is "$J" '[.ranks[0].abi[] | .missing | length] | add' 0
jq_is "$J" '[.ranks[0].nccl_candidates[] | "\(.origin)=\(.version)"] | join(",")' \
  system-dir=2.21.5,python-env=2.26.2
jq_is "$J" '[.findings[] | .code] | sort | join(",")' torch-nccl-mismatch

# --- escape: symlinks that point out of the tree --------------------------------------------------
# On the host these targets are real NCCL libraries; inside the image they do not exist.
R=$work/escape
debian_etc "$R"
mkdir -p "$R/usr/lib/x86_64-linux-gnu" "$R/usr/local/cuda/lib"
ln -s "$standins/nccl-2.27.3/libnccl.so.2.27.3" "$R/usr/lib/x86_64-linux-gnu/libnccl.so.2"
ups=$(printf '../%.0s' $(seq 1 12))
ln -s "$ups${standins#/}/nccl-marker/libnccl.so.2.26.2" "$R/usr/local/cuda/lib/libnccl.so.2"
echo /usr/local/cuda/lib >"$R/etc/ld.so.conf.d/cuda.conf"
SP=$R/usr/local/lib/python3.11/dist-packages
mkdir -p "$SP"
ln -s "$standins/torch-static" "$SP/torch"   # a whole package directory outside the tree
probe_root escape 1
J=$work/escape.json
jq_is "$J" .verdict reject
jq_is "$J" '.ranks[0].nccl.status' missing
jq_is "$J" '.ranks[0].torch.status' missing
jq_is "$J" '.ranks[0].nccl_candidates | length' 0
jq_is "$J" '[.findings[] | .code] | sort | join(",")' nccl-missing
for v in 2.27.3 2.26.2 2.18.1; do
  ! grep -q "$v" "$J" || fail "escape: version $v from outside the tree appears in the report"
done
! grep -q "$standins" "$J" || fail "escape: a host path outside the tree appears in the report"

# --- static: PyTorch with NCCL linked in, pip-installed into /usr/local --------------------------
R=$work/static
debian_etc "$R"
SP=$R/usr/local/lib/python3.10/dist-packages
torch_site "$SP" 2.1.2+cu121 torch-static
probe_root static 0
J=$work/static.json
jq_is "$J" '.ranks[0].torch.version' 2.1.2+cu121
jq_is "$J" '.ranks[0].torch.path' /usr/local/lib/python3.10/dist-packages/torch
jq_is "$J" '.ranks[0].torch.nccl.linkage' static
jq_is "$J" '.ranks[0].torch.nccl.version' 2.18.1
jq_is "$J" '.ranks[0].nccl.method' static
jq_is "$J" '.ranks[0].nccl.version' 2.18.1
jq_is "$J" '.ranks[0].nccl.cuda_build' 12.1
jq_is "$J" '.ranks[0].nccl.origin' torch-static
jq_is "$J" '.ranks[0].nccl.path' /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so
jq_is "$J" '.ranks[0].system_nccl.status' missing

# --- marker: the constructor-writing NCCL as the system NCCL and in LD_PRELOAD ------------------
R=$work/marker
debian_etc "$R"
nccl_file nccl-marker "$R/usr/lib/x86_64-linux-gnu"
rc=0
env -i PATH=/nonexistent LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libnccl.so.2 "$probe" --root "$R" \
  --color never --json "$work/marker.json" >"$work/marker.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$work/marker.txt" >&2; fail "marker: exit $rc, expected 0"; }
[ ! -e "$marker" ] || fail "marker: the marker library was loaded ($marker exists)"
J=$work/marker.json
jq_is "$J" '.ranks[0].nccl.version' 2.26.2
jq_is "$J" '.ranks[0].nccl.status' not-loaded
jq_is "$J" '.ranks[0].nccl.path' /usr/lib/x86_64-linux-gnu/libnccl.so.2.26.2
echo "ok marker (exit 0, $marker absent)"

# --- sitepkg: torch outside the well-known layouts, named with --site-packages -----------------
R=$work/sitepkg
debian_etc "$R"
SP=$R/srv/app/pylib
torch_site "$SP" 2.4.0+cu121 torch-dyn nccl-2.21.5
probe_root sitepkg 1   # no torch found, no system NCCL: nccl-missing
jq_is "$work/sitepkg.json" '.ranks[0].torch.status' missing
probe_root sitepkg 0 --site-packages /srv/app/pylib
jq_is "$work/sitepkg.json" '.ranks[0].torch.version' 2.4.0+cu121
jq_is "$work/sitepkg.json" '.ranks[0].torch.site_packages' /srv/app/pylib
jq_is "$work/sitepkg.json" '.ranks[0].nccl.version' 2.21.5
jq_is "$work/sitepkg.json" '.ranks[0].nccl.path' /srv/app/pylib/nvidia/nccl/lib/libnccl.so.2
probe_root sitepkg 0 --site-packages "$SP"
jq_is "$work/sitepkg.json" '.ranks[0].torch.site_packages' /srv/app/pylib

# --- driver libraries baked into an image, read statically ---------------------------------------
# The toolkit's stub copied over libcuda.so.1 outside any stubs/ directory: known by its contents.
R=$work/stubdrv
debian_etc "$R"
nccl_file nccl-2.28.9-cu12 "$R/usr/lib/x86_64-linux-gnu"
cp "$standins/cuda-stub/libcuda.so.1" "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
probe_root stubdrv 1
jq_is "$work/stubdrv.json" '.ranks[0].cuda_driver.status' stub
jq_is "$work/stubdrv.json" '[.findings[] | select(.severity == "error") | .code] | join(",")' cuda-driver-stub
# A 470 driver (CUDA 11.4 by NVIDIA's table) under NCCL +cuda12.9: too old, found statically.
R=$work/olddrv
debian_etc "$R"
nccl_file nccl-2.28.9-cu12 "$R/usr/lib/x86_64-linux-gnu"
cp "$standins/cuda-470.57.02/libcuda.so.470.57.02" "$R/usr/lib/x86_64-linux-gnu/"
ln -s libcuda.so.470.57.02 "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
probe_root olddrv 1
jq_is "$work/olddrv.json" '.ranks[0].cuda_driver.status' ok
jq_is "$work/olddrv.json" '.ranks[0].cuda_driver.cuda_version' 11.4
jq_is "$work/olddrv.json" '.ranks[0].cuda_driver.cuda_version_from' driver-table
jq_is "$work/olddrv.json" '[.findings[] | select(.severity == "error") | .code] | join(",")' cuda-driver-too-old
# A 550 driver (CUDA 12.4) under the same NCCL: minor version compatibility, a warning.
rm "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1" "$R/usr/lib/x86_64-linux-gnu/libcuda.so.470.57.02"
cp "$standins/cuda-550.54.15/libcuda.so.550.54.15" "$R/usr/lib/x86_64-linux-gnu/"
ln -s libcuda.so.550.54.15 "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
probe_root olddrv 0
jq_is "$work/olddrv.json" '[.findings[] | .code] | join(",")' cuda-driver-minor-compat
# A driver whose file name carries no version: not "ok", and said so.
rm "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
mv "$R/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15" "$R/usr/lib/x86_64-linux-gnu/libcuda.so.1"
probe_root olddrv 0
jq_is "$work/olddrv.json" '.ranks[0].cuda_driver.status' version-unknown
jq_is "$work/olddrv.json" '[.findings[] | .code] | join(",")' cuda-driver-unverified
probe_root olddrv 1 --strict

# --- a missing root is a usage error (exit 2) naming the option ----------------------------------
rc=0
"$probe" --root "$work/does-not-exist" --quiet 2>"$work/noroot.err" || rc=$?
[ "$rc" = 2 ] || fail "--root on a missing directory: exit $rc, expected 2"
grep -q -- "--root" "$work/noroot.err" || fail "--root error does not name the option: $(cat "$work/noroot.err")"

[ ! -e "$marker" ] || fail "the marker library was loaded ($marker exists)"
echo PASS
