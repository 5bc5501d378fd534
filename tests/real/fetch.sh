#!/usr/bin/env bash
# Fetches the real-wheel matrix (tests/real/matrix.txt) into the wheel cache, kept between runs:
#   $DENPEX_WHEEL_CACHE (default /var/cache/denpex-wheels)
#     dl/                 the .whl files pip downloads; each is removed once it is unpacked
#                         (dl/MANIFEST keeps its name, sha256 and size), so a wheel is stored
#                         once, not twice
#     unpacked/<wheel>/   one wheel installed alone by `pip install --no-deps --target` (its
#                         .data moved into place, its console scripts in bin/, RECORD written)
#     env/<name>/         a site-packages per matrix line, assembled from the unpacked trees by
#                         hard links (no second copy), in the line's order; env/<name>/.denpex-env
#                         lists its wheels
# Never installs into the system Python; the only network access is `pip download` of the pinned
# wheels that are not there yet. A second run finds everything and downloads nothing.
# Concurrent callers are serialised by flock on $CACHE/.lock (shared for --check, exclusive
# otherwise); every directory is built under a .part name and renamed into place.
# After unpacking, the files tests/real/prune.txt names (libraries nothing here can load without
# a GPU, each with the reason) are deleted, to keep the cache within its budget.
#
# usage: tests/real/fetch.sh [--check]
#   --check   download nothing: exit 0 when the whole matrix is there, 3 when something is
#             missing (the test runner's "skip"), each missing part named on stderr
# Environment: DENPEX_WHEEL_CACHE, DENPEX_WHEEL_CACHE_MAX_GB (the budget in decimal gigabytes,
# 10^9 bytes, of disk as `du -s --block-size=1` counts it, hard links once; default 9; the run
# fails when the cache ends up larger), DENPEX_PYTHON (the interpreter pip runs under; a 3.11, the
# wheels are cp311).
# Exit: 0 done, 1 a download or unpack failed (one line on stderr says which), 2 bad usage or
# no suitable pip, 3 (--check only) incomplete, 4 the cache is larger than its budget.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${DENPEX_WHEEL_CACHE:-/var/cache/denpex-wheels}
MATRIX=$HERE/matrix.txt
MAX_GB=${DENPEX_WHEEL_CACHE_MAX_GB:-9}
check_only=0
case ${1:-} in
  "") ;;
  --check) check_only=1 ;;
  *) echo "fetch.sh: unknown argument '$1' (usage: fetch.sh [--check])" >&2; exit 2 ;;
esac

die() { echo "fetch.sh: $*" >&2; exit 1; }

# shellcheck source=tests/real/python.sh
source "$HERE/python.sh"
PY=$(real_python) || { echo "fetch.sh: $PY" >&2; exit 2; }

