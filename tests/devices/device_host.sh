#!/usr/bin/env bash
# One stand-in host for the device tests: runs a command in its own mount and UTS namespaces
# with the host name HOST and the driver's and the kernel's device files of TREE mounted where
# the kernel keeps them: a tmpfs over /proc/driver (procfs refuses mkdir), one over /sys/class
# (with /sys/class/net's links made again, so interfaces stay the machine's) and one over
# /sys/module. Nothing of it is seen outside the namespace.
# usage: device_host.sh HOST TREE COMMAND [ARGS...]   (as root)
#   TREE holds proc/driver/..., sys/class/... (directories, no links out of the tree; no net)
#   and sys/module/...
set -euo pipefail
# --propagation unchanged: in a chroot whose / is no mount point (a CI root) unshare cannot make
# / private; only /proc and /sys, which are mount points everywhere, are made private below, so
# nothing mounted here reaches the parent namespace.
if [ "${DENPEX_DEVICE_HOST_INSIDE:-}" != 1 ]; then
  DENPEX_DEVICE_HOST_INSIDE=1 exec unshare -m --uts --propagation unchanged "$0" "$@"
fi
unset DENPEX_DEVICE_HOST_INSIDE
host=$1 tree=$2
shift 2
mount --make-rprivate /proc
mount --make-rprivate /sys
hostname "$host"
mount -t tmpfs -o mode=0755 denpex-proc-driver /proc/driver
[ ! -d "$tree/proc/driver" ] || cp -a "$tree/proc/driver/." /proc/driver/
# The machine's interfaces stay: /sys/class/net's entries are links into /sys/devices, which
# the tmpfs does not cover; they are made again on it.
nets=()
for l in /sys/class/net/*; do nets+=("${l##*/}" "$(readlink "$l")"); done
mount -t tmpfs -o mode=0755 denpex-sys-class /sys/class
mkdir /sys/class/net
for ((i = 0; i < ${#nets[@]}; i += 2)); do ln -s "${nets[i + 1]}" "/sys/class/net/${nets[i]}"; done
[ ! -d "$tree/sys/class" ] || cp -a "$tree/sys/class/." /sys/class/
mount -t tmpfs -o mode=0755 denpex-sys-module /sys/module
[ ! -d "$tree/sys/module" ] || cp -a "$tree/sys/module/." /sys/module/
exec "$@"
