#!/usr/bin/env bash
# `denpex-probe diagnose` on each of the 86 real logs in REAL_LOG_DIR (kept beside the
# repository) against the answer its MANIFEST.md records: right means the rank or code named
# where the answer establishes one, and exit 2 with no rank blamed where it says unknown or no
# divergence; for files 39-86, the MANIFEST's check column. Prints each log's verdict and the
# score; fails below 82 of 86, on any finding without fix, verify or evidence, and (whatever the
# score) when a log whose answer blames nobody gets a `diagnosis.initiating`.
# usage: run_real_logs.sh DRIVER REAL_LOG_DIR
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
  rm -f "$tmp/out.json"
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
# A log whose answer blames nobody: a miss, and a failure of the whole test whatever the score.
nobody() {  # nobody LOG
  check "$1 blames nobody" "$no_blame"
  must "$1 blames nobody (false blame)" "$no_blame"
}
not_blamed() {  # not_blamed LOG RANK...: none of RANKs under "Started by"
  local r
  for r in "${@:2}"; do check "$1 does not blame rank $r" "((.diagnosis.initiating.ranks // []) | index($r)) == null"; done
}
started_by() {  # started_by LOG RANK...: exactly these ranks under "Started by"
  local want
  want=$(printf '%s,' "${@:2}"); want="[${want%,}]"
  check "$1 started by $want" "(.diagnosis.initiating.ranks // []) == $want"
}
# started_local LOG R: local rank R under "Started by" (a launcher's local rank is no global rank:
# named as the process "local rank R", or as rank R where the input ties the two).
started_local() {
  check "$1 started by local rank $2" "(.diagnosis.initiating.ranks // []) == [$2] or (.diagnosis.initiating.processes // []) == [\"local rank $2\"]"
}
not_blamed_local() {  # not_blamed_local LOG R...
  local r
  for r in "${@:2}"; do
    check "$1 does not blame local rank $r" "((.diagnosis.initiating.ranks // []) | index($r)) == null and ((.diagnosis.initiating.processes // []) | index(\"local rank $r\")) == null"
  done
}
# diverged LOG CODE-REGEX RANK...: a finding of that code family whose ranks are these.
diverged() {
  local want
  want=$(printf '%s,' "${@:3}"); want="[${want%,}]"
  check "$1 $2 naming $want" "[.findings[] | select(.code | test(\"^($2)\$\")) | .ranks[]] | unique == ($want | sort)"
}
says() {  # says LOG CODE-REGEX TEXT-REGEX...: findings of that code whose words match every regex
  local re
  check "$1 $2" "any(.findings[]; .code | test(\"^($2)\$\"))"
  for re in "${@:3}"; do
    check "$1 $2 says $re" "[.findings[] | select(.code | test(\"^($2)\$\")) | (.message // \"\") + \" \" + (.expected // \"\" | tostring) + \" \" + (.found // \"\" | tostring)] | join(\" \") | test(\"$re\")"
  done
}
never() {  # never LOG CODE: no finding of CODE
  check "$1 must not report $2" "$(code_is "$2") | not"
}
exit_not0() { [ $rc -ne 0 ] || { echo "  miss: $1: exit 0"; bad=1; }; }
coll='collective-mismatch|collective-args-mismatch|collective-missing'
every_fix='all(.findings[]; (.fix | length > 0) and (.verify | length > 0))'

# 02: 128-rank Ray log, excerpts of COLL lines, three ranks timed out at the same SeqNum.
run 02 && { exit_is 02 2; nobody 02
  check "02 no call divergence" "$no_divergence"
  check "02 says the three ranks agree" '.diagnosis.inconclusive | test("ranks 21,27,43 all wait in ALLREDUCE \\(SeqNum 5020\\)")'; }
# 04: rank 0 only, terminal-wrapped COLL records.
run 04 && { exit_is 04 2; nobody 04
  check "04 names the single rank and what to add" '.diagnosis.inconclusive | test("only .*add the other ranks")'
  check "04 counts and samples the cut record" '.inputs.unreadable == 1 and (.inputs.unreadable_samples[0].text | test("coun$"))'
  check "04 joined the wrapped record" '.inputs.collective_calls == 1'; }
# 05: nccl-tests, identical calls; NCCL's own WARN is not proof of a call divergence.
run 05 && { exit_is 05 2; nobody 05
  check "05 no call divergence" "$no_divergence"
  check "05 reports NCCL's WARN as a warning and asks for COLL lines" '(.findings | map(.code) | index("nccl-reported-mismatch")) != null and (.diagnosis.inconclusive | test("NCCL_DEBUG_SUBSYS=COLL"))'; }
