#!/usr/bin/env bash
# The README's two quick-start commands, run as a new user would: in a fresh Debian 12 root
# (debootstrap --variant=minbase plus build-essential, CMake, git and Python), on a clean clone
# of this checkout, with the host's CUDA toolkit bind-mounted read-only and the host's
# /etc/hosts copied in (without it Open MPI's MPI_Init waits 5 s on the resolver).
# A package this machine happens to have is a missing install step there, and fails here.
#
# The wheel cache and the trees unpacked from it (tests/real/paths.sh) are bind-mounted at the
# same paths in the root when the host has them, so the root's tests read the wheels CI fetched
# (tests/real/fetch.sh) instead of downloading and unpacking them again.
#
# Usage: .ci/fresh-root.sh WORKDIR [demo|test|both|ci|real|root]   (WORKDIR is created; about
#        2 GB; default both). `ci` is both, then every benchmark in quick mode and the real-wheel
#        step (tests/real/run.sh), on the build tools/test.sh made; `real` is that step alone, on the clone and build already there. `root` only makes the root and runs the clone's tools/install-deps.sh
#        in it, so that CI can do the downloading part early, beside other steps; the root then
#        holds nothing but minbase and what install-deps.sh installs, and the later run reuses it.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${1:?usage: .ci/fresh-root.sh WORKDIR}
what=${2:-both}
mkdir -p "$work"
work=$(cd "$work" && pwd)
root="$work/root"

export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap >/dev/null; }

mounts=()
cleanup() {
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {  # bind SRC DST [ro]  (recursive: /sys brings /sys/fs/cgroup, which slurmd needs)
  mkdir -p "$2"
  mount --rbind "$1" "$2"
  mount --make-rslave "$2"
  mounts+=("$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2"; fi
}

# Bind mounts a killed earlier run left inside the root (/proc, /sys, /dev, the toolkit) go
# first: `rm -rf` through them would delete the host's files.
for m in $(awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
  umount -l "$m" 2>/dev/null || true
done
if [ ! -x "$root/usr/bin/cmake" ]; then
  rm -rf --one-file-system "$root"
  # shellcheck source=tools/debian-mirror.sh
  . "$src/tools/debian-mirror.sh"
  mirror=$(debian_mirror)
  echo "fresh-root: debootstrap bookworm (minbase + build-essential cmake git python3) from ${mirror:-the default mirror of debootstrap}"
  debootstrap --variant=minbase --include=build-essential,cmake,git,python3,ca-certificates \
    bookworm "$root" ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
fi
# The same package sources as the host (its snapshot), so versions match what CI tests.
if [ -d /etc/apt/sources.list.d ] && ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  rm -f "$root/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/"
fi
cp /etc/hosts "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# The host's own certificate authorities, part of its network set-up like the two files above:
# where a proxy between this machine and PyPI signs with its own CA, pip in the root (the fmt 11
# headers of tools/install-deps.sh) would otherwise refuse every connection.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1 && [ -x "$root/usr/sbin/update-ca-certificates" ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" /usr/sbin/update-ca-certificates >/dev/null 2>&1 ||
    echo "fresh-root: update-ca-certificates failed in the root: PyPI may be unreachable there" >&2
fi

# The CUDA toolkit, as its installer leaves it: the tree plus its loader-cache entry.
cuda=$(readlink -f /usr/local/cuda 2>/dev/null || true)
if [ -n "$cuda" ] && [ -d "$cuda" ]; then
  bind "$cuda" "$root$cuda" ro
  ln -sfn "$cuda" "$root/usr/local/cuda"
  for f in /etc/ld.so.conf.d/*cuda*.conf; do [ -e "$f" ] && cp "$f" "$root/etc/ld.so.conf.d/"; done
  chroot "$root" ldconfig
fi

bind /proc "$root/proc"
bind /sys "$root/sys"
bind /dev "$root/dev"
mkdir -p "$root/dev/shm"
mount -t tmpfs -o size=4g tmpfs "$root/dev/shm"; mounts+=("$root/dev/shm")
mount -t tmpfs tmpfs "$root/run"; mounts+=("$root/run")

# A clean clone of what is committed here, where a newcomer puts it: in root's home, which only
# root may enter (mode 0700), so a test that runs something as another user must copy it out.
# shared/ beside it, as in CI.
# `real` alone reuses the clone and build a `test` or `ci` run left.
if [ "$what" != real ] || [ ! -f "$root/root/project/build/CTestTestfile.cmake" ]; then
  rm -rf --one-file-system "$root/src" "$root/root/project" "$root/root/shared"
  mkdir -p "$root/root"
  chmod 0700 "$root/root"
  git clone -q "$src" "$root/root/project"
fi
if [ -d "$src/../shared" ]; then bind "$(cd "$src/../shared" && pwd)" "$root/root/shared" ro; fi
# shellcheck source=tests/real/paths.sh
source "$src/tests/real/paths.sh"
for d in "$WHEEL_CACHE" "$WHEEL_TREES"; do
  if [ -d "$d" ]; then d=$(cd "$d" && pwd); bind "$d" "$root$d"; fi
done

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb LANG=C.UTF-8 CI="${CI:-}" \
  ${DENPEX_WHEEL_CACHE:+DENPEX_WHEEL_CACHE="$WHEEL_CACHE"} \
  ${DENPEX_WHEEL_TREES:+DENPEX_WHEEL_TREES="$WHEEL_TREES"} \
  bash -c "cd /root/project && $1"; }

if [ "$what" = root ]; then
  echo "=== fresh-root: the root and tools/install-deps.sh in it"
  in_root "tools/install-deps.sh" >"$work/install-deps.log" 2>&1 || { tail -30 "$work/install-deps.log"; exit 1; }
  exit 0
fi
if [ "$what" != test ] && [ "$what" != real ]; then
  echo "=== fresh-root: README quick start 1: tools/demo.sh"
  in_root "tools/demo.sh"
fi
if [ "$what" != demo ] && [ "$what" != real ]; then
  echo "=== fresh-root: README quick start 2: tools/test.sh"
  in_root "tools/test.sh"
fi
if [ "$what" = ci ]; then
  echo "=== fresh-root: every benchmark once, quick mode: bench/run.sh --quick build"
  in_root "bench/run.sh --quick build"
fi
if [ "$what" = ci ] || [ "$what" = real ]; then
  echo "=== fresh-root: the real-wheel step: tests/real/run.sh build"
  in_root "tests/real/run.sh build"
fi
