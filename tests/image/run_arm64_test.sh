#!/bin/bash
# arm64 (GH200/GB200) image trees read from this x86_64 build, with aarch64 stand-ins
# cross-built in tests/standins/aarch64.cmake and Debian's real arm64 ld.so (libc6-arm64-cross):
#   arm64        Debian merged-/usr layout, NCCL 2.27.3 in /usr/lib/aarch64-linux-gnu, an arm64
#                ld.so.cache (0x0a03 entries; an x86-64 0x0303 entry for the same soname comes
#                first and must be passed over), a venv at /opt/venv with PyTorch and the
#                nvidia-nccl-cu12 2.28.9 wheel; also as a docker-save archive whose config says
#                arm64 through validate-image, and as a two-platform OCI index (--platform)
#   conda        conda's python RPATH ($ORIGIN/../lib) up the loader chain from libtorch_cuda.so
#   nocache      no cache, no ld.so.conf: the system directories read from the arm64 ld.so
#   mixed        an x86_64 libnccl in /usr/lib/aarch64-linux-gnu: skipped and said
#   x86only      only an x86_64 libnccl: unloadable, the message names both machines
#   tegra        Jetson's libcuda in /usr/lib/aarch64-linux-gnu/tegra (ld.so.conf.d), an SBSA
#                toolkit's NCCL in /usr/local/cuda-12.8/targets/sbsa-linux/lib
#   shonly       no ld.so, an aarch64 /bin/sh: the architecture comes from it
#   conflict     --arch amd64 on the arm64 tree, --arch riscv64: exit 2
#   hwcaps       an x86_64 tree with a glibc-hwcaps/x86-64-v3 NCCL: both answers in the record
#   multi-*      a two-platform index without --platform: both checked, one JSON, worst exit;
#                an index entry its config contradicts: exit 2
#
# usage: run_arm64_test.sh PROBE VALIDATE_IMAGE STANDINS_DIR MK_LD_CACHE ARM64_LDSO WORKDIR
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
probe=$(realpath "${1:?usage: run_arm64_test.sh PROBE VALIDATE_IMAGE STANDINS_DIR MK_LD_CACHE ARM64_LDSO WORKDIR}")
vi=${2:?missing VALIDATE_IMAGE}
standins=${3:?missing STANDINS_DIR}
mkcache=${4:?missing MK_LD_CACHE}
ldso=${5:?missing ARM64_LDSO}
work=${6:?missing WORKDIR}
a64=$standins/aarch64
command -v jq >/dev/null || fail "jq not found (apt-get install jq)"
[ -e "$a64/nccl-2.27.3/libnccl.so.2.27.3" ] ||
  fail "aarch64 stand-ins missing in $a64: install gcc-aarch64-linux-gnu (tools/install-deps.sh), reconfigure, build target denpex_standins"
[ -e "$ldso" ] || fail "$ldso missing: install libc6-dev-arm64-cross (tools/install-deps.sh)"

rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")

jq_is() {
  local got
  got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
  [ "$got" = "$3" ] || { head -c 3000 "$1" >&2; echo >&2; fail "$(basename "$1"): $2: expected '$3', got '$got'"; }
}

probe_root() { # probe_root NAME EXPECTED_EXIT ARGS...
  local name=$1 want=$2 rc=0
  shift 2
  env -i PATH=/nonexistent "$probe" --root "$work/$name" --color never --json "$work/$name.json" "$@" \
    >"$work/$name.txt" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.txt" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
  echo "ok $name (exit $rc)"
}

debian_arm64() { # debian_arm64 ROOT: merged /usr, the arm64 ld.so where Debian puts it
  mkdir -p "$1/usr/lib/aarch64-linux-gnu" "$1/usr/bin" "$1/etc"
  ln -s usr/lib "$1/lib"
  ln -s usr/bin "$1/bin"
  cp "$ldso" "$1/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"
  ln -s aarch64-linux-gnu/ld-linux-aarch64.so.1 "$1/usr/lib/ld-linux-aarch64.so.1"
}

nccl_into() { # nccl_into STANDIN_DIR DEST: libnccl.so.2.X.Y + the libnccl.so.2 link
  local f
  f=$(realpath "$1/libnccl.so.2")
  mkdir -p "$2"
  cp "$f" "$2/"
  ln -sfn "$(basename "$f")" "$2/libnccl.so.2"
}

