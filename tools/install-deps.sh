#!/usr/bin/env bash
# Installs what denpex-probe needs to build, run and be tested on Debian 12 (as root):
# the toolchain, Open MPI and MPICH (the two MPI ABIs the transport plugins are built for;
# Open MPI stays the default `mpicc`/`mpirun` alternative), nlohmann_json, fmt, CLI11, Catch2
# (v2), jq/bc for the end-to-end tests, file (CPack's DEB generator needs it), lintian (the
# package test), Slurm and munge for the prolog test, clang for fuzzing,
# the aarch64 cross compiler and libc (arm64 stand-ins and Debian's arm64 ld.so for the arm64
# image tests), zlib, libzstd and liblzma (evidence/ reads gzip, zstd and xz logs by content) with
# the gzip, zstd and xz programs and python3 that tests/evidence uses to make its inputs;
# python3-pip, python3-venv, ca-certificates and patchelf for tests/real (pip download of the
# real wheel matrix, a real venv, a conda-style interpreter with its $ORIGIN/../lib RPATH).
# CUDA and NCCL are not installed here: the probe opens whatever the node has at run time.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get install)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build pkg-config \
  libopenmpi-dev openmpi-bin mpich libmpich-dev nlohmann-json3-dev libfmt-dev libcli11-dev catch2 \
  jq bc time procps util-linux file lintian \
  slurm-wlm munge \
  clang libclang-rt-14-dev \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  zlib1g-dev libzstd-dev liblzma-dev gzip zstd xz-utils python3 \
  python3-pip python3-venv ca-certificates patchelf \
  >/dev/null
echo "install-deps.sh: packages installed"
