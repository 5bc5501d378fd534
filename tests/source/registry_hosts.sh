#!/bin/sh
# registry_hosts.sh SOURCE_DIR TOOL: fails when a tracked file names a package registry or mirror
# host. TOOL prints, as one extended regular expression, the hosts this machine's package
# clients are configured with; it lives beside the repository, not in it, so where it is absent
# (or the tree is not a git checkout) the test skips. Scripts read the mirror from the machine's
# apt sources instead (tools/debian-mirror.sh).
set -u
src=${1:?usage: registry_hosts.sh SOURCE_DIR TOOL} tool=${2:?usage: registry_hosts.sh SOURCE_DIR TOOL}
[ -x "$tool" ] || { echo "SKIP: $tool is absent: no list of registry hosts to check against"; exit 77; }
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: $src is not a git checkout"; exit 77; }
pattern=$("$tool") || { echo "FAIL: $tool failed"; exit 1; }
[ -n "$pattern" ] || { echo "FAIL: $tool printed no pattern"; exit 1; }
if git -C "$src" grep -nE "$pattern"; then
  echo "FAIL: the files above name a registry host ($tool); read it from the machine's configuration instead"
  exit 1
fi
echo "registry_hosts.sh: no tracked file names a registry host"
