#!/bin/sh
# man_codes.sh SOURCE_DIR: every finding code of the table (docs/finding-codes.md, which
# compare.finding_codes keeps equal to compare/finding_codes.cpp) is named in the man page
# (launch/denpex-probe.1), so that `man denpex-probe` lists what the probe can say.
set -eu
src=${1:?usage: man_codes.sh SOURCE_DIR}
docs=$src/docs/finding-codes.md
man=$src/launch/denpex-probe.1
known=$(sed -n 's/^| `\([a-z0-9-]*\)` |.*/\1/p' "$docs" | sort -u)
[ -n "$known" ] || { echo "man_codes.sh: no codes found in $docs" >&2; exit 1; }
missing=0
for c in $known; do
  # groff escapes a hyphen as \- in places: both spellings count.
  if ! grep -qF -- "$c" "$man" && ! grep -qF -- "$(printf '%s' "$c" | sed 's/-/\\-/g')" "$man"; then
    echo "FAIL: $c is in the finding-code table but not in $man"
    missing=1
  fi
done
[ $missing -eq 0 ] && echo "ok: $(printf '%s\n' "$known" | wc -l) codes, each in the man page"
exit $missing
