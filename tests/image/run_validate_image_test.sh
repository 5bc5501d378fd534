#!/bin/bash
# launch/validate-image on archives built here: a `docker save` archive and an OCI image layout
# (gzip layers, an index in front of the manifest), both with whiteouts across layers and an
# image config whose Env sets LD_LIBRARY_PATH; a directory against a host record; the exit-2
# cases (no engine for an image name, not an image archive, a missing record, a layer writing
# through a symlink).
#
# usage: run_validate_image_test.sh VALIDATE_IMAGE PROBE STANDINS_DIR MARKER_DIR WORKDIR
set -euo pipefail

vi=$(realpath "${1:?usage: run_validate_image_test.sh VALIDATE_IMAGE PROBE STANDINS_DIR MARKER_DIR WORKDIR}")
probe=$(realpath "${2:?missing PROBE}")
standins=$(realpath "${3:?missing STANDINS_DIR}")
marker=${4:?missing MARKER_DIR}/nccl-loaded
work=${5:?missing WORKDIR}

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null || fail "jq not found (apt-get install jq)"
rm -rf "$work"; mkdir -p "$work"; chmod 755 "$work"; work=$(realpath "$work")
rm -f "$marker"
export TMPDIR=$work   # validate-image's unpack directory, cleaned by it

jq_is() {
  local got
  got=$(jq -r "$2" "$1") || fail "jq '$2' failed on $1"
  [ "$got" = "$3" ] || { head -c 3000 "$1" >&2; echo >&2; fail "$(basename "$1"): $2: expected '$3', got '$got'"; }
}
# run_vi NAME EXPECTED_EXIT ARGS...
run_vi() {
  local name=$1 want=$2 rc=0
  shift 2
  "$vi" --probe "$probe" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$work/$name.out" "$work/$name.err" >&2; fail "$name: exit $rc, expected $want"; }
  [ ! -e "$marker" ] || fail "$name: the marker library was loaded"
  echo "ok $name (exit $rc)"
}
nccl_real() { realpath "$standins/$1/libnccl.so.2"; }

# --- three layers ---------------------------------------------------------------------------------
# 1: Debian NCCL 2.21.5 (marker library under /opt/old)    2: whiteouts delete 2.21.5; NCCL 2.27.3
# 3: opaque whiteout empties /opt/old; NCCL 2.28.9 (+cuda12.9) in /opt/nccl/lib, which the
#    config's Env puts on LD_LIBRARY_PATH.
L=$work/layers
mkdir -p "$L"/{1,2,3}
l1=$L/1/usr/lib/x86_64-linux-gnu
mkdir -p "$l1" "$L/1/etc/ld.so.conf.d" "$L/1/opt/old"
cp "$(nccl_real nccl-2.21.5)" "$l1/"; ln -s libnccl.so.2.21.5 "$l1/libnccl.so.2"
cp "$(nccl_real nccl-marker)" "$L/1/opt/old/libnccl.so.2"
echo "include /etc/ld.so.conf.d/*.conf" >"$L/1/etc/ld.so.conf"
echo /usr/lib/x86_64-linux-gnu >"$L/1/etc/ld.so.conf.d/x86_64-linux-gnu.conf"
l2=$L/2/usr/lib/x86_64-linux-gnu
mkdir -p "$l2"
: >"$l2/.wh.libnccl.so.2.21.5"; : >"$l2/.wh.libnccl.so.2"
cp "$(nccl_real nccl-2.27.3)" "$l2/"; ln -s libnccl.so.2.27.3 "$l2/libnccl.so.2"
mkdir -p "$L/3/opt/old" "$L/3/opt/nccl/lib"
: >"$L/3/opt/old/.wh..wh..opq"
echo "kept" >"$L/3/opt/old/README"
cp "$(nccl_real nccl-2.28.9-cu12)" "$L/3/opt/nccl/lib/libnccl.so.2.28.9"
ln -s libnccl.so.2.28.9 "$L/3/opt/nccl/lib/libnccl.so.2"
for i in 1 2 3; do tar -C "$L/$i" -cf "$L/$i.tar" .; done
config='{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LD_LIBRARY_PATH=/opt/nccl/lib","NCCL_PROTO=Simple"]},"rootfs":{"type":"layers","diff_ids":[]}}'

