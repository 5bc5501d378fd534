#!/bin/sh
# finding_codes.sh SOURCE_DIR: fails when a C/C++ source file names a finding code by a string
# literal: a finding's code is the FindingCode type (compare/finding_code.h), and the table
# (compare/finding_codes.cpp) is the one place that spells a code. It also fails on a literal
# that looks like a code but is none (a typo). The table's codes are read from
# docs/finding-codes.md, which compare.finding_codes keeps equal to the table.
#
# A code is recognised two ways: a quoted literal of a code family ("nccl-...", "cuda-...",
# the first words of the table's codes), and any quoted hyphenated literal where a code goes
# (`code = "..."`, `code == "..."`, `"...", Severity::`). Emitters name codes by FindingCode,
# so any such literal is a mistake: a known code spelled out, or an unknown one. tests/ is not
# scanned: tests name codes to check what was emitted.
set -eu
src=${1:?usage: finding_codes.sh SOURCE_DIR}
docs=$src/docs/finding-codes.md
[ -r "$docs" ] || { echo "finding_codes.sh: $docs is missing" >&2; exit 1; }
known=$(sed -n 's/^| `\([a-z-]*\)` |.*/\1/p' "$docs" | sort -u)
[ -n "$known" ] || { echo "finding_codes.sh: no codes found in $docs" >&2; exit 1; }
families=$(printf '%s\n' "$known" | sed 's/-.*//' | sort -u | paste -sd'|' -)
# Quoted literals of a code family that are not finding codes: the origins of an NCCL
# (nccl.origin, nccl_candidates[].origin: probe/record.h), which share the torch-/cuda- prefixes,
# and the signal library's scopes (evidence/signals.txt: which part of an NCCL line an entry reads).
not_codes='torch-static torch-wheel torch-rpath torch-runpath cuda-toolkit nccl-info nccl-warn'

files=$(cd "$src" && find . -path ./tests -prune -o -path './build*' -prune -o -path ./.git -prune \
  -o \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) -type f -print | sed 's|^\./||' |
  grep -v '^compare/finding_codes\.cpp$' | sort)
[ -n "$files" ] || { echo "finding_codes.sh: no sources under $src" >&2; exit 1; }

hits=$(cd "$src" && {
  printf '%s\n' "$files" | xargs grep -noE "\"($families)-[a-z-]+\"" || true
  printf '%s\n' "$files" | xargs grep -noE 'code *[!=]?= *"[a-z]+(-[a-z]+)+"' || true
  printf '%s\n' "$files" | xargs grep -noE '"[a-z]+(-[a-z]+)+" *, *Severity::' || true
} | awk -F: '{ c = $0; sub(/^[^"]*"/, "", c); sub(/".*/, "", c); if (!seen[$1 ":" $2 ":" c]++) print }')
bad=0
checked=0
nl='
'
IFS=$nl
for hit in $hits; do
  code=${hit#*\"}
  code=${code%%\"*}
  checked=$((checked + 1))
  case " $not_codes " in *" $code "*) continue ;; esac
  loc=$(printf %s "$hit" | cut -d: -f1,2)
  if ! printf '%s\n' "$known" | grep -qxF "$code"; then
    echo "$loc: emits \"$code\", which is not in compare/finding_codes.cpp's table" \
      "(add a FindingCode and a row there, then regenerate docs/finding-codes.md)"
  else
    echo "$loc: spells the finding code \"$code\" as a string: name it by its FindingCode" \
      "(compare/finding_code.h; code_name() gives its text)"
  fi
  bad=1
done
unset IFS
[ "$bad" = 0 ] || exit 1
echo "finding_codes.sh: no finding-code literal in $(printf '%s\n' "$files" | wc -l) files outside the table"
