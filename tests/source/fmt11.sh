#!/bin/sh
# fmt11.sh COMPILE_COMMANDS FMT11_INCLUDE: compiles (syntax only) every C++ source of the build
# that uses fmt against fmt 11's headers instead of the system's fmt 9, with the build's own
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
checked=0 failed=0
# Three lines per C++ entry: directory, file, command (none holds a newline).
jq -r '.[] | select(.file | test("\\.cpp$")) | .directory, .file, .command' "$db" >"$tmp/list"
while IFS= read -r dir && IFS= read -r file && IFS= read -r cmd; do
  grep -q 'fmt' "$file" || continue
  # The compiler without its launcher (ccache), fmt 11 first among the system headers, no
  # object written.
  cmd=$(printf '%s\n' "$cmd" | sed -e 's|^[^ ]*ccache ||' -e 's| -o [^ ]* -c | -fsyntax-only |')
  checked=$((checked + 1))
  if ! (cd "$dir" && eval "$cmd -isystem $fmt11") >"$log" 2>&1; then
    failed=$((failed + 1))
    echo "FAIL: $file does not compile against fmt 11 ($fmt11):"
    head -20 "$log"
  fi
done <"$tmp/list"
[ "$checked" -gt 0 ] || { echo "FAIL: no C++ source using fmt found in $db"; exit 1; }
echo "fmt11.sh: $checked sources using fmt compiled against fmt 11, $failed failed"
[ "$failed" = 0 ]
