#!/usr/bin/env bash
# Installs what denpex-probe needs to build, run and be tested on Debian 12 (as root):
# the toolchain, Open MPI and MPICH (the two MPI ABIs the transport plugins are built for;
# Open MPI stays the default `mpicc`/`mpirun` alternative), nlohmann_json, fmt, CLI11, Catch2
# (v2), jq/bc for the end-to-end tests, file (CPack's DEB generator needs it), lintian (the
# package test), Slurm and munge for the prolog test, stress-ng (the CPU load under which
# tests/hostile/stress_faults.sh repeats the MPI fault cases), clang for fuzzing, clang-tidy (the
# function-length check, source.function_size),
# the aarch64 cross compiler and libc (arm64 stand-ins and Debian's arm64 ld.so for the arm64
# image tests), zlib, libzstd and liblzma (evidence/ reads gzip, zstd and xz logs by content) with
# the gzip, zstd and xz programs and python3 that tests/evidence uses to make its inputs, pip (to
# fetch fmt 11's headers from PyPI for the fmt 11 compile test, and the real torch and
# nvidia-nccl-cu12 wheels tests/torchrun unpacks into a cache directory, never into the system
# Python), python3-yaml (the Kubernetes examples are checked with a real YAML parser),
# python3-venv (a real venv: the manylinux wheel's install test, tests/real's environments),
# ca-certificates and patchelf for tests/real (pip download of the real wheel matrix over https,
# a conda-style interpreter with its $ORIGIN/../lib RPATH); chromium and python3-websocket, the
# headless browser tests/report loads the HTML report in; iproute2 (`ip`: the network namespaces,
# veth pairs and bridge of devices.torchrun_standin, whose hosts' interfaces differ).
# CUDA and NCCL are not installed here: the probe opens whatever the node has at run time.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get install)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
# libre2-dev: the signal library's patterns (evidence/matcher.cpp); never std::regex.
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libopenmpi-dev openmpi-bin mpich libmpich-dev nlohmann-json3-dev libfmt-dev libcli11-dev catch2 \
  jq bc time procps util-linux iproute2 file lintian \
  libre2-dev \
  slurm-wlm munge \
  stress-ng \
  clang libclang-rt-14-dev clang-tidy \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  python3-yaml python3-venv \
  zlib1g-dev libzstd-dev liblzma-dev gzip zstd xz-utils python3 python3-pip \
  ca-certificates patchelf \
  chromium python3-websocket \
  >/dev/null
echo "install-deps.sh: packages installed"

# fmt 11's headers, for the test that compiles our sources against them (source.fmt11): fmt 11
# moved fmt::join to <fmt/ranges.h>, and Debian 12 ships fmt 9, which still has it in
# <fmt/format.h>. PyPI's librmm-cu12 24.12.1 wheel carries fmt 11.0.2's headers; they are
# unpacked into a directory, nothing is installed into Python. Without PyPI the test skips.
fmt11=/var/cache/denpex/fmt11
if [ ! -r "$fmt11/include/fmt/ranges.h" ]; then
  tmp=$(mktemp -d)
  echo "librmm-cu12==24.12.1 --hash=sha256:01ee26e0f50e5e919b1d4d3cc8baf2b21ba7ebdde3e6edfc3390011e90d1da35" \
    >"$tmp/requirements.txt"
  if python3 -m pip download -q --no-deps --only-binary=:all: --require-hashes \
      -r "$tmp/requirements.txt" -d "$tmp" >"$tmp/pip.log" 2>&1 &&
    python3 -m zipfile -e "$tmp"/librmm_cu12-24.12.1-*.whl "$tmp/wheel" &&
    grep -q 'define FMT_VERSION 110002' "$tmp/wheel/librmm/include/fmt/base.h"; then
    rm -rf "$fmt11"
    mkdir -p "$fmt11/include"
    cp -r "$tmp/wheel/librmm/include/fmt" "$fmt11/include/"
    echo "install-deps.sh: fmt 11.0.2 headers in $fmt11/include"
  else
    echo "install-deps.sh: could not fetch fmt 11's headers (PyPI's librmm-cu12 24.12.1):" \
      "source.fmt11 will skip" >&2
    tail -3 "$tmp/pip.log" >&2 || true
  fi
  rm -rf "$tmp"
fi
