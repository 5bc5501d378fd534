#!/bin/bash
# launch/validate-image where images and engines leave the happy path:
#   - special files (FIFOs) at /etc/ld.so.cache, at libnccl.so.2 and at torch/version.py in the
#     tree, and a FIFO inside a docker-save layer: refused with a message naming the file, never
#     waited on;
#   - a container engine whose `save` never returns, and a probe stuck on a hung file system:
#     the run ends at --timeout with one line saying where it was;
#   - a clean image unpacked under /tmp (writable by every user, but sticky) passes --strict
#     as root: nothing under --root is loaded, so where the tree lies is no trust question.
#
# usage: run_validate_image_safety_test.sh VALIDATE_IMAGE PROBE STANDINS_DIR WORKDIR
set -uo pipefail

vi=$(realpath "${1:?usage: run_validate_image_safety_test.sh VALIDATE_IMAGE PROBE STANDINS_DIR WORKDIR}")
probe=$(realpath "${2:?missing PROBE}")
standins=$(realpath "${3:?missing STANDINS_DIR}")
work=${4:?missing WORKDIR}

failures=0
bad() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
command -v jq >/dev/null || { echo "FAIL: jq not found (apt-get install jq)" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"; chmod 755 "$work"; work=$(realpath "$work")

# run_vi NAME EXPECTED_EXIT BOUND_SECONDS ARGS...: validate-image, which must end within BOUND.
run_vi() {
  local name=$1 want=$2 bound=$3 rc=0 t0 t1
  shift 3
  t0=$(date +%s%N)
  timeout -k 5 $((bound + 30)) "$vi" --probe "$probe" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  t1=$(date +%s%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  if [ "$rc" != "$want" ]; then
    cat "$work/$name.out" "$work/$name.err" >&2
    bad "$name: exit $rc, expected $want"
  fi
  awk -v s="$secs" -v b="$bound" 'BEGIN { exit !(s <= b) }' || bad "$name: took $secs s, more than $bound s"
  echo "ok? $name (exit $rc in $secs s)"
}
# has NAME JQ_EXPR: the JSON report of run NAME satisfies the expression.
has() {
  jq -e "$2" "$work/$1.json" >/dev/null 2>&1 ||
    { bad "$1: report does not satisfy $2"; jq -c '[.findings[] | {code, message}]' "$work/$1.json" >&2 2>/dev/null; }
}
says() { grep -qF -- "$2" "$work/$1.err" || bad "$1: stderr does not say \"$2\": $(head -c 400 "$work/$1.err")"; }

# An image tree: NCCL 2.21.5 in the system directory, torch without CUDA in dist-packages.
tree() {
  local t=$1
  mkdir -p "$t/usr/lib/x86_64-linux-gnu" "$t/etc" "$t/usr/local/lib/python3.11/dist-packages/torch"
  cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$t/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"
  ln -s libnccl.so.2.21.5 "$t/usr/lib/x86_64-linux-gnu/libnccl.so.2"
  printf "__version__ = '2.5.1'\n" >"$t/usr/local/lib/python3.11/dist-packages/torch/version.py"
  chmod -R a+rX "$t"
}

# --- FIFOs in a directory image ------------------------------------------------------------------
tree "$work/fifo-cache"; mkfifo "$work/fifo-cache/etc/ld.so.cache"
run_vi fifo-cache 0 20 --timeout 20 --json "$work/fifo-cache.json" "$work/fifo-cache"
has fifo-cache 'any(.findings[]; .code == "probe-error" and (.message | contains("/etc/ld.so.cache: is a FIFO (named pipe), not a regular file")))'

tree "$work/fifo-nccl"; rm "$work/fifo-nccl/usr/lib/x86_64-linux-gnu/libnccl.so.2"
mkfifo "$work/fifo-nccl/usr/lib/x86_64-linux-gnu/libnccl.so.2"
run_vi fifo-nccl 1 20 --timeout 20 --json "$work/fifo-nccl.json" "$work/fifo-nccl"
has fifo-nccl 'any(.findings[]; .code == "nccl-unloadable" and (.message | contains("/usr/lib/x86_64-linux-gnu/libnccl.so.2: is a FIFO (named pipe), not a regular file")))'

tree "$work/fifo-torch"; v=$work/fifo-torch/usr/local/lib/python3.11/dist-packages/torch/version.py
rm "$v"; mkfifo "$v"
run_vi fifo-torch 0 20 --timeout 20 --json "$work/fifo-torch.json" "$work/fifo-torch"
has fifo-torch 'any(.findings[]; .code == "torch-unreadable" and (.message | contains("version.py cannot be read: is a FIFO (named pipe), not a regular file")))'

# A FIFO as a member of a docker-save layer: tar recreates it in the unpacked tree.
D=$work/fifo-docker; L=$D/layer
tree "$L"; rm "$L/usr/lib/x86_64-linux-gnu/libnccl.so.2"; mkfifo "$L/usr/lib/x86_64-linux-gnu/libnccl.so.2"
mkdir -p "$D/img/a"; tar -C "$L" -cf "$D/img/a/layer.tar" .
echo '{"config":{"Env":["PATH=/usr/bin:/bin"]}}' >"$D/img/cfg.json"
echo '[{"Config":"cfg.json","RepoTags":["test/fifo:1"],"Layers":["a/layer.tar"]}]' >"$D/img/manifest.json"
tar -C "$D/img" -cf "$work/fifo-docker.tar" .
TMPDIR=$work run_vi fifo-docker 1 20 --timeout 20 --json "$work/fifo-docker.json" "$work/fifo-docker.tar"
has fifo-docker 'any(.findings[]; .code == "nccl-unloadable" and (.message | contains("is a FIFO (named pipe)")))'

# --- a clean image unpacked under /tmp passes --strict as root ----------------------------------
C=$work/clean; tree "$C/layer"; rm -rf "$C/layer/usr/local"
mkdir -p "$C/img/a"; tar -C "$C/layer" -cf "$C/img/a/layer.tar" .
echo '{"config":{"Env":["PATH=/usr/bin:/bin"]}}' >"$C/img/cfg.json"
echo '[{"Config":"cfg.json","RepoTags":["test/clean:1"],"Layers":["a/layer.tar"]}]' >"$C/img/manifest.json"
tar -C "$C/img" -cf "$work/clean.tar" .
TMPDIR=/tmp run_vi clean-under-tmp 0 30 --strict --json "$work/clean-under-tmp.json" "$work/clean.tar"
has clean-under-tmp '.verdict == "pass" and ([.findings[] | select(.code == "probe-untrusted-library")] | length == 0)'

# --- the deadline --------------------------------------------------------------------------------
# A container engine that answers `info` but whose `save` never returns.
mkdir -p "$work/bin"
cat >"$work/bin/docker" <<'SH'
#!/bin/sh
case $1 in info) exit 0 ;; save) exec sleep 100000 ;; *) exit 1 ;; esac
SH
chmod 755 "$work/bin/docker"
PATH=$work/bin:$PATH run_vi engine-hangs 2 12 --timeout 5 registry.example/hangs:1
says engine-hangs "did not finish within --timeout 5 s (it was saving registry.example/hangs:1 with docker save)"
tail -n 1 "$work/engine-hangs.err" | grep -q "did not finish within --timeout 5 s" ||
  bad "engine-hangs: the last line on stderr is not the timeout"
