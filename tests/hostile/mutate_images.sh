#!/bin/bash
# validate-image on a few hundred mutated images: valid docker-save and OCI archives (stand-in
# NCCL layers, whiteouts) changed by tests/hostile/mutate_images.py, deterministically (seeded):
# manifests and indexes of the wrong shape, paths and digests that leave the archive, symbolic
# and hard links out of it, configs whose Env sets LD_AUDIT / LD_PRELOAD / LD_LIBRARY_PATH /
# LD_DEBUG_OUTPUT to things that leave a marker, truncated and random layers, layer members
# that reach out of the tree, devices and FIFOs. Every hostile path points into a scratch tree
# that nothing has any business writing to. For each mutant:
#   - the exit status is 0, 1 or 2, within the run's --timeout (+ 5 s);
#   - exit 2 says why in exactly one line on stderr, from validate-image or denpex-probe;
#   - no marker file appears, and the scratch tree is unchanged (every file's path, size,
#     mtime, mode, link count and type, before and after);
#   - validate-image leaves no work directory behind.
#
#   mutate_images.sh VALIDATE_IMAGE PROBE STANDINS_DIR SCRATCH [--count N] [--seed S] [--jobs J]
#
# Mutants run J at a time (default 2), each worker with its own scratch tree. Exit 0 pass,
# 1 fail, 77 skipped (jq, python3 or a C compiler missing).
set -uo pipefail

vi=$(realpath "${1:?usage: mutate_images.sh VALIDATE_IMAGE PROBE STANDINS_DIR SCRATCH [--count N] [--seed S] [--jobs J]}")
probe=$(realpath "${2:?missing PROBE}")
standins=$(realpath "${3:?missing STANDINS_DIR}")
scratch=${4:?missing SCRATCH}
shift 4
count=340 seed=20240611 jobs=2 timeout_s=15
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
for t in jq python3 cc; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not installed (tools/install-deps.sh)"; exit 77; }
done
here=$(cd "$(dirname "$0")" && pwd)
W=$scratch/mutate_images
rm -rf "$W"; mkdir -p "$W"; W=$(realpath "$W")
t_start=$(date +%s)

# --- what would show that something from an image ran or reached the host ------------------------
# A library that leaves a marker when ld.so loads it as an audit library, a preload or a
# dependency. The markers are written into the scratch tree of the worker whose run loaded it.
H=$W/hostlib
mkdir -p "$H/llp"
M=$W/markers   # every marker lands here; a run leaving one fails
mkdir -p "$M"
cat >"$H/marker.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
static void mark(const char *path) {
  int fd = open(path, O_CREAT | O_WRONLY, 0644);
  if (fd >= 0) close(fd);
}
unsigned int la_version(unsigned int v) { mark(MARKER_DIR "/audit-loaded"); return v; }
__attribute__((constructor)) static void ctor(void) { mark(MARKER_DIR "/" MARKER_NAME); }
C
cc -shared -fPIC -o "$H/libmarker-audit.so" -DMARKER_DIR="\"$M\"" -DMARKER_NAME='"library-loaded"' "$H/marker.c" ||
  { echo "FAIL: could not build the marker library"; exit 1; }
# Shell start-up files an image could name (BASH_ENV, ENV): sourcing one leaves a marker.
printf 'touch "%s/shell-startup-sourced"\n' "$M" >"$H/startup.sh"
# A hostile LD_LIBRARY_PATH: a library the probe itself needs (one without symbol versions), as
# a filter of the real one (so the probe still runs) whose constructor leaves a marker.
while read -r soname real; do
  [ -n "$real" ] && [ -f "$real" ] || continue
  ! objdump -p "$real" 2>/dev/null | grep -q '^Version definitions:' || continue
  cc -shared -fPIC -o "$H/llp/$soname" -Wl,-soname,"$soname" -Wl,--filter="$real" \
    -DMARKER_DIR="\"$M\"" -DMARKER_NAME='"llp-loaded"' "$H/marker.c" 2>/dev/null && break
done < <(ldd "$probe" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
         grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|ld-linux|libdl|libpthread|librt)\.')