venv_torch() { # venv_torch ROOT: /opt/venv with PyTorch (aarch64) and the nvidia-nccl-cu12 wheel
  local sp=$1/opt/venv/lib/python3.11/site-packages
  mkdir -p "$sp/torch/lib" "$sp/nvidia/nccl/lib" "$sp/nvidia_nccl_cu12-2.28.9.dist-info"
  printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n' >"$1/opt/venv/pyvenv.cfg"
  printf "__version__ = '2.8.0+cu128'\ndebug = False\ncuda: Optional[str] = '12.8'\ngit_version = '0123'\n" \
    >"$sp/torch/version.py"
  cp "$a64/torch-dyn/libtorch_cuda.so" "$sp/torch/lib/"
  cp "$(realpath "$a64/nccl-2.28.9-cu12/libnccl.so.2")" "$sp/nvidia/nccl/lib/libnccl.so.2"
}

# --- arm64 -----------------------------------------------------------------------------------------
R=$work/arm64
debian_arm64 "$R"
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib/aarch64-linux-gnu"
# An x86_64 NCCL where an x86-64 cache entry points: read with x86 flags (the wrong machine's
# rules), the cache would send the loader there. That entry comes first.
nccl_into "$standins/nccl-2.21.5" "$R/usr/lib/x86_64-linux-gnu"
"$mkcache" "$R/etc/ld.so.cache" 0x0303:libnccl.so.2=/usr/lib/x86_64-linux-gnu/libnccl.so.2 \
  0x0a03:libnccl.so.2=/usr/lib/aarch64-linux-gnu/libnccl.so.2
venv_torch "$R"
W=/opt/venv/lib/python3.11/site-packages
# libtorch_cuda.so as a symlink into another directory (a shared store): its RPATH's $ORIGIN is
# torch/lib, where the loader opened it, so the wheel's NCCL is still found.
mkdir -p "$R/opt/store"
mv "$R$W/torch/lib/libtorch_cuda.so" "$R/opt/store/libtorch_cuda.so"
ln -s ../../../../../../store/libtorch_cuda.so "$R$W/torch/lib/libtorch_cuda.so"
probe_root arm64 0
J=$work/arm64.json
jq_is "$J" '.ranks[0].arch' aarch64
jq_is "$J" '.ranks[0].arch_source' /lib/ld-linux-aarch64.so.1
jq_is "$J" '.ranks[0].system_nccl.version' 2.27.3
jq_is "$J" '.ranks[0].system_nccl.origin' ld.so.cache
jq_is "$J" '.ranks[0].system_nccl.path' /usr/lib/aarch64-linux-gnu/libnccl.so.2.27.3
jq_is "$J" '.ranks[0].torch.status' ok
jq_is "$J" '.ranks[0].torch.version' 2.8.0+cu128
jq_is "$J" '.ranks[0].torch.path' "$W/torch"
jq_is "$J" '.ranks[0].torch.nccl.linkage' wheel
jq_is "$J" '.ranks[0].torch.nccl.version' 2.28.9
jq_is "$J" '.ranks[0].nccl.version' 2.28.9
jq_is "$J" '.ranks[0].nccl.path' "$W/nvidia/nccl/lib/libnccl.so.2"
jq_is "$J" '.ranks[0].nccl.origin' torch-rpath
jq_is "$J" '[.ranks[0].nccl_candidates[] | "\(.origin)=\(.version)"] | join(",")' \
  ld.so.cache=2.27.3,python-env=2.28.9
jq_is "$J" '.ranks[0].foreign_libraries | length' 0
# The wheel's NCCL against the system's: the one finding this image deserves.
jq_is "$J" '[.findings[] | .code] | sort | join(",")' torch-nccl-mismatch
grep -q "aarch64 image; NCCL 2.28.9" "$work/arm64.txt" || { cat "$work/arm64.txt"; fail "arm64: the human report does not name the architecture"; }
# --arch agreeing with the files changes nothing but the source.
probe_root arm64 0 --arch arm64
jq_is "$J" '.ranks[0].arch' aarch64
jq_is "$J" '.ranks[0].arch_source' --arch

