#!/bin/bash
# launch/validate-image where images and engines leave the happy path:
#   - special files (FIFOs) at /etc/ld.so.cache, at libnccl.so.2 and at torch/version.py in the
#     tree, and a FIFO inside a docker-save layer: refused with a message naming the file, never
#     waited on;
#   - a container engine whose `save` never returns, and a probe stuck on a hung file system:
#     the run ends at --timeout with one line saying where it was;
#   - a clean image unpacked under /tmp (writable by every user, but sticky) passes --strict
#     as root: nothing under --root is loaded, so where the tree lies is no trust question;
#   - nothing from an image reaches the host: a config Env setting LD_AUDIT (an audit library
#     built here that leaves a marker), LD_DEBUG_OUTPUT, LD_LIBRARY_PATH (a host directory with
#     a library the probe would pick) or LD_PRELOAD is data for the probe, never its environment;
#     manifest paths (absolute, `..`), OCI digests that are no algorithm:hex, and archive
#     members that are symbolic links out (manifest.json, a layer, a blob) are refused with one
#     line; hard links and names tar escapes (backslash, newline) through a lower layer's link
#     are refused. Each: the exit status, the one line, no marker, a scratch tree beside the
#     archive unchanged (path, size, mtime, mode, link count).
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

# --- nothing from an image reaches the host ---------------------------------------------------------
command -v python3 >/dev/null && command -v cc >/dev/null || { echo "FAIL: python3 and cc are needed" >&2; exit 1; }
X=$work/hostile; S=$X/scratch; M=$S/markers
mkdir -p "$X/lib" "$X/llp" "$M" "$S/dir" "$X/tmp"
echo victim >"$S/victim.txt"; chmod 444 "$S/victim.txt"; echo file >"$S/dir/file"
cat >"$X/marker.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
static void mark(const char *p) { int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }
unsigned int la_version(unsigned int v) { mark(MARKER_DIR "/audit-loaded"); return v; }
__attribute__((constructor)) static void ctor(void) { mark(MARKER_DIR "/" MARKER_NAME); }
C
cc -shared -fPIC -o "$X/lib/libaudit-marker.so" -DMARKER_DIR="\"$M\"" -DMARKER_NAME='"library-loaded"' "$X/marker.c"
# The library ld.so would load an audit library like this one: proof that the marker works.
LD_AUDIT=$X/lib/libaudit-marker.so /bin/true; [ -e "$M/audit-loaded" ] || bad "the audit marker library does not work"
# A library the probe needs, without symbol versions, shadowed in a host directory by a filter
# of the real one (so the probe still runs) that leaves a marker when loaded.
llp=
while read -r soname real; do
  ! objdump -p "$real" 2>/dev/null | grep -q '^Version definitions:' || continue
  cc -shared -fPIC -o "$X/llp/$soname" -Wl,-soname,"$soname" -Wl,--filter="$real" \
    -DMARKER_DIR="\"$M\"" -DMARKER_NAME='"llp-loaded"' "$X/marker.c" 2>/dev/null && { llp=$soname; break; }
done < <(ldd "$probe" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
         grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libdl|libpthread|librt)\.')
if [ -n "$llp" ]; then
  LD_LIBRARY_PATH=$X/llp "$probe" --version >/dev/null && [ -e "$M/llp-loaded" ] ||
    bad "the LD_LIBRARY_PATH marker ($llp) is not loaded by the probe, or breaks it"
else
  echo "note: the probe needs no unversioned library to shadow; the LD_LIBRARY_PATH case only checks the exit"
