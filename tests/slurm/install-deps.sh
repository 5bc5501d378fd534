#!/bin/bash
# Packages the Slurm integration test needs (Debian 12): the daemons and munge, plus help2man
# for the man page of the .deb. Called by CI before the build.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: must run as root (apt-get install)" >&2
  exit 2
fi
apt-get update
apt-get install -y slurm-wlm munge help2man