# --- conda: python's RPATH $ORIGIN/../lib holds conda's NCCL; libtorch_cuda.so's RPATH does not
# (no wheel): glibc searches the RPATH of each object up the loader chain, so conda's NCCL wins
# over the system's (the cache).
R=$work/conda
debian_arm64 "$R"
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib/aarch64-linux-gnu"
"$mkcache" "$R/etc/ld.so.cache" 0x0a03:libnccl.so.2=/usr/lib/aarch64-linux-gnu/libnccl.so.2
C=/opt/conda/lib/python3.11/site-packages
mkdir -p "$R$C/torch/lib" "$R/opt/conda/bin"
printf "__version__ = '2.8.0'\ncuda: Optional[str] = '12.8'\n" >"$R$C/torch/version.py"
cp "$a64/torch-dyn/libtorch_cuda.so" "$R$C/torch/lib/"
cp "$a64/python-conda/python3.11" "$R/opt/conda/bin/python3.11"
nccl_into "$a64/nccl-2.28.9-cu12" "$R/opt/conda/lib"
probe_root conda 0
J=$work/conda.json
jq_is "$J" '.ranks[0].nccl.version' 2.28.9
jq_is "$J" '.ranks[0].nccl.path' /opt/conda/lib/libnccl.so.2.28.9
jq_is "$J" '.ranks[0].nccl.origin' rpath-of-loader
jq_is "$J" '.ranks[0].system_nccl.version' 2.27.3

# --- conflict: the declared architecture against the files; an unknown name ------------------------
probe_root arm64 2 --arch amd64
grep -q "declared x86_64 (--arch amd64) but /lib/ld-linux-aarch64.so.1 is built for aarch64" "$work/arm64.err" ||
  fail "conflict: $(cat "$work/arm64.err")"
probe_root arm64 2 --arch riscv64
grep -q "riscv64: not an architecture" "$work/arm64.err" || fail "bad --arch: $(cat "$work/arm64.err")"

# --- nocache: the system directories come from the arm64 ld.so ------------------------------------
R=$work/nocache
debian_arm64 "$R"
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib/aarch64-linux-gnu"
probe_root nocache 0
J=$work/nocache.json
jq_is "$J" '.ranks[0].arch' aarch64
jq_is "$J" '.ranks[0].nccl.version' 2.27.3
jq_is "$J" '.ranks[0].nccl.origin' system-dir
jq_is "$J" '.ranks[0].nccl.path' /usr/lib/aarch64-linux-gnu/libnccl.so.2.27.3

# --- tegra: Jetson's driver in /usr/lib/aarch64-linux-gnu/tegra, named by ld.so.conf.d ------------
R=$work/tegra
debian_arm64 "$R"
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib/aarch64-linux-gnu"
mkdir -p "$R/usr/lib/aarch64-linux-gnu/tegra" "$R/etc/ld.so.conf.d"
cp -P "$a64/cuda-550.54.15/"libcuda.so* "$R/usr/lib/aarch64-linux-gnu/tegra/"
echo "include /etc/ld.so.conf.d/*.conf" >"$R/etc/ld.so.conf"
echo /usr/lib/aarch64-linux-gnu/tegra >"$R/etc/ld.so.conf.d/nvidia-tegra.conf"
# The SBSA toolkit's own NCCL copy (targets/sbsa-linux): a candidate, not what the loader maps.
nccl_into "$a64/nccl-2.28.9-cu12" "$R/usr/local/cuda-12.8/targets/sbsa-linux/lib"
ln -s cuda-12.8 "$R/usr/local/cuda"
probe_root tegra 0
J=$work/tegra.json
jq_is "$J" '.ranks[0].nccl.version' 2.27.3
jq_is "$J" '[.ranks[0].nccl_candidates[] | "\(.origin)=\(.version)"] | join(",")' \
  system-dir=2.27.3,cuda-toolkit=2.28.9
jq_is "$J" '.ranks[0].cuda_driver.library' /usr/lib/aarch64-linux-gnu/tegra/libcuda.so.550.54.15
jq_is "$J" '.ranks[0].cuda_driver.library_version' 550.54.15

