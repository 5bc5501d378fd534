#!/usr/bin/env bash
# `denpex-probe explain` as a user runs it: exit codes, "did you mean", --json, refused options.
#   run_explain_cli.sh DENPEX_PROBE
set -u
P=${1:?denpex-probe}
command -v jq >/dev/null || { echo "run_explain_cli.sh: jq is needed" >&2; exit 2; }
fails=0
check() { if eval "$2"; then :; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
out=$("$P" explain nccl.init); rc=$?
check "explain nccl.init exits 0" '[ $rc = 0 ]'
for label in indicates implicates "tells apart" fix verify example; do
  check "explain nccl.init prints '$label'" 'grep -q "^  $label" <<<"$out"'
done
out=$("$P" explain collective-mismatch); rc=$?
check "explain collective-mismatch exits 0 and lists nccl.coll" '[ $rc = 0 ] && grep -q "^    nccl.coll " <<<"$out"'
err=$("$P" explain nccl.int 2>&1 >/dev/null); rc=$?
check "an unknown name exits 2 with the nearest one" '[ $rc = 2 ] && grep -q "did you mean '\''nccl.init'\''" <<<"$err"'
"$P" explain no-such-thing-at-all >/dev/null 2>&1; rc=$?
check "a name near nothing exits 2" '[ $rc = 2 ]'
json=$("$P" explain --json nccl.init); rc=$?
check "explain --json is JSON with the entry" '[ $rc = 0 ] && [ "$(jq -r .id <<<"$json")" = nccl.init ] && [ "$(jq -r .kind <<<"$json")" = signature ]'
json=$("$P" explain --json); rc=$?
check "explain --json with no name lists ids and codes" '[ $rc = 0 ] && [ "$(jq ".signatures | length" <<<"$json")" -gt 10 ] && [ "$(jq ".codes | length" <<<"$json")" -gt 10 ]'
json=$("$P" explain --json nope 2>/dev/null); rc=$?
check "explain --json on an unknown name exits 2 with an error object" '[ $rc = 2 ] && [ "$(jq -r .error <<<"$json")" = "unknown name" ]'
"$P" explain --html x.html nccl.init >/dev/null 2>&1; rc=$?
check "explain refuses --html" '[ $rc = 2 ] && [ ! -e x.html ]'
out=$("$P" explain); rc=$?
check "explain with no name exits 0 and lists nccl.init" '[ $rc = 0 ] && grep -q "^    nccl.init " <<<"$out"'
line='node09:1720:1790 [1] NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 11.'
out=$("$P" explain "$line"); rc=$?
check "explain LINE names the signature that reads it, with fix and verify" '[ $rc = 0 ] && grep -q "^read by nccl.warn.mismatched_collective" <<<"$out" && grep -q "^  fix " <<<"$out" && grep -q "^  verify " <<<"$out"'
out=$(printf '%s\n' "[rank1]: torch.OutOfMemoryError: CUDA out of memory." | "$P" explain -); rc=$?
check "explain - reads the line from standard input, its launcher label taken off" '[ $rc = 0 ] && grep -q "^read by cuda.oom" <<<"$out"'
err=$(printf 'the weather is fine\n' | "$P" explain - 2>&1 >/dev/null); rc=$?
check "a line no signature reads exits 2 saying so" '[ $rc = 2 ] && grep -q "no signature" <<<"$err"'
json=$("$P" explain --json "$line"); rc=$?
check "explain --json LINE lists the signatures" '[ $rc = 0 ] && [ "$(jq -r ".signatures[0].id" <<<"$json")" = nccl.warn.mismatched_collective ]'
[ $fails = 0 ] && echo "explain CLI: all checks passed"
[ $fails = 0 ]
