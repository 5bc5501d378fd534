#!/usr/bin/env bash
# --redact in all three reports (text, JSON, HTML): diagnose on real logs that carry host names
# and IP addresses, collectives on the project's own COLL log fixture, and the gate (compare) on
# saved records with hosts, addresses, a user's paths. check_redacted.py finds the originals on
# its own and fails if one survives (or if the unredacted reports held none).
#   run_redact.sh DENPEX_PROBE REAL_LOGS_DIR COMPARE_FIXTURES COLLECTIVES_FIXTURES
set -u
probe=$1 real=$2 fixtures=$3 coll=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run NAME ARGS...: the mode plain and redacted; then the check on both.
run() {
  local name=$1
  shift
  "$probe" "$@" --json "$tmp/$name.plain.json" >"$tmp/$name.plain.txt" 2>&1
  "$probe" "$@" --redact --json "$tmp/$name.json" --html "$tmp/$name.html" >"$tmp/$name.txt" 2>&1
  local rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ] && [ $rc -ne 2 ]; then echo "FAIL: $name: exit $rc"; fail=1; return; fi
  [ -s "$tmp/$name.html" ] || { echo "FAIL: $name: no HTML written"; cat "$tmp/$name.txt"; fail=1; return; }
}

check() {
  local name=$1
  shift
  python3 "$here/check_redacted.py" "$@" --plain "$tmp/$name.plain.txt" "$tmp/$name.plain.json" \
    --redacted "$tmp/$name.txt" "$tmp/$name.json" "$tmp/$name.html" "${ALSO[@]}" || fail=1
}

if [ -d "$real" ]; then
  for n in 02 20 22 23 24 27 28; do
    log=$(ls "$real"/$n-*.log)
    ALSO=()
    [ "$n" = 28 ] && ALSO=(--also narval.calcul.quebec ng30903-ib)
    run "real$n" diagnose "$log"
    check "real$n" "$log"
  done
else
  echo "note: $real absent: the real-log cases are not run"
fi

# The gate: four saved records, the last on another NCCL through a user's LD_LIBRARY_PATH.
mkdir -p "$tmp/records"
for r in 0 1 2 3; do
  host=gpu-a100-$((r / 2 + 17)).cluster.example.org
  jq --arg h "$host" --argjson r "$r" '.rank = $r | .host = $h | .pid = 4000 + $r
      | .nccl_env = {"NCCL_SOCKET_IFNAME": "ib0", "NCCL_COMM_ID": "10.20.30.40:29500"}
      | .torch.path = "/home/carol/venv/lib/python3.11/site-packages/torch"' \
    "$fixtures/rank_ok.json" >"$tmp/records/rank$r.json"
done
jq '.nccl.version = "2.21.5" | .nccl.origin = "LD_LIBRARY_PATH"
    | .nccl.path = "/home/carol/nccl-2.21.5/lib/libnccl.so.2.21.5"' "$tmp/records/rank3.json" >"$tmp/r3" &&
  mv "$tmp/r3" "$tmp/records/rank3.json"
ALSO=(--also gpu-a100-17 gpu-a100-18 example.org 10.20.30.40 carol)
run gate compare "$tmp/records"
grep -q "via LD_LIBRARY_PATH=/path-" "$tmp/gate.txt" || { echo "FAIL: gate: the origin line is not redacted as expected"; cat "$tmp/gate.txt"; fail=1; }
check gate "$tmp"/records/*.json

# collectives: the project's own fixtures.
ALSO=()
run coll collectives "$coll/nccl_2_28_srun_label.log"
check coll "$coll/nccl_2_28_srun_label.log"

[ $fail -eq 0 ] && echo PASS
exit $fail
