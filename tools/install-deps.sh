#!/usr/bin/env bash
# Installs what denpex-probe needs to build, run and be tested on Debian 12 (as root):
# the toolchain, Open MPI and MPICH (the two MPI ABIs the transport plugins are built for;
# Open MPI stays the default `mpicc`/`mpirun` alternative), nlohmann_json, fmt, CLI11, Catch2
# (v2), jq/bc for the end-to-end tests, file (CPack's DEB generator needs it), lintian (the
# package test), Slurm and munge for the prolog test, clang for fuzzing,
# the aarch64 cross compiler and libc (arm64 stand-ins and Debian's arm64 ld.so for the arm64
# image tests).
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
  jq bc time procps util-linux file lintian \
  libre2-dev \
  slurm-wlm munge \
  clang libclang-rt-14-dev \
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  >/dev/null
echo "install-deps.sh: packages installed"
