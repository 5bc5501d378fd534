#!/usr/bin/env bash
# `denpex-probe diagnose` on each real log in REAL_LOG_DIR (kept beside the repository) gives
# the answer its MANIFEST.md records (or, where the answer is unknown, what the log alone
# supports, or exit 2 with what to add). usage: run_real_logs.sh DRIVER REAL_LOG_DIR
set -u
drv=$1 dir=$2
if [ ! -d "$dir" ]; then
  echo "SKIP: $dir is absent (CI puts the shared directory beside the clone)"
  exit 77
fi
command -v jq >/dev/null || { echo "FAIL: jq missing (tools/install-deps.sh installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() {  # run NAME-PREFIX: sets $out (JSON) and $rc
  f=$(ls "$dir"/"$1"*.log 2>/dev/null | head -1)
  [ -n "$f" ] || { echo "FAIL: no $1*.log in $dir"; fail=1; return 1; }
  timeout 60 "$drv" diagnose "$f" --json "$tmp/out.json" >"$tmp/human" 2>"$tmp/err"
  rc=$?
  out=$tmp/out.json
  return 0
}
check() {  # check DESCRIPTION JQ-EXPRESSION
  if ! jq -e "$2" "$out" >/dev/null; then
    echo "FAIL: $1"
    jq -c '{verdict, findings: [.findings[] | {code, ranks, hosts, seq, message}], diagnosis}' "$out" | head -c 3000
    echo
    fail=1
  fi
}
no_divergence='[.findings[] | select(.code | test("^collective-(mismatch|args-mismatch|missing)$"))] | length == 0'
every_fix='all(.findings[]; (.fix | length > 0) and (.verify | length > 0))'

# 02: 128-rank Ray log, excerpts of COLL lines, three ranks timed out at the same SeqNum.
run 02 && { [ $rc -eq 2 ] || { echo "FAIL 02: exit $rc, expected 2"; fail=1; }
  check "02 no call divergence" "$no_divergence"
  check "02 says the three ranks agree" '.diagnosis.inconclusive | test("ranks 21,27,43 all wait in ALLREDUCE \\(SeqNum 5020\\)")'; }
# 04: rank 0 only, terminal-wrapped COLL records.
run 04 && { [ $rc -eq 2 ] || { echo "FAIL 04: exit $rc, expected 2"; fail=1; }
  check "04 names the single rank and what to add" '.diagnosis.inconclusive | test("only .*add the other ranks")'
  check "04 counts and samples the cut record" '.inputs.unreadable == 1 and (.inputs.unreadable_samples[0].text | test("coun$"))'
  check "04 joined the wrapped record" '.inputs.collective_calls == 1'; }
# 05: nccl-tests, identical calls; NCCL's own WARN is not proof of a call divergence.
run 05 && { [ $rc -eq 2 ] || { echo "FAIL 05: exit $rc, expected 2"; fail=1; }
  check "05 no call divergence" "$no_divergence"
  check "05 reports NCCL's WARN as a warning and asks for COLL lines" '(.findings | map(.code) | index("nccl-reported-mismatch")) != null and (.diagnosis.inconclusive | test("NCCL_DEBUG_SUBSYS=COLL"))'; }
# 06: 7 of 16 ranks at the same AllGather.
run 06 && { [ $rc -eq 2 ] || { echo "FAIL 06: exit $rc, expected 2"; fail=1; }
  check "06 no call divergence" "$no_divergence"
  check "06 says 7 of 16" '.diagnosis.inconclusive | test("7 ranks in the input \\(of 16\\)")'; }
# 07: old format, no PG, rank 0 in several groups.
run 07 && { [ $rc -eq 2 ] || { echo "FAIL 07: exit $rc, expected 2"; fail=1; }
  check "07 cannot compare without process groups" '.diagnosis.inconclusive | test("no process group") and test("rank 7: 64088")'
  check "07 no call divergence" "$no_divergence"; }
# 08: paste-tool counters, ranks 0, 3, 4 at SeqNum 1580.
run 08 && { [ $rc -eq 2 ] || { echo "FAIL 08: exit $rc, expected 2"; fail=1; }
  check "08 no call divergence" "$no_divergence"
  check "08 ranks 0, 3, 4 agree" '.diagnosis.inconclusive | test("ranks 0,3-4 all wait in ALLREDUCE \\(SeqNum 1580\\)")'; }
