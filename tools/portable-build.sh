#!/usr/bin/env bash
# Builds the portable tarball, OUTDIR/denpex-portable.tar.gz:
#   bin/denpex-probe, bin/denpex-validate-image, bin/denpex-prolog
#   lib/libdenpex-trace.so, lib/denpex/ (the MPI transport plugins, when the tree builds them)
#   share/ (man page, examples, docs)
# It runs on any x86_64 glibc distribution from glibc 2.31 on (Debian 11, Ubuntu 20.04+, RHEL 9)
# with nothing installed beside it: compiled in a Debian 11 (bullseye, glibc 2.31) root with
# bullseye's GCC 10 and DENPEX_PORTABLE=ON (cmake/Portable.cmake: static libstdc++, libgcc, fmt).
# tests/portable/check.sh checks the result. Unpack with
#   mkdir -p /opt/denpex && tar -C /opt/denpex -xzf denpex-portable.tar.gz
#
# Usage (as root; needs debootstrap and a Debian mirror: the one apt uses here, or
# DENPEX_BULLSEYE_MIRROR):
#   tools/portable-build.sh [OUTDIR]        (default: build-portable; about 1.5 GB)
# OUTDIR keeps the bullseye roots, the build tree and ccache's cache, so a rerun rebuilds only
# what changed. The sources are the working tree's (tracked and untracked, not ignored files).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-portable}
[ "$(id -u)" = 0 ] || { echo "portable-build.sh: run as root (debootstrap, chroot)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
# shellcheck source=tools/bullseye-root.sh
. "$src/tools/bullseye-root.sh"
trap bullseye_unmount EXIT

minbase=$out/bullseye-minbase
root=$out/bullseye-build
tarball=$out/denpex-portable.tar.gz

# What the build needs from bullseye. CLI11 is bookworm's (header-only, no dependencies):
# bullseye's 1.9 has no set_version_flag. fmt is bookworm's source (9.1.0, the Debian 12 build's
# fmt), built here as a static library: bullseye's libfmt-dev is fmt 7 and shared only. Open
# MPI's and MPICH's headers build the two MPI transport plugins (they link no libmpi; a tree that
# still links MPI needs Open MPI to link). zlib, libzstd and liblzma: their static archives are
# linked in (cmake/Decompressors.cmake); so is libre2.a (evidence/CMakeLists.txt).
packages="build-essential cmake ninja-build pkg-config ccache nlohmann-json3-dev dpkg-dev \
libopenmpi-dev libmpich-dev libcli11-dev/bookworm zlib1g-dev libzstd-dev liblzma-dev libre2-dev"
fmt_source=fmtlib/bookworm

bullseye_minbase "$minbase"
if [ ! -e "$root.packages" ] || [ "$(cat "$root.packages")" != "$packages" ]; then
  [ -x "$root/bin/bash" ] || bullseye_copy "$minbase" "$root"
  cat >"$root/etc/apt/sources.list" <<EOF
deb $bullseye_mirror bullseye main
deb $bullseye_mirror bookworm main
deb-src $bullseye_mirror bookworm main
EOF
  # Only what is asked for by name comes from bookworm; everything else stays bullseye's.
  cat >"$root/etc/apt/preferences.d/denpex-bookworm" <<'EOF'
Package: *
Pin: release n=bookworm
Pin-Priority: 1
EOF
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  bullseye_mount "$root"
  echo "portable-build: installing the build packages in $root"
  # shellcheck disable=SC2086  # $packages is a word list
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    bash -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages" \
    >"$root.apt.log" 2>&1 || { tail -30 "$root.apt.log" >&2; exit 1; }
  # fmt as a static, position-independent archive in /opt/fmt-static (fmt_DIR below).
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c "set -e
    rm -rf /fmt-src /fmt-build /opt/fmt-static && mkdir /fmt-src && cd /fmt-src
    apt-get source -qq $fmt_source
    cmake -S /fmt-src/fmtlib-*/ -B /fmt-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DFMT_TEST=OFF -DFMT_DOC=OFF \
      -DCMAKE_INSTALL_PREFIX=/opt/fmt-static -DCMAKE_INSTALL_LIBDIR=lib
    cmake --build /fmt-build && cmake --install /fmt-build
    rm -rf /fmt-src /fmt-build" >"$root.fmt.log" 2>&1 || { tail -30 "$root.fmt.log" >&2; exit 1; }
  bullseye_unmount
  echo "$packages" >"$root.packages"
fi

# The sources as the working tree has them; mtimes kept, so ninja rebuilds only what changed.
rm -rf "$root/src"
mkdir -p "$root/src"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$root/src"

bullseye_mount "$root"
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    CCACHE_DIR=/ccache bash -c "$1"
}
echo "portable-build: configure and build in $root (bullseye, $(chroot "$root" gcc -dumpfullversion))"
# The build type's -O2 without its -g: the install strips every binary, and debug information
# costs a third of the compile time.
in_root "set -e
  cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDENPEX_PORTABLE=ON \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG' -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG' \
    -DDENPEX_BUILD_TESTS=OFF -DDENPEX_BUILD_BENCH=OFF \
    -Dfmt_DIR=/opt/fmt-static/lib/cmake/fmt -DCMAKE_INSTALL_PREFIX=/opt/denpex -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_SBINDIR=bin \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/build-configure.log ||
    { cat /build-configure.log; exit 1; }
  grep '^-- denpex' /build-configure.log || true
  cmake --build /build -j\$(nproc)
  rm -rf /stage
  cmake --install /build --prefix /stage --strip >/dev/null"
bullseye_unmount

# bin/ and lib/ at the top, as the examples unpack it (tar -C /opt/denpex -xzf ...).
(cd "$root/stage" && tar --sort=name --owner=0 --group=0 --numeric-owner -czf "$tarball.tmp" -- *)
mv "$tarball.tmp" "$tarball"
echo "portable-build: $tarball"
tar -tzvf "$tarball" | awk '$1 !~ /^d/ && $6 ~ /^(bin|lib)\// { print "  " $3 "\t" $6 }'
