# shellcheck shell=bash
# Sourced by tools/portable-build.sh and tests/portable/check.sh: a Debian 11 (bullseye) root made
# with `debootstrap --variant=minbase`, kept as it came (the check copies it, the build copies it
# before installing compilers), and the mounts a chroot into it needs, undone on exit.
# Needs root and debootstrap (installed with apt-get when missing). The mirror is the one this
# machine's apt uses (tools/debian-mirror.sh), or $DENPEX_BULLSEYE_MIRROR, or debootstrap's own
# default.

# shellcheck source=tools/debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
bullseye_mirror=${DENPEX_BULLSEYE_MIRROR:-$(debian_mirror)}
bullseye_mounts=()

# bullseye_remove DIR...: removes roots, first undoing any mount a killed earlier run left in
# them (/proc, /sys, /dev): `rm -rf` through a bind mount would delete the host's files.
bullseye_remove() {
  local d m
  for d in "$@"; do
    for m in $(awk -v r="$d/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do
      umount -l "$m" 2>/dev/null || true
    done
    rm -rf --one-file-system "$d"
  done
}

# bullseye_minbase DIR: DIR is a pristine minbase bullseye root afterwards. DIR.done marks a
# complete one, so an interrupted debootstrap is redone, not reused.
bullseye_minbase() {
  local dir=$1
  if [ -e "$dir.done" ] && [ -x "$dir/bin/bash" ]; then return 0; fi
  command -v debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  bullseye_remove "$dir" "$dir.done"
  echo "bullseye-root: debootstrap --variant=minbase bullseye $dir (${bullseye_mirror:-the default mirror of debootstrap})"
  if ! debootstrap --variant=minbase bullseye "$dir" ${bullseye_mirror:+"$bullseye_mirror"} >"$dir.log" 2>&1; then
    tail -20 "$dir.log" >&2
    echo "bullseye-root: debootstrap failed (log: $dir.log)" >&2
    return 1
  fi
  touch "$dir.done"
}

# bullseye_copy SRC DST: DST becomes a fresh copy of the root SRC (hard links would let a change
# in one show in the other); an interrupted copy never leaves a DST behind.
bullseye_copy() {
  bullseye_remove "$2" "$2.partial"
  cp -a "$1" "$2.partial"
  mv "$2.partial" "$2"
}

bullseye_unmount() {
  local i
  for ((i = ${#bullseye_mounts[@]} - 1; i >= 0; i--)); do
    umount -l "${bullseye_mounts[i]}" 2>/dev/null || true
  done
  bullseye_mounts=()
}

# bullseye_mount ROOT: /proc, /sys, /dev and /dev/pts as a container runtime provides them.
# The caller sets `trap bullseye_unmount EXIT` first.
bullseye_mount() {
  local root=$1 d
  for d in proc sys dev dev/pts; do
    mkdir -p "$root/$d"
    mount --bind "/$d" "$root/$d"
    bullseye_mounts+=("$root/$d")
  done
}
