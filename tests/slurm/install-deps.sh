#!/bin/bash
# Packages the Slurm integration test needs (Debian 12): the daemons and munge (a subset of
# tools/install-deps.sh, for installing only these).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != 0 ]; then
  echo "install-deps.sh: must run as root (apt-get install)" >&2
  exit 2
fi
apt-get update
apt-get install -y slurm-wlm munge