llp_lib=$(ls "$H/llp" | head -n 1)
if [ -n "$llp_lib" ]; then
  # The filter must really be picked up and keep the probe working, or this case proves nothing.
  LD_LIBRARY_PATH=$H/llp "$probe" --version >/dev/null 2>&1 && [ -e "$M/llp-loaded" ] ||
    echo "note: the LD_LIBRARY_PATH filter ($llp_lib) is not picked up; that case checks less"
  rm -f "$M"/*
else
  echo "note: the probe needs no unversioned library to shadow; the LD_LIBRARY_PATH case checks less"
fi

# --- one scratch tree per worker -------------------------------------------------------------------
mk_scratch() {
  local s=$1
  mkdir -p "$s/markers" "$s/dir"
  echo victim >"$s/victim.txt"; chmod 444 "$s/victim.txt"
  echo other >"$s/dir/file"
  cp "$L1" "$s/host-layer.tar"
  printf '{"config":{"Env":["PATH=/bin","LD_AUDIT=%s","LD_DEBUG=all","LD_DEBUG_OUTPUT=%s/markers/lddebug"]}}\n' \
    "$H/libmarker-audit.so" "$s" >"$s/host-config.json"
  printf '[{"Config":"%s/host-config.json","Layers":["%s/host-layer.tar"]}]\n' "$s" "$s" >"$s/fake-manifest.json"
  printf '{"schemaVersion":2,"manifests":[{"digest":"sha256:%064d"}]}\n' 0 >"$s/fake-index.json"
}
snapshot() { find "$1" -printf '%p %s %T@ %m %n %y %l\n' | LC_ALL=C sort; }

# A valid layer on the host, which hostile manifests name by absolute and ../ paths.
L=$W/layer; mkdir -p "$L/usr/lib/x86_64-linux-gnu"
cp -L "$standins/nccl-2.21.5/libnccl.so.2" "$L/usr/lib/x86_64-linux-gnu/libnccl.so.2"
tar -C "$L" -cf "$W/host-layer.tar" .; L1=$W/host-layer.tar

scratches=()
for ((k = 0; k < jobs; k++)); do
  mk_scratch "$W/scratch-$k"; mkdir -p "$W/tmp-$k"
  snapshot "$W/scratch-$k" >"$W/scratch-$k.before"
  scratches+=("$W/scratch-$k")
done

t0=$(date +%s)
python3 "$here/mutate_images.py" "$standins" "$W/mutants" "$count" "$seed" "$H" "${scratches[@]}" ||
  { echo "FAIL: mutate_images.py"; exit 1; }
echo "generated $count mutants (seed $seed) in $(($(date +%s) - t0)) s"

# check_one N KIND WORKER ARCHIVE: runs validate-image on it; prints "ok ..." or "FAIL ...".
check_one() {
  local n=$1 kind=$2 k=$3 a=$4 s=$W/scratch-$k rc=0 t0 t1 problems=()
  local out=$W/out/$n
  t0=$(date +%s%N)
  TMPDIR=$W/tmp-$k \
    timeout -k 5 $((timeout_s + 10)) "$vi" --probe "$probe" -q --timeout "$timeout_s" "$a" \
    >"$out.out" 2>"$out.err" </dev/null || rc=$?
  t1=$(date +%s%N)
  local ms=$(((t1 - t0) / 1000000))
  case $rc in 0|1|2) ;; *) problems+=("exit $rc") ;; esac
  [ "$ms" -le $(((timeout_s + 5) * 1000)) ] || problems+=("took $ms ms with --timeout $timeout_s")
  if [ "$rc" = 2 ]; then
    local lines; lines=$(wc -l <"$out.err")
    [ "$lines" = 1 ] || problems+=("exit 2 with $lines lines on stderr")
    head -n 1 "$out.err" | grep -qE '^(validate-image: |denpex-probe: )' ||
      problems+=("exit 2, stderr does not start with validate-image: or denpex-probe:")
  fi
  local markers; markers=$(ls -A "$s/markers" "$M" | grep -v -e '^$' -e ':$')
  [ -z "$markers" ] || problems+=("marker(s) $(echo $markers)")
  snapshot "$s" >"$out.after"
  cmp -s "$W/scratch-$k.before" "$out.after" ||
    problems+=("scratch tree changed: $(diff "$W/scratch-$k.before" "$out.after" | grep '^[<>]' | head -n 3 | tr '\n' ';')")
  [ -z "$(ls -A "$W/tmp-$k")" ] || problems+=("left $(ls -A "$W/tmp-$k" | head -n 1) in TMPDIR")
  if [ "${#problems[@]}" -eq 0 ]; then
    echo "ok $n $kind exit $rc ${ms}ms"
    rm -f "$out.out" "$out.err" "$out.after"
  else
    echo "FAIL $n $kind exit $rc ${ms}ms: $(IFS='|'; echo "${problems[*]}") :: $(head -c 300 "$out.err" | tr '\n' ' ')"
    # Put the worker's scratch tree back for the next mutants.
    rm -rf "$s" "$W/tmp-$k"; mkdir -p "$W/tmp-$k"; rm -f "$M"/*
    mk_scratch "$s"; snapshot "$s" >"$W/scratch-$k.before"
  fi
}
mkdir -p "$W/out"

# Worker k takes the mutants made for its scratch tree, in order.
t0=$(date +%s)
for ((k = 0; k < jobs; k++)); do
  (
    while read -r n kind worker path; do
      [ "$worker" = "$k" ] || continue
      check_one "$n" "$kind" "$worker" "$path"
    done <"$W/mutants/list" >"$W/results-$k"
  ) &
done
wait
secs=$(($(date +%s) - t0))
cat "$W"/results-* | sort >"$W/results"
fails=$(grep -c '^FAIL' "$W/results")
ran=$(wc -l <"$W/results")
for c in 0 1 2; do echo "exit $c: $(grep -c " exit $c " "$W/results")"; done
awk '{ k[$3] = k[$3] " " $5 } END { for (x in k) print "  " x ":" k[x] }' "$W/results" | sort | head -n 40 | cut -c1-160
grep '^FAIL' "$W/results" | head -n 40
echo "$ran mutants in $secs s ($(($(date +%s) - t_start)) s in all), $fails failed"
[ "$ran" = "$count" ] || { echo "FAIL: $ran results for $count mutants"; exit 1; }
[ "$fails" = 0 ] || exit 1
echo PASS