# --- mixed: an x86_64 libnccl in the arm64 multiarch directory -------------------------------------
R=$work/mixed
debian_arm64 "$R"
nccl_into "$standins/nccl-2.21.5" "$R/usr/lib/aarch64-linux-gnu"
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib"
probe_root mixed 0
J=$work/mixed.json
jq_is "$J" '.ranks[0].nccl.version' 2.27.3
jq_is "$J" '.ranks[0].nccl.path' /usr/lib/libnccl.so.2.27.3
jq_is "$J" '.ranks[0].foreign_libraries | join(";")' \
  "/usr/lib/aarch64-linux-gnu/libnccl.so.2.21.5 (built for x86_64, the image is aarch64)"
jq_is "$J" '[.ranks[0].nccl_candidates[] | .version] | join(",")' 2.27.3

# --- x86only: the only libnccl is x86_64 ----------------------------------------------------------
R=$work/x86only
debian_arm64 "$R"
nccl_into "$standins/nccl-2.21.5" "$R/usr/lib/aarch64-linux-gnu"
probe_root x86only 1
J=$work/x86only.json
jq_is "$J" '.ranks[0].nccl.status' unloadable
jq -r '.ranks[0].nccl.error' "$J" | grep -q "built for x86_64, the image is aarch64" ||
  fail "x86only: $(jq -r '.ranks[0].nccl.error' "$J")"

# --- shonly: no ld.so; /bin/sh is an aarch64 ELF -----------------------------------------------------
R=$work/shonly
mkdir -p "$R/bin" "$R/usr/lib/aarch64-linux-gnu"
cp "$ldso" "$R/bin/sh"   # any aarch64 ELF plays the shell: only its header is read
nccl_into "$a64/nccl-2.27.3" "$R/usr/lib/aarch64-linux-gnu"
probe_root shonly 0
J=$work/shonly.json
jq_is "$J" '.ranks[0].arch' aarch64
jq_is "$J" '.ranks[0].arch_source' /bin/sh
jq_is "$J" '.ranks[0].nccl.path' /usr/lib/aarch64-linux-gnu/libnccl.so.2.27.3

# --- validate-image: a docker-save archive whose config says arm64 --------------------------------
D=$work/save
mkdir -p "$D/layer"
tar -C "$work/arm64" -cf "$D/layer/layer.tar" .
echo '{"architecture":"arm64","os":"linux","config":{"Env":["PATH=/opt/venv/bin:/usr/bin:/bin"]}}' >"$D/config.json"
echo '[{"Config":"config.json","RepoTags":["train:arm64"],"Layers":["layer/layer.tar"]}]' >"$D/manifest.json"
tar -C "$D" -cf "$work/arm64-save.tar" manifest.json config.json layer
rc=0
"$vi" --probe "$probe" --json "$work/vi.json" "$work/arm64-save.tar" >"$work/vi.txt" 2>"$work/vi.err" || rc=$?
[ "$rc" = 0 ] || { cat "$work/vi.txt" "$work/vi.err" >&2; fail "validate-image arm64: exit $rc, expected 0"; }
jq_is "$work/vi.json" '.ranks[0].arch' aarch64
jq_is "$work/vi.json" '.ranks[0].arch_source' --arch
jq_is "$work/vi.json" '.ranks[0].system_nccl.version' 2.27.3
jq_is "$work/vi.json" '.ranks[0].nccl.version' 2.28.9
jq_is "$work/vi.json" '.ranks[0].torch.version' 2.8.0+cu128
grep -q "the image is for arm64" "$work/vi.err" || fail "validate-image: $(cat "$work/vi.err")"
# The config says amd64, the files are aarch64: could not judge.
echo '{"architecture":"amd64","os":"linux"}' >"$D/config.json"
tar -C "$D" -cf "$work/arm64-lie.tar" manifest.json config.json layer
rc=0
"$vi" --probe "$probe" "$work/arm64-lie.tar" >"$work/vi-lie.txt" 2>"$work/vi-lie.err" || rc=$?
[ "$rc" = 2 ] || { cat "$work/vi-lie.txt" "$work/vi-lie.err" >&2; fail "validate-image lying config: exit $rc, expected 2"; }
grep -q "disagree" "$work/vi-lie.err" || fail "validate-image lying config: $(cat "$work/vi-lie.err")"

