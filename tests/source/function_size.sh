#!/bin/bash
# function_size.sh COMPILE_COMMANDS SOURCE_ROOT DIR...: no function in the named directories of
# the source tree is longer than 80 lines. clang-tidy's readability-function-size with
# LineThreshold 80 (it counts the lines of the body, blank and comment lines included) runs over
# every .cpp under SOURCE_ROOT/DIR that the build compiles, and over the headers of those
# directories that the sources include. Each offender is printed once, as clang-tidy names it;
# any offender fails the test. Skips (77) where clang-tidy is missing.
set -u
db=${1:?usage: function_size.sh COMPILE_COMMANDS SOURCE_ROOT DIR...}
root=${2:?usage: function_size.sh COMPILE_COMMANDS SOURCE_ROOT DIR...}
shift 2
[ $# -gt 0 ] || { echo "usage: function_size.sh COMPILE_COMMANDS SOURCE_ROOT DIR..."; exit 2; }
tidy=
for t in clang-tidy clang-tidy-14 clang-tidy-15 clang-tidy-16; do
  command -v "$t" >/dev/null && { tidy=$t; break; }
done
[ -n "$tidy" ] || { echo "SKIP: no clang-tidy (Debian: apt-get install clang-tidy)"; exit 77; }
[ -r "$db" ] || { echo "FAIL: $db missing (the build sets CMAKE_EXPORT_COMPILE_COMMANDS)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq missing (tools/install-deps.sh installs it)"; exit 1; }
root=$(cd "$root" && pwd)
alt=$(printf '%s|' "$@" | sed 's/|$//; s/[.]/\\./g')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"
jq -r '.[].file' "$db" | grep -E "^$root/($alt)/[^ ]*\.cpp$" | sort -u >"$tmp/files"
n=$(wc -l <"$tmp/files")
[ "$n" -gt 0 ] || { echo "FAIL: no source under $* in $db"; exit 1; }
config="{Checks: '-*,readability-function-size', WarningsAsErrors: '',
  HeaderFilterRegex: '^$root/($alt)/',
  CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}"
# Two files at a time (the machine's two cores); each clang-tidy's output goes to its own file.
i=0
while IFS= read -r f; do
  i=$((i + 1))
  printf '%s\0%s\0' "$f" "$tmp/out/$i"
done <"$tmp/files" |
  xargs -0 -n2 -P2 sh -c '"$0" -p "$1" --quiet --config="$2" "$3" >"$4" 2>&1' \
    "$tidy" "$(dirname "$db")" "$config"
# Errors (a file clang-tidy cannot parse) fail the test: an unparsed file is an unchecked file.
broken=$(grep -l ': error: ' "$tmp"/out/* || true)
if [ -n "$broken" ]; then
  echo "FAIL: clang-tidy could not parse some sources:"
  for b in $broken; do grep -m5 ': error: ' "$b"; done
  exit 1
fi
# One line per offender: FILE:LINE: function 'NAME' exceeds ... (N lines including whitespace
# and comments ...).
cat "$tmp"/out/* |
  awk '/warning: function .* exceeds recommended size/ { head = $0; next }
       head != "" && /lines including whitespace and comments/ {
         match($0, /[0-9]+ lines/); n = substr($0, RSTART, RLENGTH - 6)
         sub(/: warning: function /, ": ", head); sub(/ exceeds recommended size.*/, "", head)
         print head " (" n " lines)"; head = "" }' |
  sed "s|^$root/||" | sort -u >"$tmp/offenders"
count=$(wc -l <"$tmp/offenders")
if [ "$count" -gt 0 ]; then
  echo "FAIL: $count functions under $* are longer than 80 lines:"
  sed 's/^/  /' "$tmp/offenders"
  echo "function_size.sh: $n sources checked"
  exit 1
fi
echo "function_size.sh: $n sources under $* checked with $tidy, no function longer than 80 lines"
