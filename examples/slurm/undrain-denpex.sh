#!/bin/bash
# Lift the drains denpex-prolog set (reason "denpex: ...") on nodes that pass again, and no
# others. Run on each node (NHC hook, systemd timer) as root.
set -euo pipefail
node=$(hostname -s)
reason=$(sinfo -h -R -n "$node" -o '%E')
case $reason in
  denpex:*) ;;
  *) exit 0 ;;   # not drained, or drained by someone else: leave it
esac
if timeout 60 denpex-probe --quiet --baseline /etc/denpex/baseline.json; then
  scontrol update nodename="$node" state=resume
  echo "undrain-denpex: $node passes again; resumed (was: $reason)"
fi
