#!/bin/sh
# Integration test: a process that calls abort() leaves its trace, the recorder's handler marks it
# ended by SIGABRT, and the exit status stays that of the signal (re-raised).
# usage: run_signal_flush.sh TRACE_LIB NCCL_LOOP TRACE_DUMP  (exit 77 = skipped)
set -u
lib=$1 loop=$2 dump=$3
"$loop" check 0 || { echo "SKIP: libnccl.so.2 not loadable"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
DENPEX_TRACE_DIR="$dir" LD_PRELOAD="$lib" timeout 60 "$loop" abort 3 >/dev/null 2>&1
rc=$?
[ $rc -eq 134 ] || { echo "FAIL: exit $rc, expected 134 (SIGABRT re-raised)"; exit 1; }
f=$(ls "$dir"/denpex-trace.*.trace 2>/dev/null | head -1)
[ -n "$f" ] || { echo "FAIL: no trace file"; exit 1; }
head -c 200 "$f" | grep -q '"schema":"denpex.trace.v2"' || { echo "FAIL: no header"; exit 1; }
"$dump" "$f" >"$dir/d" || { echo "FAIL: trace unreadable"; exit 1; }
grep -q '^process calls=4 recorded=4 .* end=signalled signal=6 ' "$dir/d" || { echo "FAIL: process line"; cat "$dir/d"; exit 1; }
calls=$(grep -c '^call ' "$dir/d")
[ "$calls" -eq 3 ] || { echo "FAIL: $calls calls recorded, expected 3"; cat "$dir/d"; exit 1; }
echo PASS
