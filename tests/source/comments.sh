#!/usr/bin/env bash
# comments.sh SOURCE_DIR: comments say why, not history, and point nowhere outside the
# repository. Fails on
#   - this project's issue numbers (the word "issue" and a number after a space; an upstream
#     "NVIDIA/nccl issue #NNN" is a reference one can follow and passes) anywhere in a C/C++,
#     CMake, shell or man page source: a reader of the code cannot look them up, and what a
#     change fixed belongs in its commit message;
#   - the path of the shared directory beside the clone (dot-dot, slash, "shared") in a comment
#     of any of them, and in C/C++ sources and man pages at all. That directory (the contract,
#     the real logs) is not part of the repository: say "the contract". Code that reads it at run time passes the path in from CMake
#     (tests/**/CMakeLists.txt) or binds it into a root (.ci/*.sh); those code lines pass.
# Checks the tracked files (git ls-files); skips (exit 77) where the tree is not a git checkout.
set -u
src=${1:?usage: comments.sh SOURCE_DIR}
cd "$src" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: $src is not a git checkout"; exit 77; }

# Files another change is rewriting at the same time, which clean their own comments: not
# checked while they still hold what this test looks for (the test says so; when one is clean or
# gone, it says to take it off this list).
pending=(
)

kind_of() {  # prints c, shell, cmake, man or nothing
  case $1 in
    *.c | *.h | *.cpp | *.cc | *.hpp) echo c ;;
    CMakeLists.txt | */CMakeLists.txt | *.cmake) echo cmake ;;
    *.sh | *.sbatch) echo shell ;;
    *.1 | *.8) echo man ;;
    *) # An executable script without an extension (.ci/run, launch/validate-image).
      case ${1##*/} in
        *.*) ;;
        *) head -c 64 "$1" 2>/dev/null | head -n 1 | grep -qaE '^#!.*[/ ](ba)?sh' && echo shell ;;
      esac ;;
  esac
}

# check FILE KIND: prints "FILE:LINE: what" for each offending line.
check() {
  local f=$1 kind=$2 shared_code_ok=no
  case $kind:$f in
    cmake:tests/*) shared_code_ok=yes ;;
    shell:.ci/*) shared_code_ok=yes ;;
  esac
  awk -v f="$f" -v kind="$kind" -v code_ok="$shared_code_ok" -v needle="$shared" '
    {
      line = $0
      if (line ~ /[Ii]ssues? [0-9]/) print f ":" FNR ": an issue number: " line
      if (index(line, needle) == 0) next
      if (kind == "c" || kind == "man") { print f ":" FNR ": " needle ": " line; next }
      # Shell and CMake: the comment is what follows a # at the start or after a blank.
      c = match(line, /(^|[ \t])#/)
      comment = c ? substr(line, c) : ""
      code = c ? substr(line, 1, c - 1) : line
      if (index(comment, needle)) print f ":" FNR ": " needle " in a comment: " line
      else if (index(code, needle) && code_ok != "yes")
        print f ":" FNR ": " needle " outside tests/**/CMakeLists.txt and .ci/: " line
    }' "$f"
}

# Built in two pieces so that this file does not name it.
shared="../""shared"
bad=0 checked=0
while IFS= read -r f; do
  [ -f "$f" ] || continue
  kind=$(kind_of "$f")
  [ -n "$kind" ] || continue
  checked=$((checked + 1))
  out=$(check "$f" "$kind")
  is_pending=no
  for p in "${pending[@]}"; do [ "$p" = "$f" ] && is_pending=yes; done
  if [ "$is_pending" = yes ]; then
    if [ -n "$out" ]; then echo "not checked while it is rewritten elsewhere: $f"
    else echo "note: $f is clean now: take it off the pending list in $0"; fi
    continue
  fi
  if [ -n "$out" ]; then
    printf '%s\n' "$out"
    bad=1
  fi
done < <(git ls-files)
for p in "${pending[@]}"; do
  [ -e "$p" ] || echo "note: $p is gone: take it off the pending list in $0"
done
[ "$checked" -gt 0 ] || { echo "FAIL: no sources found under $src"; exit 1; }
if [ "$bad" != 0 ]; then
  echo "FAIL: say why in the comment, not which issue; name the contract, not $shared"
  exit 1
fi
echo "comments.sh: $checked files checked: no issue numbers, no $shared outside the allowed code"
