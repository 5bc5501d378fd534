#!/usr/bin/env bash
# One stand-in host for the device tests: runs a command in its own mount and UTS namespaces
# with the host name HOST and the driver's and the kernel's device files of TREE mounted where
# the kernel keeps them: a tmpfs over /proc/driver (procfs refuses mkdir), one over /sys/class
# (the real /sys/class/net moved back in, so interfaces stay the machine's) and one over
# /sys/module. Nothing of it is seen outside the namespace.
# usage: device_host.sh HOST TREE COMMAND [ARGS...]   (as root)
#   TREE holds proc/driver/..., sys/class/... (directories, no links out of the tree; no net)
#   and sys/module/...
set -euo pipefail
if [ "${DENPEX_DEVICE_HOST_INSIDE:-}" != 1 ]; then
  DENPEX_DEVICE_HOST_INSIDE=1 exec unshare -m --uts "$0" "$@"
fi
unset DENPEX_DEVICE_HOST_INSIDE
host=$1 tree=$2
shift 2
mount --make-rprivate /
hostname "$host"
mount -t tmpfs -o mode=0755 denpex-proc-driver /proc/driver
[ ! -d "$tree/proc/driver" ] || cp -a "$tree/proc/driver/." /proc/driver/
# The machine's interfaces stay: /sys/class/net is set aside, and moved back over the tmpfs.
stash=$(mktemp -d "$tree/.net.XXXXXX")
mount --bind /sys/class/net "$stash"
mount -t tmpfs -o mode=0755 denpex-sys-class /sys/class
mkdir /sys/class/net
mount --move "$stash" /sys/class/net
rmdir "$stash" 2>/dev/null || true
[ ! -d "$tree/sys/class" ] || cp -a "$tree/sys/class/." /sys/class/
mount -t tmpfs -o mode=0755 denpex-sys-module /sys/module
[ ! -d "$tree/sys/module" ] || cp -a "$tree/sys/module/." /sys/module/
exec "$@"
