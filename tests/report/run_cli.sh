#!/usr/bin/env bash
# The report options of every mode through the real binary: --help lists each subcommand's
# options with FILE/DIR type names (never CLI11's TEXT), a mistyped subcommand or option gets
# "did you mean", --brief prints the verdict and the lead lines only, --color always/never,
# --html writes a page, and a page or JSON that cannot be written is exit 2 with one line.
#   run_cli.sh DENPEX_PROBE DIAGNOSE_FIXTURES COLLECTIVES_FIXTURES COMPARE_FIXTURES
set -u
probe=$1 dx=$2 coll=$3 fixtures=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

# --help: every subcommand lists its options, typed.
for sub in "" compare collectives diagnose; do
  # shellcheck disable=SC2086
  "$probe" $sub --help >"$tmp/help" 2>&1 || no "$sub --help: exit $?"
  grep -qw TEXT "$tmp/help" && no "'$sub --help' still says TEXT: $(grep -w TEXT "$tmp/help")"
  for opt in "--json FILE" "--html FILE" "--brief" "--redact" "--color WHEN" "--quiet"; do
    grep -q -- "$opt" "$tmp/help" || no "'$sub --help' does not list '$opt'"
  done
done
"$probe" --help | grep -q -- "--root DIR" || no "--help: --root DIR"
"$probe" diagnose --help | grep -q "PATH FILE|DIR|-" || no "diagnose --help: PATH FILE|DIR|-"

# did you mean
"$probe" diagnoze "$dx/oom_two_nodes" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || no "diagnoze: exit $rc"
grep -qx "denpex-probe: unknown subcommand 'diagnoze'; did you mean 'diagnose'? (see --help)" "$tmp/err" || no "diagnoze: $(cat "$tmp/err")"
"$probe" colectives x 2>"$tmp/err"
grep -q "did you mean 'collectives'" "$tmp/err" || no "colectives: $(cat "$tmp/err")"
"$probe" diagnose "$dx/oom_two_nodes" --htm "$tmp/x.html" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown option '--htm'; did you mean '--html'?" "$tmp/err" || no "--htm: $rc $(cat "$tmp/err")"
"$probe" frobnicate 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && ! grep -q "did you mean" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] || no "frobnicate: $rc $(cat "$tmp/err")"

# --brief: the verdict, then the lead lines, nothing else.
"$probe" diagnose "$dx/oom_two_nodes" --brief >"$tmp/out"
[ "$(head -1 "$tmp/out")" = "denpex-probe diagnose: REJECT (1 error, 0 warnings; 8 ranks, 2 hosts)" ] || no "diagnose --brief line 1: $(head -1 "$tmp/out")"
grep -q "^Started by: rank 6 on node02" "$tmp/out" || no "diagnose --brief: Started by"
[ "$(wc -l <"$tmp/out")" -le 5 ] || no "diagnose --brief: $(wc -l <"$tmp/out") lines"
grep -q "evidence:" "$tmp/out" && no "diagnose --brief prints evidence"
"$probe" collectives "$coll/nccl_2_28_srun_label.log" --brief >"$tmp/out"
[ "$(wc -l <"$tmp/out")" -eq 3 ] && grep -q "^error collective-args-mismatch: rank 3 called" "$tmp/out" || no "collectives --brief: $(cat "$tmp/out")"
mkdir -p "$tmp/rec"
for r in 0 1 2 3; do jq --argjson r "$r" '.rank = $r | .host = "node\($r / 2 | floor + 1)"' "$fixtures/rank_ok.json" >"$tmp/rec/$r.json"; done
jq '.nccl_env = {"NCCL_PROTO": "Simple"}' "$tmp/rec/3.json" >"$tmp/r" && mv "$tmp/r" "$tmp/rec/3.json"
"$probe" compare "$tmp/rec" --brief >"$tmp/out"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ] && grep -q "^error nccl-env-mismatch:" "$tmp/out" || no "compare --brief: $rc $(cat "$tmp/out")"
# The full gate text tells the two configurations apart on their own lines.
"$probe" compare "$tmp/rec" >"$tmp/out"
grep -qx "      unlike \[1\]: NCCL_PROTO=Simple" "$tmp/out" || no "compare: no 'unlike [1]: NCCL_PROTO=Simple' line: $(cat "$tmp/out")"

# --color in every mode: always paints, never and a pipe do not.
for args in "diagnose $dx/oom_two_nodes" "collectives $coll/nccl_2_28_srun_label.log" "compare $tmp/rec"; do
  # shellcheck disable=SC2086
  "$probe" $args --color always >"$tmp/out"
  grep -q $'\x1b\[1;31mREJECT' "$tmp/out" || no "$args --color always: no red REJECT"
  # shellcheck disable=SC2086
  "$probe" $args --color always --brief >"$tmp/out"
  grep -q $'\x1b\[' "$tmp/out" || no "$args --color always --brief: no colour"
  # shellcheck disable=SC2086
  "$probe" $args --color never >"$tmp/out"
  grep -q $'\x1b' "$tmp/out" && no "$args --color never: colour"
  # shellcheck disable=SC2086
  "$probe" $args >"$tmp/out"
  grep -q $'\x1b' "$tmp/out" && no "$args to a pipe: colour"
done

# --html in every mode; outputs that cannot be written.
for args in "diagnose $dx/oom_two_nodes" "collectives $coll/nccl_2_28_srun_label.log" "compare $tmp/rec"; do
  rm -f "$tmp/p.html"
  # shellcheck disable=SC2086
  "$probe" $args -q --html "$tmp/p.html"; rc=$?
  [ $rc -eq 1 ] && head -1 "$tmp/p.html" | grep -qx '<!DOCTYPE html>' || no "$args --html: exit $rc"
  # shellcheck disable=SC2086
  "$probe" $args -q --html "$tmp/nodir/p.html" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "--html $tmp/nodir/p.html" "$tmp/err" || no "$args --html unwritable: $rc $(cat "$tmp/err")"
done
"$probe" diagnose "$dx/oom_two_nodes" --json "$tmp/same" --html "$tmp/same" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "name the same file" "$tmp/err" || no "--json and --html the same file: $rc"
# --json - keeps stdout for the JSON, with --brief too.
"$probe" diagnose "$dx/oom_two_nodes" --json - --brief 2>"$tmp/err" | jq -e '.diagnosis.initiating.ranks == [6]' >/dev/null || no "--json - --brief: JSON"
grep -q "^Started by:" "$tmp/err" || no "--json - --brief: the text on stderr"

[ $fail -eq 0 ] && echo PASS
exit $fail
