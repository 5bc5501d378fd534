#!/usr/bin/env bash
# `denpex-probe diagnose` and `collectives` on recorder outputs, told by content: real torch
# 2.8.0 gloo dumps (pickle, JSON, gzip-compressed), a binary file named as such.
#   run_cli.sh DENPEX_PROBE FIXTURES_DIR WORKDIR
set -u
probe=$1
fix=$2/fr-gloo-torch-2.8.0
work=$3
rm -rf "$work" && mkdir -p "$work"
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; fail=1; fi
}
codes() { jq -c '[.findings[] | [.code, .ranks]]' "$1"; }

"$probe" diagnose "$fix/size_mismatch" -q --json "$work/a.json"
check "diagnose on a dump directory exits 1" 1 $?
check "diagnose names rank 2's size and rank 2 behind" \
  '[["collective-args-mismatch",[2]],["collective-missing",[2]]]' "$(codes "$work/a.json")"

"$probe" diagnose "$fix/size_mismatch-json/nccl_trace_rank_1.json" "$fix/size_mismatch-json/nccl_trace_rank_2.json" \
  "$fix/size_mismatch-json/nccl_trace_rank_3.json" -q --json "$work/b.json"
check "diagnose on JSON dumps, rank 0's missing, exits 1" 1 $?
check "the missing rank named, the rest judged" \
  '[["collective-args-mismatch",[2]],["collective-missing",[2]],["collective-ranks-absent",[0]]]' "$(codes "$work/b.json")"

# The same partial dump set joined with the job's log, where rank 0 (no dump) failed on its own:
# the log's rank 0 started it, the dumps' size mismatch among ranks 1-3 is still found, and the
# rank without a dump is named.
printf '%s\n' '[rank0]:[E1201 10:00:01.000000 4242 ProcessGroupGloo.cpp:100] RuntimeError: CUDA error: an illegal memory access was encountered' >"$work/rank0.log"
"$probe" diagnose "$fix/size_mismatch-json/nccl_trace_rank_1.json" "$fix/size_mismatch-json/nccl_trace_rank_2.json" \
  "$fix/size_mismatch-json/nccl_trace_rank_3.json" "$work/rank0.log" -q --json "$work/j.json"
check "dumps joined with a log exit 1" 1 $?
check "the log's rank 0 started it" '[0]' "$(jq -c '.diagnosis.initiating.ranks' "$work/j.json")"
check "the dumps' findings and the log's, together" \
  '[["collective-args-mismatch",[2]],["collective-missing",[2]],["collective-ranks-absent",[0]],["initiating-failure",[0]]]' \
  "$(jq -c '[.findings[] | [.code, .ranks]] | sort' "$work/j.json")"

for r in 0 1 2 3; do gzip -c "$fix/stuck/nccl_trace_rank_$r" >"$work/nccl_trace_rank_$r.gz"; done
"$probe" collectives "$work"/nccl_trace_rank_*.gz -q --json "$work/c.json"
check "collectives on gzip-compressed dumps exits 1" 1 $?
check "rank 3 behind, the ranks ahead not blamed" '[["collective-missing",[3]]]' "$(codes "$work/c.json")"

cp /bin/true "$work/rank0.log"
err=$("$probe" diagnose "$work/rank0.log" 2>&1 >/dev/null)
check "a binary file exits 2" 2 $?
check "and is named with what it is" "denpex-probe diagnose: $work/rank0.log: an ELF program or library, not a log: give the text logs the job wrote" "$err"
[ $fail = 0 ] && echo "evidence.cli: all checks passed"
exit $fail
