#!/bin/sh
# fmt11.sh COMPILE_COMMANDS FMT11_INCLUDE: compiles (syntax only) every C++ source of the build
# that uses what fmt 11 changed (below) against fmt 11's headers instead of the system's fmt 9, with the build's own
# flags (-Werror included when the build has it). fmt 11 moved fmt::join to <fmt/ranges.h>;
# fmt 9 still declares it in <fmt/format.h>, so a file that forgets the include builds here and
# fails for users on fmt 11. tools/install-deps.sh puts the headers in place; without them this
# test skips (exit 77).
set -u
db=${1:?usage: fmt11.sh COMPILE_COMMANDS FMT11_INCLUDE} fmt11=${2:?usage: fmt11.sh COMPILE_COMMANDS FMT11_INCLUDE}
if [ ! -r "$fmt11/fmt/ranges.h" ]; then
  echo "SKIP: no fmt 11 headers at $fmt11 (tools/install-deps.sh fetches them from PyPI)"
  exit 77
fi
grep -q 'define FMT_VERSION 11' "$fmt11/fmt/base.h" 2>/dev/null ||
  { echo "FAIL: $fmt11 holds no fmt 11 (FMT_VERSION in fmt/base.h)"; exit 1; }
[ -r "$db" ] || { echo "FAIL: $db missing (the build sets CMAKE_EXPORT_COMPILE_COMMANDS)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq missing (tools/install-deps.sh installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
# Three lines per C++ entry: directory, file, command (none holds a newline). A file compiled
# into several targets is checked once.
jq -r '[.[] | select(.file | test("\\.cpp$"))] | unique_by(.file) | .[] | .directory, .file, .command' \
  "$db" >"$tmp/list"
mkdir "$tmp/jobs" "$tmp/fail"
n=0
# Only the sources where fmt 11 differs from fmt 9 can break: those that use (themselves or in a
# project header they include) fmt::join, the ranges, chrono or ostream headers, fmt::runtime, or
# a formatter specialization (fmt 11 calls format() const). The others would cost the compiler's
# front end for nothing.
risky='fmt::join|fmt/ranges\.h|fmt/chrono\.h|fmt/ostream\.h|fmt::runtime|formatter<'
uses_risky() {  # uses_risky FILE: FILE, or a header it includes by a path that exists, matches
  grep -qE "$risky" "$1" && return 0
  sed -n 's/^#include "\(.*\)"/\1/p' "$1" | while IFS= read -r inc; do
    for h in "$(dirname "$1")/$inc" "$root/$inc"; do
      [ -f "$h" ] && grep -qE "$risky" "$h" && { echo yes; break; }
    done
  done | grep -q yes
}
root=$(cd "$(dirname "$0")/../.." && pwd)
skipped=0
while IFS= read -r dir && IFS= read -r file && IFS= read -r cmd; do
  grep -q 'fmt' "$file" || continue
  uses_risky "$file" || { skipped=$((skipped + 1)); continue; }
  # The compiler without its launcher (ccache), fmt 11 first among the system headers, no
  # object written.
  cmd=$(printf '%s\n' "$cmd" | sed -e 's|^[^ ]*ccache ||' -e 's| -o [^ ]* -c | -fsyntax-only |')
  n=$((n + 1))
  printf 'cd %s && %s -isystem %s >%s 2>&1 || { echo "FAIL: %s does not compile against fmt 11 (%s):"; head -20 %s; } >%s\n' \
    "'$dir'" "$cmd" "'$fmt11'" "$tmp/jobs/$n.log" "$file" "$fmt11" "$tmp/jobs/$n.log" "$tmp/fail/$n" \
    >"$tmp/jobs/$n.sh"
done <"$tmp/list"
checked=$n
# Each source alone, on every core: the check is the compiler's front end, a few seconds a file.
ls "$tmp/jobs" | grep '\.sh$' | sed "s|^|$tmp/jobs/|" | xargs -r -n1 -P "$(nproc)" sh
failed=0
for f in "$tmp/fail"/*; do
  [ -e "$f" ] || continue
  [ -s "$f" ] || { rm -f "$f"; continue; }
  cat "$f"
  failed=$((failed + 1))
done
[ "$checked" -gt 0 ] || { echo "FAIL: no C++ source using fmt found in $db"; exit 1; }
echo "fmt11.sh: $checked sources using what fmt 11 changed compiled against fmt 11, $failed failed ($skipped other sources using fmt left out)"
[ "$failed" = 0 ]
