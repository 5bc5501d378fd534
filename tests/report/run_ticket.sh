#!/usr/bin/env bash
# The diagnose text report as it goes into a ticket, on the one-line ms-swift paste (a
# TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatch between 2 ranks, no majority): one finding
# naming both ranks (not two mirror images), its evidence line shown once, in the user's own
# text, cut around both sizes (not at a fixed width, which cut it at "requi" before the part
# that differs), and the same one finding in the JSON and HTML reports.
#   run_ticket.sh DENPEX_PROBE REAL_LOGS_DIR
set -u
probe=$1 real=$2
log=$(ls "$real"/14-ms-swift*.log 2>/dev/null | head -1)
[ -n "$log" ] || { echo "SKIP: no 14-ms-swift*.log in $real (CI puts the real logs beside the clone)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$probe" diagnose "$log" --json "$tmp/r.json" --html "$tmp/r.html" >"$tmp/out"; rc=$?
[ $rc -eq 1 ] || no "exit $rc, not 1"
cat "$tmp/out"
n=$(jq '.findings | length' "$tmp/r.json")
[ "$n" = 1 ] || no "$n findings in the JSON, not 1"
[ "$(jq -c '[.findings[0].code, .findings[0].ranks]' "$tmp/r.json")" = '["collective-args-mismatch",[0,1]]' ] ||
  no "the finding is $(jq -c '[.findings[0].code, .findings[0].ranks]' "$tmp/r.json")"
[ "$(grep -c '^error ' "$tmp/out")" = 1 ] || no "$(grep -c '^error ' "$tmp/out") error findings in the text"
grep -q '^error collective-args-mismatch  ranks 0-1$' "$tmp/out" || no "no finding naming ranks 0-1"
grep -q "rank 0 has .*51123456.*rank 1 has .*195812480" "$tmp/out" || no "the message does not give each rank its size"
# The found line quotes each rank's fingerprint as the user's line prints it, cut around the size.
found=$(grep '^  found: ' "$tmp/out")
case "$found" in *WorkNCCL*) no "found is in the analyser's form, not the user's text: $found" ;; esac
grep -q "rank 0: .*TensorShape=\[51123456\].*; rank 1: .*TensorShape=\[195812480\]" <<<"$found" ||
  no "found does not quote each rank's TensorShape: $found"
case "$found" in *pinned_memory*) no "found is not cut around what differs: $found" ;; esac
[ "$(jq -r '.findings[0].found' "$tmp/r.json")" = "${found#  found:    }" ] ||
  no "the JSON's found is not the text's: $(jq -r '.findings[0].found' "$tmp/r.json")"
grep -qF "TensorShape=[51123456]" "$tmp/r.html" || no "the page does not quote the user's text"
grep -q "WorkNCCL" "$tmp/r.html" && no "the page shows the analyser's WorkNCCL form"
ev=$(grep -c '^  evidence: ' "$tmp/out")
[ "$ev" = 1 ] || no "$ev evidence lines, not 1"
line=$(grep '^  evidence: ' "$tmp/out")
case "$line" in *51123456*195812480* | *195812480*51123456*) ;; *) no "the evidence is not cut around both sizes: $line" ;; esac
case "$line" in *requi) no "the evidence is cut at a fixed width: $line" ;; esac
grep -q "TensorShape=\[51123456\]" <<<"$line" || no "the evidence is not the user's own text: $line"
[ "$(jq '[.findings[0].evidence[]] | length' "$tmp/r.json")" = 1 ] || no "the JSON finding's evidence is not one line"
[ "$(grep -o 'collective-args-mismatch' "$tmp/r.html" | wc -l)" -ge 1 ] || no "the page does not name the finding"
for v in 51123456 195812480; do
  grep -q "<mark>$v</mark>" "$tmp/r.html" || no "the page does not mark rank's size $v in the evidence line"
done
# No other rank failed here, so no Followed line. Two ranks with no majority: Started by names
# them as disagreeing, neither as the start; the finding's message is printed once, in its block.
grep -q '^Followed:' "$tmp/out" && no "a Followed line with no other rank's failure in the input"
grep -q '^Started by: not decided from this input: ranks 0-1 disagree' "$tmp/out" || no "Started by does not name ranks 0-1 as disagreeing"
msg=$(sed -n 's/^  \(TORCH_DISTRIBUTED_DEBUG=DETAIL caught .*\)$/\1/p' "$tmp/out")
[ -n "$msg" ] || no "the finding's message is not in its block"
[ -n "$msg" ] && [ "$(grep -cF -- "$msg" "$tmp/out")" != 1 ] && no "the message is printed $(grep -cF -- "$msg" "$tmp/out") times"
# What fits a ticket: Started by, the verdict, the finding (code, message, found, evidence, fix,
# the note saying the verify line is for the rerun's logs, verify), what was read, and the two
# blank lines around the finding.
lines=$(wc -l <"$tmp/out")
[ "$lines" -le 12 ] || no "$lines lines of text"
echo "the text report: $lines lines"
[ $fail -eq 0 ] && echo PASS
exit $fail
