#!/usr/bin/env bash
# Fetches the real-wheel matrix (tests/real/matrix.txt) into the wheel cache, kept between runs,
# and unpacks it into the wheel trees, derived from the cache (tests/real/paths.sh):
#   $DENPEX_WHEEL_CACHE (default /var/cache/denpex-wheels)
#     dl/*.whl            the .whl files pip downloads, as PyPI serves them
#     dl/MANIFEST         each one's file name, sha256 and size when it was downloaded; a wheel
#                         whose sha256 no longer matches is downloaded again before it is unpacked
#   $DENPEX_WHEEL_TREES (default /var/tmp/denpex-wheel-trees)
#     unpacked/<wheel>/   one wheel installed alone by `pip install --no-deps --target` (its
#                         .data moved into place, its console scripts in bin/, RECORD written)
#     env/<name>/         a site-packages per matrix line, assembled from the unpacked trees by
#                         hard links (no second copy), in the line's order; env/<name>/.denpex-env
#                         lists its wheels
# Never installs into the system Python; the only network access is `pip download` of the pinned
# wheels that are not in the cache yet. A second run finds everything and downloads nothing; a
# run with the cache but no trees (a CI cache restored on a new machine) only unpacks.
# Wheels and unpacked trees the matrix no longer names are deleted (each named on stdout), so
# that a smaller matrix gives a smaller cache; environments not from the matrix are left alone.
# Concurrent callers are serialised by flock on $DENPEX_WHEEL_CACHE/.lock (shared for --check,
# exclusive otherwise); every directory is built under a .part name and renamed into place.
# After unpacking, the files tests/real/prune.txt names (libraries nothing here can load without
# a GPU, each with the reason) are deleted from the trees (the wheels stay whole).
# A cache of the older layout, with unpacked/ and env/ inside it, is moved to the trees.
#
# usage: tests/real/fetch.sh [--check]
#   --check   download nothing: exit 0 when the whole matrix is there, 3 when something is
#             missing (the test runner's "skip"), each missing part named on stderr
# Environment: DENPEX_WHEEL_CACHE, DENPEX_WHEEL_TREES, DENPEX_WHEEL_CACHE_MAX_GB (the cache's
# budget in decimal gigabytes, 10^9 bytes, of disk as `du -s --block-size=1` counts it; default 8;
# the run fails when the cache ends up larger), DENPEX_PYTHON (the interpreter pip runs under; a
# 3.11, the wheels are cp311).
# Exit: 0 done, 1 a download or unpack failed (one line on stderr says which), 2 bad usage or
# no suitable pip, 3 (--check only) incomplete, 4 the cache is larger than its budget.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/real/paths.sh
source "$HERE/paths.sh"
CACHE=$WHEEL_CACHE
TREES=$WHEEL_TREES
MATRIX=$HERE/matrix.txt
MAX_GB=${DENPEX_WHEEL_CACHE_MAX_GB:-8}
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