# docker save layout
D=$work/docker
mkdir -p "$D"/{a,b,c}
cp "$L/1.tar" "$D/a/layer.tar"; cp "$L/2.tar" "$D/b/layer.tar"; cp "$L/3.tar" "$D/c/layer.tar"
echo "$config" >"$D/cfg.json"
echo '[{"Config":"cfg.json","RepoTags":["test/nccl:1"],"Layers":["a/layer.tar","b/layer.tar","c/layer.tar"]}]' >"$D/manifest.json"
tar -C "$D" -cf "$work/docker-save.tar" .

# OCI layout: gzip layers, index.json -> image index -> manifest
O=$work/oci
mkdir -p "$O/blobs/sha256"
put() { local d; d=$(sha256sum "$1" | cut -d' ' -f1); cp "$1" "$O/blobs/sha256/$d"; echo "sha256:$d"; }
layers_json=
for i in 1 2 3; do
  gzip -nc "$L/$i.tar" >"$L/$i.tar.gz"
  layers_json+="${layers_json:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"$(put "$L/$i.tar.gz")\"}"
done
echo "$config" >"$work/oci-config.json"
cfg_digest=$(put "$work/oci-config.json")
echo "{\"schemaVersion\":2,\"config\":{\"digest\":\"$cfg_digest\"},\"layers\":[$layers_json]}" >"$work/oci-manifest.json"
man_digest=$(put "$work/oci-manifest.json")
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$man_digest\",\"platform\":{\"architecture\":\"amd64\",\"os\":\"linux\"}}]}" >"$work/oci-index.json"
idx_digest=$(put "$work/oci-index.json")
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$idx_digest\"}]}" >"$O/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$O/oci-layout"
tar -C "$O" -czf "$work/oci.tar.gz" .

# The same layout holding two images: the report says which one was checked.
M=$work/oci-multi
cp -r "$O" "$M"
echo "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"$idx_digest\",\"annotations\":{\"org.opencontainers.image.ref.name\":\"train:1\"}},{\"digest\":\"$idx_digest\",\"annotations\":{\"org.opencontainers.image.ref.name\":\"train:2\"}}]}" >"$M/index.json"
tar -C "$M" -czf "$work/oci-multi.tar.gz" .
run_vi oci-multi 0 --json "$work/oci-multi.json" "$work/oci-multi.tar.gz"
grep -q "holds 2 manifests; checking the first (train:1)" "$work/oci-multi.err" || fail "oci-multi: $(cat "$work/oci-multi.err")"
jq_is "$work/oci-multi.json" '.ranks[0].host' "image $work/oci-multi.tar.gz (train:1)"

for kind in docker-save.tar oci.tar.gz; do
  name=${kind%%.*}
  run_vi "$name" 0 --json "$work/$name.json" --rank-report "$work/$name-record.json" \
    --keep "$work/$name-tree" "$work/$kind"
  J=$work/$name.json
  jq_is "$J" '.ranks[0].nccl.version' 2.28.9
  jq_is "$J" '.ranks[0].nccl.cuda_build' 12.9
  jq_is "$J" '.ranks[0].nccl.origin' LD_LIBRARY_PATH
  jq_is "$J" '.ranks[0].nccl.path' /opt/nccl/lib/libnccl.so.2.28.9
  jq_is "$J" '.ranks[0].nccl_env.NCCL_PROTO' Simple
  # Whiteouts: 2.21.5 is gone, 2.27.3 from layer 2 is the system NCCL, /opt/old was emptied.
  jq_is "$J" '.ranks[0].system_nccl.version' 2.28.9
  jq_is "$J" '[.ranks[0].nccl_candidates[] | .version] | sort | join(",")' 2.27.3,2.28.9
  T=$work/$name-tree/rootfs
  [ ! -e "$T/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5" ] || fail "$name: whiteout of libnccl.so.2.21.5 not applied"
  [ "$(readlink "$T/usr/lib/x86_64-linux-gnu/libnccl.so.2")" = libnccl.so.2.27.3 ] || fail "$name: layer 2's libnccl.so.2 link missing"
  [ ! -e "$T/opt/old/libnccl.so.2" ] || fail "$name: opaque whiteout did not empty /opt/old"
  [ -f "$T/opt/old/README" ] || fail "$name: layer 3's /opt/old/README missing"
  ! find "$T" -name '.wh.*' | grep -q . || fail "$name: whiteout files left in the tree"
  jq_is "$work/$name-record.json" '.nccl.version' 2.28.9
done