# --- glibc-hwcaps under --root: the image's CPU is unknown, so both answers are named -------------
H=$work/hwcaps
mkdir -p "$H/lib64"
cp "$(realpath /lib64/ld-linux-x86-64.so.2)" "$H/lib64/ld-linux-x86-64.so.2"
nccl_into "$standins/nccl-2.21.5" "$H/usr/lib/x86_64-linux-gnu"
nccl_into "$standins/nccl-2.27.3" "$H/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3"
probe_root hwcaps 0
jq_is "$work/hwcaps.json" '.ranks[0].nccl.version' 2.21.5
jq_is "$work/hwcaps.json" '.ranks[0].nccl.depends_on_cpu | join(" | ")' \
  "x86-64-v3: /usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libnccl.so.2 (NCCL 2.27.3) | otherwise: /usr/lib/x86_64-linux-gnu/libnccl.so.2"
grep -q "depends on the CPU: x86-64-v3: /usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libnccl.so.2 (NCCL 2.27.3); otherwise: /usr/lib/x86_64-linux-gnu/libnccl.so.2" "$work/hwcaps.txt" ||
  fail "hwcaps: the report does not name both answers: $(cat "$work/hwcaps.txt")"

# --- a two-platform OCI index (docker buildx output): linux/amd64 and linux/arm64 -----------------
X=$work/amd64tree
mkdir -p "$X/lib64" "$X/usr/lib/x86_64-linux-gnu"
cp "$(realpath /lib64/ld-linux-x86-64.so.2)" "$X/lib64/ld-linux-x86-64.so.2"
nccl_into "$standins/nccl-2.21.5" "$X/usr/lib/x86_64-linux-gnu"
O=$work/oci
mkdir -p "$O/blobs/sha256"
put() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" "$O/blobs/sha256/$d"; echo "sha256:$d"; }
manifest_for() { # manifest_for TREE ARCH: prints the manifest digest
  tar -C "$1" -czf "$work/$2.layer.tar.gz" .
  local l c
  l=$(put "$work/$2.layer.tar.gz")
  echo "{\"architecture\":\"$2\",\"os\":\"linux\"}" >"$work/$2.config.json"
  c=$(put "$work/$2.config.json")
  echo "{\"schemaVersion\":2,\"config\":{\"digest\":\"$c\"},\"layers\":[{\"digest\":\"$l\"}]}" >"$work/$2.manifest.json"
  put "$work/$2.manifest.json"
}
m_amd=$(manifest_for "$X" amd64)
m_arm=$(manifest_for "$work/arm64" arm64)
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$m_amd\",\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},{\"digest\":\"$m_arm\",\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\"}}]}" >"$work/index2.json"
i2=$(put "$work/index2.json")
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$i2\"}]}" >"$O/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$O/oci-layout"
tar -C "$O" -czf "$work/multi.tar.gz" .
run_vi() { # run_vi NAME EXPECTED_EXIT ARGS...
  local name=$1 want=$2 rc=0
  shift 2
  "$vi" --probe "$probe" "$@" >"$work/$name.txt" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.txt" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
  echo "ok $name (exit $rc)"
}
# No --platform: every platform in one run, reported one after the other; one JSON report holds
# both (findings, configurations and ranks tagged with their platform; `platforms` each
# platform's exit code and own report); the rank reports are one per platform.
run_vi multi-default 0 --json "$work/md.json" --rank-report "$work/md-rank.json" "$work/multi.tar.gz"
grep -q "multi-platform index (linux/amd64, linux/arm64); checking every platform" "$work/multi-default.err" ||
  fail "multi-default: $(cat "$work/multi-default.err")"
