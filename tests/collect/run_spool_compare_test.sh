#!/bin/bash
# `denpex-probe compare SPOOL` gives the same findings as the live run that wrote the spool.
# A 4-rank mpirun (MPMD: rank 3 gets the stand-in NCCL 2.27.3 through LD_LIBRARY_PATH) writes
# each rank's record with --rank-report into a spool directory and the live cluster report with
# --json; compare on the spool must give the same verdict, exit code and findings (code,
# severity, ranks, hosts, expected, found, message).
#
# usage: run_spool_compare_test.sh PROBE STANDINS_DIR WORKDIR
set -euo pipefail

probe=$(realpath "${1:?usage: run_spool_compare_test.sh PROBE STANDINS_DIR WORKDIR}")
standins=$(realpath "${2:?missing STANDINS_DIR}")
work=${3:?missing WORKDIR}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
command -v jq >/dev/null || fail "jq not found (apt-get install jq)"
command -v mpirun >/dev/null || skip "mpirun not found (apt-get install openmpi-bin)"
rm -rf "$work"; mkdir -p "$work/spool"; chmod 755 "$work"; work=$(realpath "$work")

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

args=(--timeout 60 --color never --rank-report "$work/spool/rank%r.json" --json "$work/live.json")
live_rc=0
timeout 180 mpirun --oversubscribe -np 3 "$probe" "${args[@]}" \
  : -np 1 -x LD_LIBRARY_PATH="$standins/nccl-2.27.3" "$probe" "${args[@]}" \
  >"$work/live.txt" 2>&1 || live_rc=$?
[ "$live_rc" = 1 ] || { cat "$work/live.txt" >&2; fail "live run exited $live_rc, expected 1 (reject)"; }
[ "$(ls "$work/spool" | wc -l)" = 4 ] || fail "spool holds $(ls "$work/spool" | wc -l) records, expected 4"

cmp_rc=0
timeout 60 "$probe" compare "$work/spool" --color never --json "$work/compare.json" \
  >"$work/compare.txt" 2>&1 || cmp_rc=$?
[ "$cmp_rc" = "$live_rc" ] || { cat "$work/compare.txt" >&2; fail "compare exited $cmp_rc, live run $live_rc"; }

findings='[.findings[] | {code, severity, ranks, hosts, expected, found, message}]'
jq -S "$findings" "$work/live.json" >"$work/live.findings"
jq -S "$findings" "$work/compare.json" >"$work/compare.findings"
diff -u "$work/live.findings" "$work/compare.findings" >&2 ||
  fail "compare SPOOL findings differ from the live run's"

# And they are the findings expected: rank 3's NCCL is the odd one out.
got=$(jq -r '[.findings[] | select(.code == "nccl-version-mismatch") | "\(.severity) \(.ranks | map(tostring) | join(",")) \(.found)"] | join(";")' "$work/live.json")
[ "$got" = "error 3 2.27.3" ] || fail "live nccl-version-mismatch is '$got', expected 'error 3 2.27.3'"
for f in live compare; do
  [ "$(jq -r .verdict "$work/$f.json")" = reject ] || fail "$f verdict is not reject"
  [ "$(jq -r .nranks "$work/$f.json")" = 4 ] || fail "$f nranks is not 4"
done
[ "$(jq -c '[.configurations[] | .ranks]' "$work/live.json")" = "$(jq -c '[.configurations[] | .ranks]' "$work/compare.json")" ] ||
  fail "configurations group ranks differently: live $(jq -c '[.configurations[] | .ranks]' "$work/live.json"), compare $(jq -c '[.configurations[] | .ranks]' "$work/compare.json")"
echo "findings: $(jq -c '[.findings[] | [.code, .severity, .ranks]]' "$work/live.json")"
echo PASS