# --- a directory against the host's record: the image's NCCL differs from the node's ----------
"$probe" --quiet --rank-report "$work/host.json" || true
host_nccl=$(jq -r .nccl.version "$work/host.json")
[ "$host_nccl" != 2.21.5 ] || fail "the host's NCCL is 2.21.5; the comparison below needs another version"
R=$work/dir-image/usr/lib/x86_64-linux-gnu
mkdir -p "$R"; cp "$(nccl_real nccl-2.21.5)" "$R/"; ln -s libnccl.so.2.21.5 "$R/libnccl.so.2"
run_vi against 1 --against-record "$work/host.json" --json "$work/against.json" "$work/dir-image"
J=$work/against.json
jq_is "$J" .verdict reject
jq_is "$J" .nranks 2
jq_is "$J" '[.findings[] | select(.severity == "error") | .code] | join(",")' nccl-version-mismatch
jq_is "$J" '[.ranks[] | .nccl.version] | sort | join(",")' "$(printf '%s\n' 2.21.5 "$host_nccl" | sort | paste -sd,)"
# Named as the image (the path given), not as "rank 1 on <this host>"; its record says so.
jq_is "$J" '[.findings[] | select(.code == "nccl-version-mismatch") | .message | contains("image '"$work"'/dir-image loads NCCL 2.21.5")] | all' true
jq_is "$J" '[.ranks[] | select(.mode == "static") | .container] | join(",")' true
# A host record with PyTorch against an image without it: torch-missing.
jq '.torch = {"status":"ok","version":"2.5.1+cu124","cuda":"12.4","build":"cuda"}' "$work/host.json" >"$work/host-torch.json"
run_vi against-torch 1 --against-record "$work/host-torch.json" --json "$work/against-torch.json" "$work/dir-image"
jq_is "$work/against-torch.json" '[.findings[] | select(.code == "torch-missing") | .message] | join(",")' \
  "image $work/dir-image has no PyTorch, rank 0 on $(jq -r .host "$work/host.json") runs PyTorch 2.5.1+cu124"
# The same image against a record of its own kind passes.
run_vi self 0 --against-record "$work/docker-save-record.json" "$work/docker-save.tar"

# --- baseline ------------------------------------------------------------------------------------
echo '{"schema":"denpex.baseline.v1","nccl":{"version":"2.27.3"}}' >"$work/baseline.json"
run_vi baseline 1 --baseline "$work/baseline.json" --json "$work/baseline-report.json" "$work/docker-save.tar"
jq_is "$work/baseline-report.json" '[.findings[] | select(.severity == "error") | .code] | join(",")' nccl-version-mismatch

# --- could not judge: exit 2 with one line naming the problem -----------------------------------
run_vi engine 2 nvcr.io/nvidia/pytorch:24.05-py3
grep -q "no container engine is reachable" "$work/engine.err" || fail "engine: $(cat "$work/engine.err")"
echo "not an image" >"$work/plain.txt"; tar -C "$work" -cf "$work/plain.tar" plain.txt
run_vi not-image 2 "$work/plain.tar"
grep -q "not an image archive" "$work/not-image.err" || fail "not-image: $(cat "$work/not-image.err")"
run_vi no-record 2 --against-record "$work/nope.json" "$work/dir-image"
grep -q -- "--against-record $work/nope.json" "$work/no-record.err" || fail "no-record: $(cat "$work/no-record.err")"
run_vi bad-option 2 --frobnicate "$work/dir-image"

# A layer writing through a symlink of a lower layer (to the host's /tmp) is refused.
S=$work/symlink
mkdir -p "$S/1" "$S/2/escape" "$S/img/a" "$S/img/b"
ln -s "$work/outside" "$S/1/escape"
echo pwned >"$S/2/escape/file"
tar -C "$S/1" -cf "$S/img/a/layer.tar" .; tar -C "$S/2" -cf "$S/img/b/layer.tar" .
echo '[{"Config":"none.json","Layers":["a/layer.tar","b/layer.tar"]}]' >"$S/img/manifest.json"
tar -C "$S/img" -cf "$work/symlink.tar" .
mkdir -p "$work/outside"
run_vi symlink 2 "$work/symlink.tar"
[ ! -e "$work/outside/file" ] || fail "symlink: a layer wrote outside the tree"
grep -q "through a symbolic link" "$work/symlink.err" || fail "symlink: $(cat "$work/symlink.err")"

leftover=$(find "$work" -maxdepth 1 -name 'validate-image.*' | head -n 1)
[ -z "$leftover" ] || fail "validate-image left its work directory $leftover"
echo PASS
