#!/usr/bin/env bash
# `denpex-probe diagnose` on each of the 38 real logs in REAL_LOG_DIR (kept beside the
# repository) against the answer its MANIFEST.md records: right means the rank or code named
# where the answer establishes one, and exit 2 with no rank blamed where it says unknown or no
# divergence. Prints each log's verdict and the score; fails below 34 of 38, and on any finding
# without fix, verify or evidence. usage: run_real_logs.sh DRIVER REAL_LOG_DIR
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
right=0
wrong=()
cur=""
bad=0
run() {  # run NAME-PREFIX: sets $out (JSON) and $rc
  f=$(ls "$dir"/"$1"*.log 2>/dev/null | head -1)
  [ -n "$f" ] || { echo "FAIL: no $1*.log in $dir"; fail=1; return 1; }
  finish_log
  cur=$1 bad=0
  timeout 60 "$drv" diagnose "$f" --json "$tmp/out.json" >"$tmp/human" 2>"$tmp/err"
  rc=$?
  out=$tmp/out.json
  return 0
}
# The previous log's verdict: right when every check of it held.
finish_log() {
  [ -n "$cur" ] || return 0
  if [ $bad -eq 0 ]; then right=$((right + 1)); echo "right: $cur"; else wrong+=("$cur"); echo "WRONG: $cur"; fi
  cur=""
}
check() {  # check DESCRIPTION JQ-EXPRESSION
  if ! jq -e "$2" "$out" >/dev/null; then
    echo "  miss: $1"
    jq -c '{verdict, findings: [.findings[] | {code, ranks, hosts, seq, message}], diagnosis}' "$out" | head -c 1500
    echo
    bad=1
  fi
}
must() {  # must DESCRIPTION JQ-EXPRESSION: a failure of the whole test, whatever the score
  jq -e "$2" "$out" >/dev/null || { echo "FAIL: $1"; fail=1; }
}
exit_is() {  # exit_is LOG CODE
  [ $rc -eq "$2" ] || { echo "  miss: $1: exit $rc, expected $2"; bad=1; }
}
no_blame='(.diagnosis.initiating == null) or ((.diagnosis.initiating.ranks // []) | length == 0)'
code_is() { echo "[.findings[].code] | index(\"$1\") != null"; }
no_divergence='[.findings[] | select(.code | test("^collective-(mismatch|args-mismatch|missing)$"))] | length == 0'
every_fix='all(.findings[]; (.fix | length > 0) and (.verify | length > 0))'

# 02: 128-rank Ray log, excerpts of COLL lines, three ranks timed out at the same SeqNum.
run 02 && { exit_is 02 2
  check "02 no call divergence" "$no_divergence"
  check "02 says the three ranks agree" '.diagnosis.inconclusive | test("ranks 21,27,43 all wait in ALLREDUCE \\(SeqNum 5020\\)")'; }
# 04: rank 0 only, terminal-wrapped COLL records.
run 04 && { exit_is 04 2
  check "04 names the single rank and what to add" '.diagnosis.inconclusive | test("only .*add the other ranks")'
  check "04 counts and samples the cut record" '.inputs.unreadable == 1 and (.inputs.unreadable_samples[0].text | test("coun$"))'
  check "04 joined the wrapped record" '.inputs.collective_calls == 1'; }
# 05: nccl-tests, identical calls; NCCL's own WARN is not proof of a call divergence.
run 05 && { exit_is 05 2
  check "05 no call divergence" "$no_divergence"
  check "05 reports NCCL's WARN as a warning and asks for COLL lines" '(.findings | map(.code) | index("nccl-reported-mismatch")) != null and (.diagnosis.inconclusive | test("NCCL_DEBUG_SUBSYS=COLL"))'; }
# 06: 7 of 16 ranks at the same AllGather.
run 06 && { exit_is 06 2
  check "06 no call divergence" "$no_divergence"
  check "06 says 7 of 16" '.diagnosis.inconclusive | test("7 ranks in the input \\(of 16\\)")'; }
# 07: old format, no PG, rank 0 in several groups.
run 07 && { exit_is 07 2
  check "07 cannot compare without process groups" '.diagnosis.inconclusive | test("no process group") and test("rank 7: 64088")'
  check "07 no call divergence" "$no_divergence"; }
# 08: paste-tool counters, ranks 0, 3, 4 at SeqNum 1580.
run 08 && { exit_is 08 2
  check "08 no call divergence" "$no_divergence"
  check "08 ranks 0, 3, 4 agree" '.diagnosis.inconclusive | test("ranks 0,3-4 all wait in ALLREDUCE \\(SeqNum 1580\\)")'; }
