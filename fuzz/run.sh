#!/bin/bash
# Runs every libFuzzer target for a bounded time (FUZZ_JOBS at a time, default one per core) and
# fails on any crash, leak, timeout or sanitizer report.
#   fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET]   (default 20)
# The random seed comes from the clock, so each run (CI's included) explores new inputs; it is
# printed first, and FUZZ_SEED=N replays a run with seed N.
# BUILD_DIR is a build configured with CXX=clang++ -DDENPEX_BUILD_FUZZ=ON; the targets are
# built here if needed. Seeds come from fuzz/corpus/<target>/ (read only); what a run discovers
# goes to BUILD_DIR/fuzz/work/<target>/, and a crashing input to BUILD_DIR/fuzz/artifacts/.
set -u
build=$1
secs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
cmake --build "$build" --target denpex_fuzz >/dev/null || { echo "fuzz/run.sh: build failed"; exit 1; }
targets="elf nccl_literal ld_cache record baseline version_py collective_log diagnose loader fs_view saved_job decode pickle shell_command saved_records ras_json"
seed=${FUZZ_SEED:-$(( $(date +%s%N) % 4000000000 + 1 ))}
echo "fuzz/run.sh: seed $seed (replay with FUZZ_SEED=$seed fuzz/run.sh $build $secs)"
# One target per core at a time: each is a single process, so on 2 cores two run side by side
# and the step takes half as long. Each writes its own log; they are reported in order.
jobs_max=${FUZZ_JOBS:-$(nproc)}
run_one() {  # run_one TARGET: fuzzes it and leaves its exit status in work/TARGET/rc
  local t=$1 bin=$build/fuzz/fuzz_$1 work=$build/fuzz/work/$1 art=$build/fuzz/artifacts/$1 leaks=1
  mkdir -p "$work" "$art"
  # -timeout: one input taking longer than 10 s is a hang; -rss_limit_mb: a reader that takes
  # memory in proportion to a claimed (not actual) size is a bug. detect_leaks needs ptrace,
  # which some sandboxes forbid; LSan then aborts with "LeakSanitizer has encountered a fatal
  # error", so it is tried first and switched off only when unavailable.
  ASAN_OPTIONS=detect_leaks=1 "$bin" -runs=1 "$here/corpus/$t" >/dev/null 2>"$work/leakcheck.log" ||
    { grep -q "LeakSanitizer has encountered a fatal error" "$work/leakcheck.log" && leaks=0; }
  echo "$leaks" >"$work/leaks"
  ASAN_OPTIONS=detect_leaks=$leaks:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" -seed="$seed" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$art/" -print_final_stats=1 "$work" "$here/corpus/$t" >"$work/run.log" 2>&1
  echo $? >"$work/rc"
}
running=0
for t in $targets; do
  rm -f "$build/fuzz/work/$t/rc"
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs_max" ]; then wait -n; running=$((running - 1)); fi
done
wait
fail=0
for t in $targets; do
  work=$build/fuzz/work/$t
  echo "== fuzz_$t: ${secs}s (detect_leaks=$(cat "$work/leaks" 2>/dev/null))"
  if [ "$(cat "$work/rc" 2>/dev/null)" != 0 ]; then
    echo "FAIL: fuzz_$t found a problem with seed $seed; last lines of $work/run.log:"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written|==[0-9]+==" "$work/run.log" | head -20
    fail=1
  else
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/run.log" | tr '\n' ' '
    echo
  fi
done
[ $fail -eq 0 ] && echo "fuzz: all targets ran ${secs}s without a finding"
exit $fail