# WHL_OF[key]: the .whl in dl/ for each key, made once per look (a wheel's file name is
# {name}-{version}-...: neither field contains a dash).
declare -A WHL_OF=()
index_wheels() {
  local f name version rest
  WHL_OF=()
  for f in "$CACHE"/dl/*.whl; do
    [ -e "$f" ] || continue
    IFS=- read -r name version rest <<<"$(basename "$f")"
    WHL_OF[$(key_of "$name==$version")]=$f
  done
}

missing_parts() {  # prints what is not there yet, two words per part
  local r e k
  index_wheels
  for r in "${WHEELS[@]}"; do
    k=$(key_of "$r")
    [ -n "${WHL_OF[$k]:-}" ] || echo "wheel $r"
    [ -e "$TREES/unpacked/$k/.denpex-unpacked" ] || echo "unpacked $r"
  done
  for e in "${ENVS[@]}"; do
    [ "$(cat "$TREES/env/$e/.denpex-env" 2>/dev/null)" = "$(env_manifest "$e")" ] || echo "env $e"
  done
}

# One line per kind of missing part (the parts are "KIND NAME" pairs): a cache restored without
# its trees misses all 53 unpacked trees, which a list would bury.
summarise_missing() {
  local kind what n
  for kind in wheel unpacked env; do
    # shellcheck disable=SC2086  # the pairs are words
    what=$(printf '%s %s\n' $1 | awk -v k="$kind" '$1 == k { print $2 }')
    [ -n "$what" ] || continue
    n=$(wc -l <<<"$what")
    case $kind in
      wheel) printf '  %s wheels not in %s/dl: ' "$n" "$CACHE" ;;
      unpacked) printf '  %s wheels not unpacked in %s/unpacked: ' "$n" "$TREES" ;;
      env) printf '  %s environments not assembled in %s/env: ' "$n" "$TREES" ;;
    esac
    head -5 <<<"$what" | paste -sd' ' - | tr -d '\n'
    if [ "$n" -le 5 ]; then echo; else echo " and $((n - 5)) more"; fi
  done
}

mkdir -p "$CACHE" 2>/dev/null || die "cannot create the cache directory $CACHE"
exec 9>>"$CACHE/.lock" || die "cannot open $CACHE/.lock"
flock -s 9
todo=$(missing_parts)
if [ -n "$todo" ]; then
  if [ "$check_only" = 1 ]; then
    echo "fetch.sh: the wheel cache $CACHE or its trees $TREES are incomplete (run tests/real/fetch.sh):" >&2
    summarise_missing "$todo" >&2
    exit 3
  fi
fi
[ "$check_only" = 0 ] || exit 0
# Exclusive from here: the downloads, the unpacking and the pruning change the cache.
flock -u 9
flock -x 9

now() { date +%s.%N; }
# seconds A B -> B - A with one decimal
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
start=$(now)
mkdir -p "$CACHE/dl" "$TREES" || die "cannot create $CACHE/dl or $TREES"
touch "$CACHE/dl/MANIFEST"
# The older layout kept the trees inside the cache: they move (a rename on one filesystem).
for d in unpacked env scratch; do
  [ -d "$CACHE/$d" ] || continue
  if [ -e "$TREES/$d" ]; then rm -rf "${CACHE:?}/$d"; else mv "$CACHE/$d" "$TREES/$d"; fi
  echo "fetch.sh: moved $CACHE/$d (the older layout) to $TREES/$d"
done
mkdir -p "$TREES/unpacked" "$TREES/env"

# dl/MANIFEST has one line per wheel file: "name sha256 size".
manifest_sha() { awk -v f="$1" '$1 == f { s = $2 } END { print s }' "$CACHE/dl/MANIFEST"; }
manifest_drop() { sed -i "\|^$1 |d" "$CACHE/dl/MANIFEST"; }

# What the matrix no longer names goes, so that the cache shrinks with the matrix.
declare -A KEYS=()
for r in "${WHEELS[@]}"; do KEYS[$(key_of "$r")]=1; done
index_wheels
for k in "${!WHL_OF[@]}"; do
  [ -n "${KEYS[$k]:-}" ] && continue
  echo "fetch.sh: deleted $(basename "${WHL_OF[$k]}"): no line of tests/real/matrix.txt asks for it"
  manifest_drop "$(basename "${WHL_OF[$k]}")"
  rm -f "${WHL_OF[$k]}"
done
for d in "$TREES"/unpacked/*; do
  [ -d "$d" ] || continue
  case $d in *.part) rm -rf "$d"; continue ;; esac
  [ -n "${KEYS[$(basename "$d")]:-}" ] && continue
  echo "fetch.sh: deleted the unpacked tree $(basename "$d"): no line of tests/real/matrix.txt asks for it"
  rm -rf "$d"
done
index_wheels


# A wheel still to be unpacked is checked against the sha256 it had when it was downloaded: a
# damaged file is downloaded again rather than unpacked.
for r in "${WHEELS[@]}"; do
  k=$(key_of "$r")
  whl=${WHL_OF[$k]:-}
  if [ -z "$whl" ] || [ -e "$TREES/unpacked/$k/.denpex-unpacked" ]; then continue; fi
  want=$(manifest_sha "$(basename "$whl")")
  if [ -n "$want" ] && [ "$(sha256sum "$whl" | cut -d' ' -f1)" != "$want" ]; then
    echo "fetch.sh: $(basename "$whl") does not match the sha256 it was downloaded with: downloading it again"
    rm -f "$whl"
  fi
done
index_wheels

download_seconds=0
downloaded_bytes=0
need_dl=()
for r in "${WHEELS[@]}"; do
  [ -n "${WHL_OF[$(key_of "$r")]:-}" ] || need_dl+=("$r")
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
  index_wheels
  for r in "${need_dl[@]}"; do
    whl=${WHL_OF[$(key_of "$r")]:-}
    [ -n "$whl" ] || die "pip download of $r left no wheel in $CACHE/dl"
    manifest_drop "$(basename "$whl")"
    printf '%s %s %s\n' "$(basename "$whl")" "$(sha256sum "$whl" | cut -d' ' -f1)" \
      "$(stat -c %s "$whl")" >>"$CACHE/dl/MANIFEST"
  done
fi

unpacked=0
t0=$(now)
for r in "${WHEELS[@]}"; do
  key=$(key_of "$r")
  dest=$TREES/unpacked/$key
  [ -e "$dest/.denpex-unpacked" ] && continue
  whl=${WHL_OF[$key]:-}
  [ -n "$whl" ] || die "no wheel for $r in $CACHE/dl after the download"
  rm -rf "$dest.part" "$dest"
  "$PY" -m pip install --quiet --root-user-action=ignore --no-deps --no-index \
    --target "$dest.part" "$whl" >/dev/null || die "pip install --target of $whl failed"
  grep "^$(basename "$whl") " "$CACHE/dl/MANIFEST" | tail -1 >"$dest.part/.denpex-unpacked"
  mv "$dest.part" "$dest"
  unpacked=$((unpacked + 1))
done
unpack_seconds=$(seconds "$t0" "$(now)")

for e in "${ENVS[@]}"; do
  dest=$TREES/env/$e
  [ "$(cat "$dest/.denpex-env" 2>/dev/null)" = "$(env_manifest "$e")" ] && continue
  rm -rf "$dest.part"
  mkdir -p "$dest.part"
  for r in ${ENV_REQS[$e]}; do
    # -f: a file two wheels ship (nvidia/__init__.py) is the later one's, as with pip.
    cp -alf "$TREES/unpacked/$(key_of "$r")/." "$dest.part/" ||
      die "cannot link $(key_of "$r") into $dest.part (is $TREES on one filesystem?)"
  done
  rm -f "$dest.part/.denpex-unpacked"
  env_manifest "$e" >"$dest.part/.denpex-env"
  # A tree of the same name made another way (an older script's pip --target copy) is replaced;
  # a process still using it keeps its open files.
  if [ -e "$dest" ]; then
    mv "$dest" "$TREES/env/.old-$e-$$"
    rm -rf "$TREES/env/.old-$e-$$"
  fi
  mv "$dest.part" "$dest"
done

# The files tests/real/prune.txt names are deleted from the unpacked trees and from every
# environment (hard links of the same files, so both must go for the space to come back). Run on
# every fetch, so that trees made before a line was added are pruned too.
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
  b=$(prune_tree "$TREES/unpacked/$(key_of "$req")" $globs)
  pruned_bytes=$((pruned_bytes + b))
  if [ "$b" -gt 0 ]; then
    # Replaced, not written through: in a copy made with `cp -al` the old file is shared.
    rm -f "$TREES/unpacked/$(key_of "$req")/.denpex-pruned"
    printf '%s\n' $globs >"$TREES/unpacked/$(key_of "$req")/.denpex-pruned"
  fi
  for e in "${ENVS[@]}"; do
    case " ${ENV_REQS[$e]} " in *" $req "*) ;; *) continue ;; esac
    # shellcheck disable=SC2086
    prune_tree "$TREES/env/$e" $globs >/dev/null
  done
done <"$HERE/prune.txt"
[ "$pruned_bytes" = 0 ] || echo "fetch.sh: pruned $((pruned_bytes / 1000000)) MB (tests/real/prune.txt)"

# Sizes: du counts a hard-linked file once, so each total is the disk the directory really takes.
end=$(now)
bytes_of() { du -s --block-size=1 "$1" | cut -f1; }
gb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }
echo "fetch.sh: wheel trees $TREES (derived from the cache)"
for e in "${ENVS[@]}"; do
  printf '  env/%-18s %6s  (%s files)\n' "$e" "$(du -s --si "$TREES/env/$e" | cut -f1)" \
    "$(find "$TREES/env/$e" -type f | wc -l)"
done
trees_bytes=$(bytes_of "$TREES")
printf '  trees on disk %s GB = %s bytes (hard links counted once); unpacked %s wheels in %s s\n' \
  "$(gb "$trees_bytes")" "$trees_bytes" "$unpacked" "$unpack_seconds"
total_bytes=$(bytes_of "$CACHE")
total_gb=$(gb "$total_bytes")
echo "fetch.sh: wheel cache $CACHE (kept between runs)"
printf '  %s wheels, %s GB = %s bytes on disk, budget %s GB (10^9 bytes)\n' \
  "$(find "$CACHE/dl" -name '*.whl' | wc -l)" "$total_gb" "$total_bytes" "$MAX_GB"
if [ "${#need_dl[@]}" -gt 0 ]; then
  printf '  downloaded %s MB in %s s (%s MB/s)\n' "$((downloaded_bytes / 1000000))" \
    "$download_seconds" \
    "$(awk -v b="$downloaded_bytes" -v s="$download_seconds" 'BEGIN { printf "%.0f", b / 1e6 / (s + 0.001) }')"
else
  echo "  nothing downloaded: every wheel was in the cache"
fi
printf '  fetch.sh took %s s\n' "$(seconds "$start" "$end")"
others=$(ls -A "$TREES/env" | grep -vxF -f <(printf '%s\n' "${ENVS[@]}") || true)
[ -z "$others" ] || echo "  not from the matrix (left alone): $(echo $others | sed 's/^/env\//; s/ / env\//g')"
if [ "$total_bytes" -gt $((MAX_GB * 1000000000)) ]; then
  echo "fetch.sh: the cache takes $total_gb GB ($total_bytes bytes), more than DENPEX_WHEEL_CACHE_MAX_GB=$MAX_GB GB" >&2
  exit 4
fi