# name==version -> the key of its unpacked tree: PEP 503 name (lower case, runs of -_. as _).
key_of() {
  local name=${1%%==*} version=${1#*==}
  name=$(printf '%s' "$name" | tr 'A-Z' 'a-z' | sed 's/[-_.]\{1,\}/_/g')
  printf '%s-%s' "$name" "$version"
}

# The matrix: ENVS (names, in file order), ENV_REQS[name] (the line's requirements), WHEELS (every
# requirement once).
ENVS=()
declare -A ENV_REQS=()
declare -A SEEN=()
WHEELS=()
while IFS= read -r line; do
  line=${line%%#*}
  [ -n "${line// /}" ] || continue
  name=${line%%:*}
  name=${name// /}
  reqs=${line#*:}
  [ "$name" != "$line" ] || die "$MATRIX: '$line' is not '<name>: <requirement>...'"
  ENVS+=("$name")
  ENV_REQS[$name]=$reqs
  for r in $reqs; do
    case $r in *==*) ;; *) die "$MATRIX: '$r' (in $name) is not pinned with ==" ;; esac
    [ -n "${SEEN[$r]:-}" ] && continue
    SEEN[$r]=1
    WHEELS+=("$r")
  done
done <"$MATRIX"

env_manifest() {  # the .denpex-env an environment must have: its keys, in order
  local r
  for r in ${ENV_REQS[$1]}; do key_of "$r"; echo; done
}

missing_parts() {  # prints what is not there yet, one per line
  local r e
  for r in "${WHEELS[@]}"; do
    [ -e "$CACHE/unpacked/$(key_of "$r")/.denpex-unpacked" ] || echo "wheel $r"
  done
  for e in "${ENVS[@]}"; do
    [ "$(cat "$CACHE/env/$e/.denpex-env" 2>/dev/null)" = "$(env_manifest "$e")" ] || echo "env $e"
  done
}

mkdir -p "$CACHE" 2>/dev/null || die "cannot create the cache directory $CACHE"
exec 9>>"$CACHE/.lock" || die "cannot open $CACHE/.lock"
flock -s 9
todo=$(missing_parts)
if [ -n "$todo" ]; then
  if [ "$check_only" = 1 ]; then
    echo "fetch.sh: the wheel cache $CACHE is incomplete (run tests/real/fetch.sh):" >&2
    printf '  %s\n' $todo | paste -d' ' - - >&2
    exit 3
  fi
fi
[ "$check_only" = 0 ] || exit 0
# Exclusive from here: the downloads, the unpacking and the pruning change the cache.
flock -u 9
flock -x 9
todo=$(missing_parts)  # another caller may have done it meanwhile

now() { date +%s.%N; }
# seconds A B -> B - A with one decimal
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
start=$(now)
mkdir -p "$CACHE/dl" "$CACHE/unpacked" "$CACHE/env"
download_seconds=0
downloaded_bytes=0

# The .whl in dl/ for name==version, "" when there is none.
wheel_file() {
  local want f name version rest
  want=$(key_of "$1")
  for f in "$CACHE"/dl/*.whl; do
    [ -e "$f" ] || continue
    # A wheel's file name is {name}-{version}-...: neither field contains a dash.
    IFS=- read -r name version rest <<<"$(basename "$f")"
    [ "$(key_of "$name==$version")" = "$want" ] && { echo "$f"; return; }
  done
}

need_dl=()
for r in "${WHEELS[@]}"; do
  [ -e "$CACHE/unpacked/$(key_of "$r")/.denpex-unpacked" ] && continue
  [ -n "$(wheel_file "$r")" ] || need_dl+=("$r")
done
if [ "${#need_dl[@]}" -gt 0 ]; then
  echo "fetch.sh: downloading ${#need_dl[@]} wheels into $CACHE/dl"
  t0=$(now)
  before=$(du -sb "$CACHE/dl" | cut -f1)
  # One pip call per batch in which each project appears once (pip resolves one version of a
  # project per call). --no-deps: the matrix pins every wheel; --no-cache-dir: this cache is the
  # cache (pip's own would hold a second copy of every wheel).
  rest=("${need_dl[@]}")
  while [ "${#rest[@]}" -gt 0 ]; do
    batch=() later=()
    declare -A in_batch=()
    for r in "${rest[@]}"; do
      k=$(key_of "$r")
      if [ -n "${in_batch[${k%-*}]:-}" ]; then later+=("$r"); else in_batch[${k%-*}]=1; batch+=("$r"); fi
    done
    unset in_batch
    "$PY" -m pip download --quiet --no-deps --no-cache-dir --only-binary=:all: -d "$CACHE/dl" \
      "${batch[@]}" || die "pip download of ${batch[*]} failed (is PyPI reachable?)"
    rest=("${later[@]}")
  done
  download_seconds=$(seconds "$t0" "$(now)")
  downloaded_bytes=$(( $(du -sb "$CACHE/dl" | cut -f1) - before ))
fi

for r in "${WHEELS[@]}"; do
  key=$(key_of "$r")
  dest=$CACHE/unpacked/$key
  [ -e "$dest/.denpex-unpacked" ] && continue
  whl=$(wheel_file "$r")
  [ -n "$whl" ] || die "no wheel for $r in $CACHE/dl after the download"
  rm -rf "$dest.part" "$dest"
  "$PY" -m pip install --quiet --root-user-action=ignore --no-deps --no-index \
    --target "$dest.part" "$whl" >/dev/null || die "pip install --target of $whl failed"
  printf '%s %s %s\n' "$(basename "$whl")" "$(sha256sum "$whl" | cut -d' ' -f1)" \
    "$(stat -c %s "$whl")" >"$dest.part/.denpex-unpacked"
  mv "$dest.part" "$dest"
  cat "$dest/.denpex-unpacked" >>"$CACHE/dl/MANIFEST"
  rm -f "$whl"
done

for e in "${ENVS[@]}"; do
  dest=$CACHE/env/$e
  [ "$(cat "$dest/.denpex-env" 2>/dev/null)" = "$(env_manifest "$e")" ] && continue
  rm -rf "$dest.part"
  mkdir -p "$dest.part"
  for r in ${ENV_REQS[$e]}; do
    # -f: a file two wheels ship (nvidia/__init__.py) is the later one's, as with pip.
    cp -alf "$CACHE/unpacked/$(key_of "$r")/." "$dest.part/" ||
      die "cannot link $(key_of "$r") into $dest.part (is $CACHE on one filesystem?)"
  done
  rm -f "$dest.part/.denpex-unpacked"
  env_manifest "$e" >"$dest.part/.denpex-env"
  # A tree of the same name made another way (an older script's pip --target copy) is replaced;
  # a process still using it keeps its open files.
  if [ -e "$dest" ]; then
    mv "$dest" "$CACHE/env/.old-$e-$$"
    rm -rf "$CACHE/env/.old-$e-$$"
  fi
  mv "$dest.part" "$dest"
done

# The files tests/real/prune.txt names are deleted from the unpacked trees and from every
# environment (hard links of the same files, so both must go for the space to come back). Run on
# every fetch, so that a cache filled before a line was added is pruned too.
prune_tree() {  # prune_tree DIR GLOB...: deletes the files and directories the globs match
  local dir=$1 g f bytes=0    # under DIR; prints the bytes they held
  shift
  for g in "$@"; do
    for f in "$dir"/$g; do
      [ -e "$f" ] || continue
      bytes=$((bytes + $(du -sb "$f" | cut -f1)))
      rm -rf "$f"
    done
  done
  echo "$bytes"
}
pruned_bytes=0
while IFS= read -r line; do
  line=${line%%#*}
  read -r req globs <<<"$line"
  [ -n "${req:-}" ] || continue
  [ -n "${SEEN[$req]:-}" ] || die "$HERE/prune.txt: $req is not a requirement of the matrix"
  [ -n "${globs:-}" ] || die "$HERE/prune.txt: $req names no file"
  # shellcheck disable=SC2086  # $globs is a word list of patterns, expanded in prune_tree
  b=$(prune_tree "$CACHE/unpacked/$(key_of "$req")" $globs)
  pruned_bytes=$((pruned_bytes + b))
  if [ "$b" -gt 0 ]; then
    # Replaced, not written through: in a copy made with `cp -al` the old file is shared.
    rm -f "$CACHE/unpacked/$(key_of "$req")/.denpex-pruned"
    printf '%s\n' $globs >"$CACHE/unpacked/$(key_of "$req")/.denpex-pruned"
  fi
  for e in "${ENVS[@]}"; do
    case " ${ENV_REQS[$e]} " in *" $req "*) ;; *) continue ;; esac
    # shellcheck disable=SC2086
    prune_tree "$CACHE/env/$e" $globs >/dev/null
  done
done <"$HERE/prune.txt"
[ "$pruned_bytes" = 0 ] || echo "fetch.sh: pruned $((pruned_bytes / 1000000)) MB (tests/real/prune.txt)"

# Sizes: du counts a hard-linked file once, so the total is the disk the cache really takes.
end=$(now)
echo "fetch.sh: wheel cache $CACHE"
for e in "${ENVS[@]}"; do
  printf '  env/%-18s %6s  (%s files)\n' "$e" "$(du -s --si "$CACHE/env/$e" | cut -f1)" \
    "$(find "$CACHE/env/$e" -type f | wc -l)"
done
total_bytes=$(du -s --block-size=1 "$CACHE" | cut -f1)
total_gb=$(awk -v b="$total_bytes" 'BEGIN { printf "%.2f", b / 1e9 }')
printf '  total on disk %s GB = %s bytes (hard links counted once), budget %s GB (10^9 bytes)\n' \
  "$total_gb" "$total_bytes" "$MAX_GB"
if [ "${#need_dl[@]}" -gt 0 ]; then
  printf '  downloaded %s MB in %s s (%s MB/s)\n' "$((downloaded_bytes / 1000000))" \
    "$download_seconds" \
    "$(awk -v b="$downloaded_bytes" -v s="$download_seconds" 'BEGIN { printf "%.0f", b / 1e6 / (s + 0.001) }')"
else
  echo "  nothing downloaded: every wheel was in the cache"
fi
printf '  fetch.sh took %s s\n' "$(seconds "$start" "$end")"
others=$(ls -A "$CACHE/env" | grep -vxF -f <(printf '%s\n' "${ENVS[@]}") || true)
[ -z "$others" ] || echo "  not from the matrix (left alone): $(echo $others | sed 's/^/env\//; s/ / env\//g')"
if [ "$total_bytes" -gt $((MAX_GB * 1000000000)) ]; then
  echo "fetch.sh: the cache takes $total_gb GB ($total_bytes bytes), more than DENPEX_WHEEL_CACHE_MAX_GB=$MAX_GB GB" >&2
  exit 4
fi