# 12: three ranks in three process groups, timestamps without seconds.
run 12 && { [ $rc -eq 2 ] || { echo "FAIL 12: exit $rc, expected 2"; fail=1; }
  check "12 three groups cannot be compared" '.diagnosis.inconclusive | test("different process group") and test("PG 119") and test("PG 112") and test("PG 120")'; }
# 14: DETAIL fingerprint, shape mismatch at 3104, rank 0 vs rank 1.
run 14 && { [ $rc -eq 1 ] || { echo "FAIL 14: exit $rc, expected 1"; fail=1; }
  check "14 shape mismatch at 3104 names ranks 0 and 1" '[.findings[] | select(.code == "collective-args-mismatch" and .seq == 3104) | .ranks[]] | sort == [0, 1]'
  check "14 sizes in the finding" '[.findings[] | .found + .expected] | join(" ") | test("195812480") and test("51123456")'; }
# 16: fr_trace errors at collective 39 (the culprit lines are not in the excerpt).
run 16 && { [ $rc -eq 1 ] || { echo "FAIL 16: exit $rc, expected 1"; fail=1; }
  check "16 size mismatch at collective 39 of default_pg" '.findings[0].code == "collective-args-mismatch" and .findings[0].seq == 39 and .findings[0].comm == "0:default_pg"'
  check "16 says the culprit lines are not in the input" '.findings[0].message | test("not in the input")'; }
# 18: fr_trace, ranks 3-7 missing from 31117.
run 18 && { [ $rc -eq 1 ] || { echo "FAIL 18: exit $rc, expected 1"; fail=1; }
  check "18 ranks 3-7 missing from 31117" '.findings[0].code == "collective-missing" and .findings[0].seq == 31117 and .findings[0].ranks == [3,4,5,6,7]'
  check "18 ranks 3-7 initiate" '.diagnosis.initiating.ranks == [3,4,5,6,7]'; }
# 20: bootstrap "Message truncated"; the ranks agree on NCCL: no version mismatch.
run 20 && { [ $rc -eq 1 ] || { echo "FAIL 20: exit $rc, expected 1"; fail=1; }
  check "20 no version mismatch" '[.findings[] | select(.code == "nccl-version-mismatch")] | length == 0'
  check "20 the truncated bootstrap message on compute-st-p4de24xlarge-2 initiates" '.diagnosis.initiating.hosts == ["compute-st-p4de24xlarge-2"] and (.diagnosis.initiating.what | test("Message truncated"))'; }
# 22: net plugin on one node only.
run 22 && { [ $rc -eq 1 ] || { echo "FAIL 22: exit $rc, expected 1"; fail=1; }
  check "22 nccl-net-plugin-mismatch naming both hosts" '.findings[0].code == "nccl-net-plugin-mismatch" and .findings[0].hosts == ["HGX-H100-04", "HGX-H100-11"]'
  check "22 verify runs the gate on those hosts" '.findings[0].verify | test("-H HGX-H100-04,HGX-H100-11")'; }

# Every finding of every log carries evidence-backed fix and verify, and exit 2 comes with one
# stderr line saying what to add.
for f in "$dir"/*.log; do
  timeout 60 "$drv" diagnose "$f" --json "$tmp/all.json" >/dev/null 2>"$tmp/err"
  rc=$?
  out=$tmp/all.json
  check "$(basename "$f"): fix and verify on every finding" "$every_fix"
  check "$(basename "$f"): evidence on every finding" 'all(.findings[]; (.evidence | length > 0) or (.code == "diagnose-inconclusive"))'
  if [ $rc -eq 2 ]; then
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "could not decide:" "$tmp/err" || { echo "FAIL: $(basename "$f"): exit 2 without one stderr line"; cat "$tmp/err"; fail=1; }
  fi
  [ $rc -eq 0 ] && { echo "FAIL: $(basename "$f"): diagnose passed"; fail=1; }
done
[ $fail -eq 0 ] && echo PASS
exit $fail