# The fake engine is in validate-image's process group, which timeout(1) ends with it.
pgrep -f "sleep 100000" >/dev/null && bad "engine-hangs: the hung docker save was left running"

# A probe stuck on a hung file system (opening torch/version.py never returns): the probe gets
# what is left of --timeout as its own, and reports rank-timeout naming the step before the run
# is cut off.
cat >"$work/bin/probe-on-hung-fs" <<SH
#!/bin/sh
# verify_asan_link_order=0: the sanitizer build (tests/sanitize.sh) otherwise refuses a preload
# ahead of its runtime; ignored by the ordinary build.
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}verify_asan_link_order=0 \\
LD_PRELOAD=$standins/hang-open/libdenpex-hang-open.so DENPEX_HANG_OPEN=torch/version.py exec "$probe" "\$@"
SH
chmod 755 "$work/bin/probe-on-hung-fs"
tree "$work/hung"
rc=0; t0=$(date +%s)
timeout -k 5 60 "$vi" --probe "$work/bin/probe-on-hung-fs" --timeout 8 --json "$work/hung.json" "$work/hung" \
  >"$work/hung.out" 2>"$work/hung.err" || rc=$?
took=$(($(date +%s) - t0))
[ "$rc" = 1 ] || { cat "$work/hung.err" >&2; bad "hung: exit $rc, expected 1 (rank-timeout)"; }
[ "$took" -le 10 ] || bad "hung: took $took s with --timeout 8"
has hung 'any(.findings[]; .code == "rank-timeout" and (.message | contains("stuck in: PyTorch")))'

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo PASS