fi
rm -f "$M"/*
snap() { find "$S" -printf '%p %s %T@ %m %n %y %l\n' | LC_ALL=C sort; }

# py_tar OUT JSON: a tar from [[name, kind, arg], ...], kind f (arg: text, or @FILE), l (symlink),
# h (hard link), d (directory); names and targets exactly as given (absolute, .., escapes).
py_tar() {
  python3 - "$@" <<'PY'
import io, json, sys, tarfile
out, spec = sys.argv[1], json.loads(sys.argv[2])
with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as t:
    for name, kind, arg in spec:
        ti = tarfile.TarInfo(name); ti.mode = 0o644; ti.mtime = 0
        if kind == "f":
            data = open(arg[1:], "rb").read() if arg.startswith("@") else arg.encode()
            ti.size = len(data); t.addfile(ti, io.BytesIO(data)); continue
        ti.type = {"l": tarfile.SYMTYPE, "h": tarfile.LNKTYPE, "d": tarfile.DIRTYPE}[kind]
        if kind == "d": ti.mode = 0o755
        ti.linkname = arg; t.addfile(ti)
PY
}
# A clean layer and config; the host's copy of the layer sits in the scratch tree.
tree "$X/clean"; rm -rf "$X/clean/usr/local"; tar -C "$X/clean" -cf "$X/layer.tar" .
cp "$X/layer.tar" "$S/host-layer.tar"
cfg_env() { jq -cn --args '{architecture: "amd64", os: "linux", config: {Env: $ARGS.positional}}' "$@"; }
cfg_env PATH=/bin >"$S/host-config.json"
snap >"$X/before"
# docker_tar OUT MANIFEST_JSON CONFIG_JSON [EXTRA_SPEC]: a docker-save archive with the clean layer
# as l0/layer.tar and the config as cfg.json; EXTRA_SPEC members replace or add.
docker_tar() {
  local out=$1 man=$2 cfg=$3 extra=${4:-[]}
  printf '%s' "$cfg" >"$X/cfg.json"; printf '%s' "$man" >"$X/manifest.json"
  py_tar "$out" "$(jq -cn --arg l "@$X/layer.tar" --arg c "@$X/cfg.json" --arg m "@$X/manifest.json" --argjson e "$extra" '
    ([["l0", "d", ""], ["l0/layer.tar", "f", $l], ["cfg.json", "f", $c], ["manifest.json", "f", $m]]
     | map(select(.[0] as $n | ($e | map(.[0]) | index($n)) | not))) + $e')"
}
good_manifest='[{"Config":"cfg.json","RepoTags":["t:1"],"Layers":["l0/layer.tar"]}]'
# oci_tar OUT LAYER_DIGEST CONFIG_DIGEST MANIFEST_DIGEST [EXTRA_SPEC]: an OCI layout with the clean
# layer and config; a digest given as "-" is the real one.
oci_tar() {
  local out=$1 ld=$2 cd=$3 md=$4 extra=${5:-[]} lh ch mh
  cfg_env PATH=/bin >"$X/oci-cfg.json"
  lh=$(sha256sum "$X/layer.tar" | cut -d' ' -f1); ch=$(sha256sum "$X/oci-cfg.json" | cut -d' ' -f1)
  [ "$ld" != - ] || ld=sha256:$lh; [ "$cd" != - ] || cd=sha256:$ch
  jq -cn --arg l "$ld" --arg c "$cd" '{schemaVersion: 2, config: {digest: $c}, layers: [{digest: $l}]}' >"$X/oci-man.json"
  mh=$(sha256sum "$X/oci-man.json" | cut -d' ' -f1); [ "$md" != - ] || md=sha256:$mh
  jq -cn --arg m "$md" '{schemaVersion: 2, manifests: [{digest: $m}]}' >"$X/oci-index.json"
  py_tar "$out" "$(jq -cn --arg lh "$lh" --arg ch "$ch" --arg mh "$mh" --arg X "$X" --argjson e "$extra" '
    ([["index.json", "f", "@\($X)/oci-index.json"], ["blobs", "d", ""], ["blobs/sha256", "d", ""],
      ["blobs/sha256/\($lh)", "f", "@\($X)/layer.tar"], ["blobs/sha256/\($ch)", "f", "@\($X)/oci-cfg.json"],
      ["blobs/sha256/\($mh)", "f", "@\($X)/oci-man.json"]]
     | map(select(.[0] as $n | ($e | map(.[0]) | index($n)) | not))) + $e')"
}

# hostile NAME EXPECTED_EXIT "WORDS" ARCHIVE: validate-image -q on it (unpacking beside the
# scratch tree, so `..` paths reach it); exit 2 is exactly one line holding WORDS; no marker;
# the scratch tree unchanged.
hostile() {
  local name=$1 want=$2 words=$3 a=$4 rc=0
  TMPDIR=$X/tmp timeout -k 5 60 "$vi" --probe "$probe" -q --timeout 30 --json "$work/$name.json" "$a" \
    >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.err" >&2; bad "$name: exit $rc, expected $want"; }
  if [ "$rc" = 2 ]; then
    [ "$(wc -l <"$work/$name.err")" = 1 ] || bad "$name: exit 2 with more than one line: $(head -c 400 "$work/$name.err")"
  fi
  [ -z "$words" ] || says "$name" "$words"
  [ -z "$(ls -A "$M")" ] || { bad "$name: marker(s) $(ls -A "$M" | tr '\n' ' ')"; rm -f "$M"/*; snap >"$X/before"; }
  snap >"$X/after"
  # After a change, the next case is compared with the tree as this one left it.
  cmp -s "$X/before" "$X/after" || { bad "$name: the scratch tree changed: $(diff "$X/before" "$X/after" | grep '^[<>]' | head -n 4 | tr '\n' ';')"; snap >"$X/before"; }
  [ -z "$(ls -A "$X/tmp")" ] || bad "$name: validate-image left $(ls -A "$X/tmp")"
  echo "ok? $name (exit $rc)"
}
# ../ from validate-image's unpack directory ($X/tmp/validate-image.XXXXXX/archive) to the scratch tree.
up=../../../scratch

# The image's loader variables are data: the probe reads them inside the image, loads nothing.
docker_tar "$X/env-audit.tar" "$good_manifest" "$(cfg_env PATH=/usr/bin:/bin "LD_AUDIT=$X/lib/libaudit-marker.so")"
hostile env-audit 0 "" "$X/env-audit.tar"
docker_tar "$X/env-debug.tar" "$good_manifest" "$(cfg_env PATH=/usr/bin:/bin LD_DEBUG=all "LD_DEBUG_OUTPUT=$M/lddebug")"
hostile env-debug 0 "" "$X/env-debug.tar"
docker_tar "$X/env-llp.tar" "$good_manifest" "$(cfg_env PATH=/usr/bin:/bin "LD_LIBRARY_PATH=$X/llp")"
hostile env-llp 0 "" "$X/env-llp.tar"
# An image LD_PRELOAD naming a library inside it (a marker NCCL): modelled (nccl.origin
# LD_PRELOAD), not loaded.
mkdir -p "$X/pre/opt/pre"; cp -L "$standins/nccl-2.27.3/libnccl.so.2" "$X/pre/opt/pre/libnccl.so.2"
tar -C "$X/pre" -cf "$X/pre-layer.tar" .
docker_tar "$X/env-preload.tar" '[{"Config":"cfg.json","Layers":["l0/layer.tar","l1/layer.tar"]}]' \
  "$(cfg_env PATH=/usr/bin:/bin LD_PRELOAD=/opt/pre/libnccl.so.2 "LD_AUDIT=$X/lib/libaudit-marker.so")" \
  "[[\"l1\", \"d\", \"\"], [\"l1/layer.tar\", \"f\", \"@$X/pre-layer.tar\"]]"
hostile env-preload 0 "" "$X/env-preload.tar"
has env-preload '.ranks[0].nccl.origin == "LD_PRELOAD" and .ranks[0].nccl.path == "/opt/pre/libnccl.so.2" and .ranks[0].nccl.version == "2.27.3"'

# Paths that leave the archive.
docker_tar "$X/layers-abs.tar" "[{\"Config\":\"cfg.json\",\"Layers\":[\"$S/host-layer.tar\"]}]" "$(cfg_env PATH=/bin)"
hostile layers-abs 2 "Layers entry 1 \"$S/host-layer.tar\" is not a plain relative path inside the archive" "$X/layers-abs.tar"
docker_tar "$X/layers-dotdot.tar" "[{\"Config\":\"cfg.json\",\"Layers\":[\"$up/host-layer.tar\"]}]" "$(cfg_env PATH=/bin)"
hostile layers-dotdot 2 "Layers entry 1 \"$up/host-layer.tar\" is not a plain relative path" "$X/layers-dotdot.tar"
docker_tar "$X/config-abs.tar" "[{\"Config\":\"$S/host-config.json\",\"Layers\":[\"l0/layer.tar\"]}]" "$(cfg_env PATH=/bin)"
hostile config-abs 2 "Config \"$S/host-config.json\" is not a plain relative path" "$X/config-abs.tar"
docker_tar "$X/config-dotdot.tar" "[{\"Config\":\"l0/../$up/host-config.json\",\"Layers\":[\"l0/layer.tar\"]}]" "$(cfg_env PATH=/bin)"
hostile config-dotdot 2 "is not a plain relative path inside the archive" "$X/config-dotdot.tar"
oci_tar "$X/digest-dotdot.tar" "sha256:../../etc/passwd" - -
hostile digest-dotdot 2 'layer 1 digest "sha256:../../etc/passwd" is not algorithm:hex' "$X/digest-dotdot.tar"
oci_tar "$X/digest-xyz.tar" - sha256:XYZ -
hostile digest-xyz 2 'config digest "sha256:XYZ" is not algorithm:hex' "$X/digest-xyz.tar"
oci_tar "$X/digest-empty.tar" - - ""
hostile digest-empty 2 'manifest digest "" is not algorithm:hex' "$X/digest-empty.tar"
oci_tar "$X/digest-short.tar" "sha256:$(printf 'a%.0s' {1..63})" - -
hostile digest-short 2 "has 63 hex digits, not what sha256 has" "$X/digest-short.tar"
# Members that are links out of the archive, and one that stays inside (allowed: docker's
# legacy save links shared layers).
docker_tar "$X/manifest-link.tar" "$good_manifest" "$(cfg_env PATH=/bin)" "[[\"manifest.json\", \"l\", \"/etc/shadow\"]]"
hostile manifest-link 2 "manifest.json is a symbolic link leading outside the archive; refused" "$X/manifest-link.tar"
docker_tar "$X/layer-link.tar" "$good_manifest" "$(cfg_env PATH=/bin)" "[[\"l0/layer.tar\", \"l\", \"$S/host-layer.tar\"]]"
hostile layer-link 2 "Layers entry 1 l0/layer.tar is a symbolic link leading outside the archive" "$X/layer-link.tar"
docker_tar "$X/config-link.tar" "$good_manifest" "$(cfg_env PATH=/bin)" "[[\"cfg.json\", \"l\", \"$up/host-config.json\"]]"
hostile config-link 2 "Config cfg.json is a symbolic link leading outside the archive" "$X/config-link.tar"
docker_tar "$X/layer-link-inside.tar" '[{"Config":"cfg.json","Layers":["l0/layer.tar","l1/layer.tar"]}]' "$(cfg_env PATH=/bin)" \
  '[["l1", "d", ""], ["l1/layer.tar", "l", "../l0/layer.tar"]]'
hostile layer-link-inside 0 "" "$X/layer-link-inside.tar"
lh=$(sha256sum "$X/layer.tar" | cut -d' ' -f1)
oci_tar "$X/blob-link.tar" - - - "[[\"blobs/sha256/$lh\", \"l\", \"$S/host-layer.tar\"]]"
hostile blob-link 2 "layer 1 blobs/sha256/$lh is a symbolic link leading outside the archive" "$X/blob-link.tar"
# (GNU tar itself refuses a directory member over a link it made: never written through.)
oci_tar "$X/blobs-dir-link.tar" - - - "[[\"blobs\", \"l\", \"$S\"]]"
hostile blobs-dir-link 2 "is not a readable tar archive" "$X/blobs-dir-link.tar"
# Layers reaching out through a lower layer's link: a hard link (its clean-up's chmod would
# change the host file's mode), and names tar's listing escapes (a backslash, a newline).
for c in hardlink backslash newline; do
  case $c in
    hardlink) lower="[[\"esc\", \"l\", \"$S\"]]"; upper='[["h", "h", "esc/victim.txt"]]'; words="hard-links h to a file outside the tree" ;;
    backslash) lower="[[\"a\\\\b\", \"l\", \"$S\"]]"; upper='[["a\\b/evil.txt", "f", "pwned"]]'; words="through a symbolic link of a lower layer" ;;
    newline) lower="[[\"a\\nb\", \"l\", \"$S\"]]"; upper='[["a\nb/evil.txt", "f", "pwned"]]'; words="through a symbolic link of a lower layer" ;;
  esac
  py_tar "$X/$c-1.tar" "$lower"; py_tar "$X/$c-2.tar" "$upper"
  docker_tar "$X/through-$c.tar" '[{"Config":"cfg.json","Layers":["l0/layer.tar","l1/layer.tar","l2/layer.tar"]}]' "$(cfg_env PATH=/bin)" \
    "[[\"l1\", \"d\", \"\"], [\"l1/layer.tar\", \"f\", \"@$X/$c-1.tar\"], [\"l2\", \"d\", \"\"], [\"l2/layer.tar\", \"f\", \"@$X/$c-2.tar\"]]"
  hostile "through-$c" 2 "$words" "$X/through-$c.tar"
done

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