grep -q "^=== platform linux/amd64 ===" "$work/multi-default.txt" || fail "multi-default: no linux/amd64 section"
grep -q "^=== platform linux/arm64 ===" "$work/multi-default.txt" || fail "multi-default: no linux/arm64 section"
grep -q "multi.tar.gz \[linux/amd64\]" "$work/multi-default.txt" && grep -q "x86_64 image; NCCL 2.21.5" "$work/multi-default.txt" || fail "multi-default: $(cat "$work/multi-default.txt")"
grep -q "aarch64 image; NCCL 2.28.9" "$work/multi-default.txt" || fail "multi-default: $(cat "$work/multi-default.txt")"
grep -q "linux/amd64: pass; linux/arm64: pass (exit 0" "$work/multi-default.txt" || fail "multi-default summary: $(tail -n 2 "$work/multi-default.txt")"
jq_is "$work/md.json" '.schema' denpex.report.v1
jq_is "$work/md.json" '.verdict' pass
jq_is "$work/md.json" '[.platforms[].platform] | join(",")' linux/amd64,linux/arm64
jq_is "$work/md.json" '[.platforms[].exit_code] | join(",")' 0,0
jq_is "$work/md.json" '.nranks' 2
jq_is "$work/md.json" '.ranks[0].arch' x86_64
jq_is "$work/md.json" '.ranks[0].platform' linux/amd64
jq_is "$work/md.json" '.ranks[0].nccl.version' 2.21.5
jq_is "$work/md.json" '.ranks[1].arch' aarch64
jq_is "$work/md.json" '.ranks[1].nccl.version' 2.28.9
jq_is "$work/md.json" '.platforms[1].report.ranks[0].system_nccl.version' 2.27.3
jq_is "$work/md-rank.linux-amd64.json" '.arch' x86_64
jq_is "$work/md-rank.linux-arm64.json" '.arch' aarch64
run_vi multi-arm64 0 --platform linux/arm64 --json "$work/ma.json" "$work/multi.tar.gz"
jq_is "$work/ma.json" '.ranks[0].arch' aarch64
jq_is "$work/ma.json" '.ranks[0].system_nccl.version' 2.27.3
jq_is "$work/ma.json" '.ranks[0].nccl.version' 2.28.9
run_vi multi-s390x 2 --platform linux/s390x "$work/multi.tar.gz"
grep -q "no linux/s390x image in the index (it has: linux/amd64, linux/arm64)" "$work/multi-s390x.err" ||
  fail "multi-s390x: $(cat "$work/multi-s390x.err")"
# The exit status is the worst over the platforms: the arm64 image rejected (no NCCL at all), the
# amd64 one passes: 1, and the JSON says which. A buildx attestation entry (unknown/unknown) is
# no platform.
cp -r "$O" "$work/oci-bad"
B=$work/arm64bad
cp -a "$work/arm64" "$B"
find "$B" -name 'libnccl.so*' -exec rm -f {} +
m_bad=$(O=$work/oci-bad; manifest_for "$B" arm64)
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$m_amd\",\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}},{\"digest\":\"$m_bad\",\"platform\":{\"architecture\":\"arm64\",\"os\":\"linux\"}},{\"digest\":\"$m_amd\",\"platform\":{\"architecture\":\"unknown\",\"os\":\"unknown\"}}]}" >"$work/oci-bad/index.json"
tar -C "$work/oci-bad" -czf "$work/multi-bad.tar.gz" .
run_vi multi-bad 1 --json "$work/mb.json" "$work/multi-bad.tar.gz"
jq_is "$work/mb.json" '.verdict' reject
jq_is "$work/mb.json" '[.platforms[] | "\(.platform)=\(.exit_code)"] | join(",")' linux/amd64=0,linux/arm64=1
jq_is "$work/mb.json" '[.findings[] | select(.severity == "error") | .platform] | unique | join(",")' linux/arm64
grep -q "linux/amd64: pass; linux/arm64: reject (exit 1" "$work/multi-bad.txt" || fail "multi-bad summary: $(tail -n 2 "$work/multi-bad.txt")"
# --platform picks one: only it is checked.
run_vi multi-bad-amd64 0 --platform linux/amd64 "$work/multi-bad.tar.gz"
! grep -q "=== platform" "$work/multi-bad-amd64.txt" || fail "multi-bad-amd64 checked more than one platform"

# An index that lists the arm64 manifest as linux/amd64: the index and the config disagree.
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$m_arm\",\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}}]}" >"$work/oci-bad/index.json"
tar -C "$work/oci-bad" -czf "$work/index-lie.tar.gz" .
run_vi index-lie 2 "$work/index-lie.tar.gz"
grep -q "the index and the image disagree" "$work/index-lie.err" || fail "index-lie: $(cat "$work/index-lie.err")"

run_vi platform-dir 2 --platform linux/arm64 "$work/arm64"
grep -q "not a multi-platform OCI image index" "$work/platform-dir.err" || fail "platform-dir: $(cat "$work/platform-dir.err")"

echo "PASS: arm64 image trees"
