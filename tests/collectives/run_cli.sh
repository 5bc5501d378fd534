#!/usr/bin/env bash
# Exit codes and reports of `collectives` on fixtures: 1 with the culprit named, 2 with one line
# on stderr for missing or unusable input, 0 on agreeing traces, --strict on unreadable lines.
# usage: run_cli.sh DRIVER FIXTURE_DIR
set -u
drv=("$1" collectives) fx=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
expect() {  # expect CODE DESCRIPTION ARGS...
  want=$1 what=$2; shift 2
  timeout 30 "${drv[@]}" "$@" >"$dir/out" 2>"$dir/err"
  rc=$?
  [ $rc -eq "$want" ] || { echo "FAIL: $what: exit $rc, expected $want"; cat "$dir/out" "$dir/err"; fail=1; }
}
expect 1 "args mismatch in a log" "$fx/nccl_2_28_srun_label.log"
grep -q "rank 3" "$dir/out" && grep -q "step 2" "$dir/out" && grep -qF "AllReduce(count=2000, float32, sum)" "$dir/out" \
  || { echo "FAIL: human report does not name rank 3, step 2 and the call"; cat "$dir/out"; fail=1; }
expect 2 "missing file" "$fx/does-not-exist.log"
[ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "does-not-exist.log" "$dir/err" || { echo "FAIL: stderr not one line naming the file"; fail=1; }
expect 2 "no collective records" "$fx/not_a_trace.jsonl"
grep -q "not_a_trace.jsonl" "$dir/err" || { echo "FAIL: stderr does not name the file"; fail=1; }
expect 2 "same file twice" "$fx/trace_rank1.jsonl" "$fx/trace_rank1.jsonl"
expect 1 "json on stdout" "$fx/torch_watchdog.log" --json -
jq -e '.schema == "denpex.report.v1" and .verdict == "reject" and .findings[0].ranks == [2] and .findings[0].comm == "pg 1" and (.inputs[0].unreadable == 0)' "$dir/out" >/dev/null \
  || { echo "FAIL: JSON report"; cat "$dir/out"; fail=1; }
grep -q "REJECT" "$dir/err" || { echo "FAIL: human report not on stderr with --json -"; fail=1; }
# --json to a file goes through the one atomic writer: whole, no temporary left; a file that
# cannot be created is exit 2 with one line naming it.
mkdir "$dir/j"
expect 1 "json to a file" "$fx/torch_watchdog.log" --json "$dir/j/report.json"
jq -e '.schema == "denpex.report.v1"' "$dir/j/report.json" >/dev/null || { echo "FAIL: --json file"; fail=1; }
[ "$(ls "$dir/j")" = report.json ] || { echo "FAIL: left behind: $(ls "$dir/j")"; fail=1; }
expect 2 "json into a missing directory" "$fx/torch_watchdog.log" --json "$dir/nodir/report.json"
[ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "nodir/report.json: cannot create" "$dir/err" \
  || { echo "FAIL: stderr not one line naming the --json file"; cat "$dir/err"; fail=1; }
expect 1 "quiet" -q "$fx/watchdog_enqueued_old.log"
[ -s "$dir/out" ] && { echo "FAIL: -q printed"; fail=1; }
# Agreeing traces with a cut last line: pass, but --strict refuses the unread line.
head -5 "$fx/trace_rank1.jsonl" >"$dir/t1.jsonl"
head -5 "$fx/trace_rank0.jsonl" >"$dir/t0.jsonl"
echo '{"ev":"call","comm":"00000000000000aa","seq":3,"op":"AllRed' >>"$dir/t0.jsonl"
expect 0 "agreeing traces" "$dir/t0.jsonl" "$dir/t1.jsonl"
expect 1 "strict with an unreadable line" --strict "$dir/t0.jsonl" "$dir/t1.jsonl"
[ $fail -eq 0 ] && echo PASS
exit $fail