# 12: three ranks in three process groups, timestamps without seconds.
run 12 && { exit_is 12 2
  check "12 three groups cannot be compared" '.diagnosis.inconclusive | test("different process group") and test("PG 119") and test("PG 112") and test("PG 120")'; }
# 14: DETAIL fingerprint, shape mismatch at 3104, rank 0 vs rank 1.
run 14 && { exit_is 14 1
  check "14 shape mismatch at 3104 names ranks 0 and 1" '[.findings[] | select(.code == "collective-args-mismatch" and .seq == 3104) | .ranks[]] | sort == [0, 1]'
  check "14 sizes in the finding" '[.findings[] | .found + .expected] | join(" ") | test("195812480") and test("51123456")'; }
# 16: fr_trace errors at collective 39 (the culprit lines are not in the excerpt).
run 16 && { exit_is 16 1
  check "16 size mismatch at collective 39 of default_pg" '.findings[0].code == "collective-args-mismatch" and .findings[0].seq == 39 and .findings[0].comm == "0:default_pg"'
  check "16 says the culprit lines are not in the input" '.findings[0].message | test("not in the input")'; }
# 18: fr_trace, ranks 3-7 missing from 31117.
run 18 && { exit_is 18 1
  check "18 ranks 3-7 missing from 31117" '.findings[0].code == "collective-missing" and .findings[0].seq == 31117 and .findings[0].ranks == [3,4,5,6,7]'
  check "18 ranks 3-7 initiate" '.diagnosis.initiating.ranks == [3,4,5,6,7]'; }
# 20: bootstrap "Message truncated"; the ranks agree on NCCL: no version mismatch.
run 20 && { exit_is 20 1
  check "20 no version mismatch" '[.findings[] | select(.code == "nccl-version-mismatch")] | length == 0'
  check "20 the truncated bootstrap message on compute-st-p4de24xlarge-2 initiates" '.diagnosis.initiating.hosts == ["compute-st-p4de24xlarge-2"] and (.diagnosis.initiating.what | test("Message truncated"))'; }
# 22: net plugin on one node only.
run 22 && { exit_is 22 1
  check "22 nccl-net-plugin-mismatch naming both hosts" '.findings[0].code == "nccl-net-plugin-mismatch" and .findings[0].hosts == ["HGX-H100-04", "HGX-H100-11"]'
  check "22 verify runs the gate on those hosts" '.findings[0].verify | test("-H HGX-H100-04,HGX-H100-11")'; }

# 01: rank 2 (pid 45012) called AllGather where the others called AllReduce; only ranks 0 and 2
# were pasted, with no Init lines: the divergence is found and names pid 45012's process.
run 01 && { exit_is 01 1
  check "01 the AllGather/AllReduce divergence at 28c" '[.findings[] | select(.code == "collective-mismatch")] | length > 0'
  check "01 names pid 45012" '[.findings[] | .message + " " + (.found // "")] | join(" ") | test("45012")'; }
# 03: unknown; the glued record is read and nobody is blamed.
run 03 && { exit_is 03 2
  check "03 no rank blamed" "$no_blame"; }
# 09, 10: unknown: every shown rank waits at the same SeqNum.
run 09 && { exit_is 09 2
  check "09 no call divergence" "$no_divergence"; }
run 10 && { exit_is 10 2
  check "10 no call divergence" "$no_divergence"; }
# 11: the desync report names rank 7 as the lagging rank.
run 11 && { exit_is 11 1
  check "11 rank 7 initiates" '.diagnosis.initiating.ranks == [7]'; }
# 13: OpType mismatch at 485 between ranks 0 and 1 (two ranks: both named).
run 13 && { exit_is 13 1
  check "13 names ranks 0 and 1" '[.findings[] | select(.code | test("^collective-")) | .ranks[]] | unique == [0, 1]'; }
# 15: mismatch between rank 1 (SequenceNumber 101) and rank 7 (SequenceNumber 0).
run 15 && { exit_is 15 1
  check "15 names ranks 1 and 7" '[.findings[] | select(.code | test("^collective-")) | .ranks[]] | unique == [1, 7]'; }
# 17: culprit rank 1 at 1487.
run 17 && { exit_is 17 1
  check "17 culprit rank 1 at 1487" '[.findings[] | select(.seq == 1487) | .ranks[]] == [1]'; }
# 19, 30, 31: the missing nccl* symbol.
run 19 && { exit_is 19 1
  check "19 nccl-abi-mismatch on ncclCommRegister" '.findings[0].code == "nccl-abi-mismatch" and (.findings[0].message | test("ncclCommRegister"))'; }
# 21: the toolkit's stub libcuda.
run 21 && { exit_is 21 1
  check "21 cuda-driver-stub" "$(code_is cuda-driver-stub)"; }