# 06: 7 of 16 ranks at the same AllGather.
run 06 && { exit_is 06 2; nobody 06
  check "06 no call divergence" "$no_divergence"
  check "06 says 7 of 16" '.diagnosis.inconclusive | test("7 ranks in the input \\(of 16\\)")'; }
# 07: old format, no PG, rank 0 in several groups.
run 07 && { exit_is 07 2; nobody 07
  check "07 cannot compare without process groups" '.diagnosis.inconclusive | test("no process group") and test("rank 7: 64088")'
  check "07 no call divergence" "$no_divergence"; }
# 08: paste-tool counters, ranks 0, 3, 4 at SeqNum 1580.
run 08 && { exit_is 08 2; nobody 08
  check "08 no call divergence" "$no_divergence"
  check "08 ranks 0, 3, 4 agree" '.diagnosis.inconclusive | test("ranks 0,3-4 all wait in ALLREDUCE \\(SeqNum 1580\\)")'; }
# 12: three ranks in three process groups, timestamps without seconds.
run 12 && { exit_is 12 2; nobody 12
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
run 03 && { exit_is 03 2; nobody 03; }
# 09, 10: unknown: every shown rank waits at the same SeqNum.
run 09 && { exit_is 09 2; nobody 09
  check "09 no call divergence" "$no_divergence"; }
run 10 && { exit_is 10 2; nobody 10
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
  nobody 27
  check "27 blames neither 12 nor 13" " ([.findings[] | .ranks[]] | index(12) == null and index(13) == null)"; }
# 28: the out-of-memory process on device [3] (pid 3063028) initiates; [0] is collateral.
run 28 && { exit_is 28 1
  check "28 the OOM initiates" '(.diagnosis.initiating.what | test("out of memory|calloc")) and (.diagnosis.initiating.hosts == ["ng30903"])'; }
run 30 && { exit_is 30 1
  check "30 nccl-abi-mismatch on ncclRedOpCreatePreMulSum" '.findings[0].code == "nccl-abi-mismatch" and (.findings[0].message | test("ncclRedOpCreatePreMulSum"))'
  nobody 30; }
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

# 39-86: the MANIFEST's check column.
# 39: two pastes of two-rank type mismatches (old fingerprints): both ranks named, neither blamed.
run 39 && { exit_not0 39; diverged 39 "$coll" 0 1; nobody 39; }
run 40 && { exit_not0 40; diverged 40 "$coll" 2 3; nobody 40; not_blamed 40 1; }
run 41 && { exit_not0 41; diverged 41 "$coll" 0 2; nobody 41; not_blamed 41 3; }
run 42 && { exit_not0 42; diverged 42 "$coll" 0 2; nobody 42; }
run 43 && { exit_not0 43; diverged 43 "$coll" 0 11; nobody 43; not_blamed 43 15; }
# 44, 45, 48, 68: a report naming the rank missing from the collective.
run 44 && { exit_is 44 1; diverged 44 "collective-missing" 1; not_blamed 44 0; }
run 45 && { exit_is 45 1; diverged 45 "collective-missing" 0; }
run 46 && { check "46 no call divergence" "$no_divergence"; nobody 46; }
# 47: NCCL's NET/IB size check between two hosts, neither blamed; the project's code for NCCL's
# own NET/IB check (nccl-net-mismatch) is the more specific, and names the host by its NCCL header.
run 47 && { exit_not0 47; check "47 collective mismatch between 10.10.23.10 and 10.10.23.6" \
  '[.findings[] | select(.code | test("^(collective-.*|nccl-net-mismatch)$")) | (.hosts // []) + [.message]] | flatten | join(" ") | test("10[.-]10[.-]23[.-]10") and test("10\\.10\\.23\\.6")'
  nobody 47; never 47 nccl-version-mismatch; }
run 48 && { exit_is 48 1; diverged 48 "collective-missing|initiating-failure" 0; not_blamed 48 6; }
run 49 && { exit_is 49 1; started_local 49 3; not_blamed_local 49 0 1 2; }
# 50: DeepSpeed's launcher line names the last-spawned worker; the -9 is reported all the same.
run 50 && { exit_not0 50; nobody 50
  check "50 reports the SIGKILL (-9) and the OOM killer" '[.findings[] | .message] + [.diagnosis.inconclusive // ""] | join(" ") | test("SIGKILL|-9") and test("out-of-memory|out of memory|OOM")'; }
run 51 && { exit_is 51 1; started_by 51 1; }
run 52 && { exit_is 52 1; started_by 52 2; not_blamed 52 0 1 3; }
run 53 && { exit_not0 53; not_blamed 53 1; }
# 54: every rank timed out at SeqNum 1; torchrun's root cause is a claim, not proof.
run 54 && { exit_not0 54; nobody 54; }
run 55 && { exit_not0 55; nobody 55; never 55 nccl-version-mismatch; }
run 56 && { exit_is 56 1; says 56 nccl-abi-mismatch ncclMemFree; }
run 57 && { exit_is 57 1; says 57 nccl-abi-mismatch ncclCommResume; }
# 58, 59: PyTorch's NCCL against the system's and the wheel's: the contract's code for that is
# torch-nccl-mismatch (a warning unless the other copy wins inside PyTorch too).
run 58 && { exit_not0 58; says 58 'nccl-version-mismatch|torch-nccl-mismatch' '2\\.28\\.9' '2\\.30\\.4'; }
run 59 && { exit_not0 59; says 59 'nccl-version-mismatch|torch-nccl-mismatch' '2\\.15\\.5' '2\\.19\\.3'; }
run 60 && { exit_is 60 1; says 60 cuda-driver-too-old; never 60 nccl-abi-mismatch; }
# 61: error 804; the project's own code for it (cuda-driver-forward-compat) is the more specific.
run 61 && { exit_not0 61; nobody 61
  check "61 driver too old or forward compatibility refused" "($(code_is cuda-driver-too-old)) or ($(code_is cuda-driver-forward-compat))"; }
run 62 && { never 62 nccl-version-mismatch; nobody 62; check "62 no error finding" '[.findings[] | select(.severity == "error")] | length == 0'; }
run 63 && { exit_not0 63; diverged 63 "$coll" 0 1; nobody 63; }
run 64 && { exit_not0 64; diverged 64 "$coll" 4 7; nobody 64; }
# 65: rank 0 only reports the inconsistent collective.
run 65 && { exit_not0 65; check "65 a collective divergence" '[.findings[] | select(.code | test("^collective-"))] | length > 0'; nobody 65; }
run 66 && { exit_not0 66; diverged 66 "$coll" 0 5; not_blamed 66 5; }
# 67: one broadcast apart in one process group: neither side proven first.
run 67 && { exit_not0 67; diverged 67 "$coll" 0 3; nobody 67; }
run 68 && { exit_is 68 1; diverged 68 "collective-missing" 0; }
# 69: RAS: rank 1 INCOMPLETE; the corrupt 255-rank block is not a finding.
run 69 && { exit_is 69 1; diverged 69 "collective-missing" 1; never 69 cuda-driver-too-old
  check "69 no 255 missing ranks" '[.findings[] | .ranks | length] | all(. < 255)'; }
run 70 && { exit_not0 70; nobody 70; }
run 71 && { exit_is 71 1; started_local 71 0; not_blamed_local 71 1; }
run 72 && { exit_is 72 1; started_local 72 5; }
run 73 && { exit_is 73 1; started_local 73 1; }
# 49, 71-73: local ranks, as the launcher names them.
# 74: rank 1's store->get failed because rank 0 (the store's host) went away.
run 74 && { exit_is 74 1; started_by 74 0; not_blamed 74 1; }
run 75 && { exit_is 75 1; started_by 75 0; not_blamed 75 1 2 3; }
run 76 && { exit_is 76 1; started_by 76 4; }
run 77 && { exit_is 77 1; started_by 77 7; }
run 78 && { exit_not0 78; nobody 78; }
# 79, 80: NCCL versions in package and file listings.
run 79 && { exit_not0 79; says 79 nccl-version-mismatch '2\\.9\\.9' '2\\.8\\.3'; }
run 80 && { exit_not0 80; says 80 nccl-version-mismatch '2\\.27\\.0' '2\\.23\\.4'; }
run 81 && { exit_not0 81; nobody 81; never 81 nccl-version-mismatch; }
run 82 && { exit_is 82 1; says 82 nccl-abi-mismatch ncclCommInitRankMulti; }
run 83 && { exit_is 83 1; says 83 cuda-driver-too-old; }
run 84 && { exit_is 84 1; says 84 cuda-driver-too-old; }
run 85 && { exit_not0 85; never 85 nccl-abi-mismatch; }
run 86 && { nobody 86; never 86 nccl-abi-mismatch; never 86 nccl-version-mismatch; }
finish_log

# Every finding of every log carries evidence-backed fix and verify, and exit 2 comes with one
# stderr line saying what to add.
for f in "$dir"/*.log; do
  rm -f "$tmp/all.json"
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
echo "real logs right: $right of 86${wrong:+ (wrong: ${wrong[*]})}"
[ $right -ge 82 ] || { echo "FAIL: fewer than 82 of 86 right"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
