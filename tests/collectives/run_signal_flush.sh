#!/bin/sh
# Integration test: a process killed by SIGABRT still leaves its trace (the recorder flushes in
# its signal handler, then re-raises so the exit status stays that of the signal).
# usage: run_signal_flush.sh TRACE_LIB NCCL_LOOP  (exit 77 = skipped)
set -u
lib=$1 loop=$2
"$loop" check 0 || { echo "SKIP: libnccl.so.2 not loadable"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
DENPEX_TRACE_DIR="$dir" LD_PRELOAD="$lib" timeout 60 "$loop" abort 3 >/dev/null 2>&1
rc=$?
[ $rc -eq 134 ] || { echo "FAIL: exit $rc, expected 134 (SIGABRT re-raised)"; exit 1; }
f=$(ls "$dir"/denpex-trace.*.jsonl 2>/dev/null | head -1)
[ -n "$f" ] || { echo "FAIL: no trace file"; exit 1; }
head -1 "$f" | grep -q '"schema":"denpex.trace.v1"' || { echo "FAIL: no header"; exit 1; }
calls=$(grep -c '"ev":"call"' "$f")
[ "$calls" -eq 3 ] || { echo "FAIL: $calls calls recorded, expected 3"; cat "$f"; exit 1; }
echo PASS