# 23: the effective NCCL (2.14.3) differs from the one torch reports (2.19.3, not in the file).
run 23 && { exit_is 23 1
  check "23 names the NCCL actually loaded" '[.findings[] | .message] | join(" ") | test("2\\.14\\.3")'; }
# 24: NCCL version and net plugin differ; instance-8g-96c-1 is the odd node.
run 24 && { exit_is 24 1
  check "24 nccl-version-mismatch" "$(code_is nccl-version-mismatch)"
  check "24 the odd node is instance-8g-96c-1" '.diagnosis.initiating.hosts == ["instance-8g-96c-1"]'; }
# 25: rank 0 all-reduces twice the elements; it is the only rank that times out.
run 25 && { exit_is 25 1
  check "25 rank 0 initiates" '.diagnosis.initiating.ranks == [0]'; }
# 26, 29, 33: the driver is too old.
for n in 26 29 33; do run $n && { exit_is $n 1; check "$n cuda-driver-too-old" "$(code_is cuda-driver-too-old)"; }; done
# 27: RAS: ranks 12 and 13 are ahead, not the stragglers: the 30 others are behind (the table's
# 32 ranks per comm names them), as the JSON form of the same report would say.
run 27 && { exit_is 27 1
  check "27 names the 30 ranks behind" '[.findings[] | select(.code == "collective-missing") | .ranks | length] == [30]'
  check "27 blames neither 12 nor 13" "$no_blame and ([.findings[] | .ranks[]] | index(12) == null and index(13) == null)"; }
# 28: the out-of-memory process on device [3] (pid 3063028) initiates; [0] is collateral.
run 28 && { exit_is 28 1
  check "28 the OOM initiates" '(.diagnosis.initiating.what | test("out of memory|calloc")) and (.diagnosis.initiating.hosts == ["ng30903"])'; }
run 30 && { exit_is 30 1
  check "30 nccl-abi-mismatch on ncclRedOpCreatePreMulSum" '.findings[0].code == "nccl-abi-mismatch" and (.findings[0].message | test("ncclRedOpCreatePreMulSum"))'
  check "30 every rank alike: no single rank blamed" "$no_blame"; }
run 31 && { exit_is 31 1
  check "31 nccl-abi-mismatch on ncclCommInitRankScalable" '.findings[0].code == "nccl-abi-mismatch" and (.findings[0].message | test("ncclCommInitRankScalable"))'; }
# 32, 36: NVML driver/library mismatch.
for n in 32 36; do run $n && { exit_is $n 1; check "$n cuda-driver-kernel-mismatch" "$(code_is cuda-driver-kernel-mismatch)"; }; done
# 34: no NCCL could be loaded.
run 34 && { exit_is 34 1
  check "34 nccl-missing" "$(code_is nccl-missing)"; }
# 35: rank 3's own illegal memory access.
run 35 && { exit_is 35 1
  check "35 rank 3 initiates" '.diagnosis.initiating.ranks == [3]'
  check "35 fix says CUDA_LAUNCH_BLOCKING" '[.findings[] | select(.code == "initiating-failure") | .fix] | join(" ") | test("CUDA_LAUNCH_BLOCKING=1")'; }
# 37: rank 0's DataLoader failure; the SIGTERMed workers are collateral.
run 37 && { exit_is 37 1
  check "37 rank 0 initiates" '.diagnosis.initiating.ranks == [0]'; }
# 38: Horovod: rank 2 is absent from every ready list.
run 38 && { exit_is 38 1
  check "38 rank 2 is missing" '.diagnosis.initiating.ranks == [2]'; }
finish_log

# Every finding of every log carries evidence-backed fix and verify, and exit 2 comes with one
# stderr line saying what to add.
for f in "$dir"/*.log; do
  timeout 60 "$drv" diagnose "$f" --json "$tmp/all.json" >/dev/null 2>"$tmp/err"
  rc=$?
  out=$tmp/all.json
  must "$(basename "$f"): fix and verify on every finding" "$every_fix"
  must "$(basename "$f"): evidence on every finding" 'all(.findings[]; (.evidence | length > 0) or (.code == "diagnose-inconclusive"))'
  if [ $rc -eq 2 ]; then
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "could not decide:" "$tmp/err" || { echo "FAIL: $(basename "$f"): exit 2 without one stderr line"; cat "$tmp/err"; fail=1; }
  fi
  [ $rc -eq 0 ] && { echo "FAIL: $(basename "$f"): diagnose passed"; fail=1; }
done
echo "real logs right: $right of 38${wrong:+ (wrong: ${wrong[*]})}"
[ $right -ge 34 ] || { echo "FAIL: fewer than 34 of 38 right"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
