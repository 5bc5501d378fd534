#!/usr/bin/env bash
# `denpex-probe diagnose` end to end: the multi-node fixtures, standard input, a long generated
# log with lost lines, hostile input, and usage errors.
# usage: run_cli.sh DRIVER FIXTURE_DIR GEN_COLL_LOG
set -u
drv=$1 fx=$2 gen=$3
export fx  # read by jq ($ENV.fx) where a verify line names the fixture folder
command -v jq >/dev/null || { echo "FAIL: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # expect CODE DESCRIPTION ARGS...
  want=$1 what=$2; shift 2
  timeout 120 "$drv" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq "$want" ] || { echo "FAIL: $what: exit $rc, expected $want"; head -c 2000 "$tmp/out"; cat "$tmp/err"; fail=1; }
}
check() {  # check DESCRIPTION JQ-EXPRESSION [FILE]
  jq -e "$2" "${3:-$tmp/j.json}" >/dev/null || { echo "FAIL: $1"; jq -c . "${3:-$tmp/j.json}" | head -c 3000; echo; fail=1; }
}

# Multi-node: OOM on node02 rank 6; torchrun on node01 blames rank 2, which only timed out.
expect 1 "oom fixture" diagnose "$fx/oom_two_nodes" --json "$tmp/j.json"
check "initiating rank 6 on node02" '.diagnosis.initiating.ranks == [6] and .diagnosis.initiating.hosts == ["node02"] and (.diagnosis.initiating.what | test("OutOfMemoryError"))'
check "collateral ranks 0-3 timed out, 4,5,7 stopped" '[.diagnosis.collateral[].ranks] == [[0,1,2,3],[4,5,7]]'
check "launcher claim is wrong" '.diagnosis.launcher_claim.correct == false and (.diagnosis.launcher_claim.note | test("names rank 2"))'
check "finding with evidence, fix and verify" '.findings[0].code == "initiating-failure" and .findings[0].evidence[0].line == 9 and (.findings[0].fix | test("PYTORCH_CUDA_ALLOC_CONF")) and .findings[0].verify_argv == ["denpex-probe", "diagnose", $ENV.fx + "/oom_two_nodes"] and (.findings[0].verify_note | test("rerun"))'
head -1 "$tmp/out" | grep -q "^Started by: rank 6 on node02" || { echo "FAIL: human report does not lead with the initiating rank"; head -3 "$tmp/out"; fail=1; }
sed -n 2p "$tmp/out" | grep -q "^Followed: " || { echo "FAIL: human report's second line is not the collateral"; fail=1; }

# Two nodes: rank 5's own illegal memory access at 10:00:01 on gpu-a02; the others time out at
# 10:30:02 and torchrun exits at 10:30:03. Time and host come from each rank's own lines and file.
expect 1 "ima fixture" diagnose "$fx/ima_two_nodes" --json "$tmp/j.json"
check "rank 5 on gpu-a02 at its own time" '.diagnosis.initiating.ranks == [5] and .diagnosis.initiating.hosts == ["gpu-a02"] and (.diagnosis.initiating.when | test("10:00:01"))'
check "its time in ISO 8601, the year from torchrun's summary in that file" '.diagnosis.initiating.when == "2024-12-03T10:00:01" and .diagnosis.initiating.year_known'
check "ranks 4, 6, 7 are placed on gpu-a02" '[.diagnosis.collateral[] | select(.ranks | index(6) != null) | .hosts[]] | index("gpu-a02") != null'
check "the CUDA error's fix" '[.findings[] | select(.code == "initiating-failure") | .fix] | join(" ") | test("CUDA_LAUNCH_BLOCKING=1")'

# Two nodes whose clocks differ by 7 s: rank 2's error is stamped 4 s before rank 1's, but rank 2
# only waited (it timed out in the work rank 1 never joined), and the logs show the skew.
expect 1 "skew fixture" diagnose "$fx/skew_two_nodes" --json "$tmp/j.json"
check "skew: rank 1 on gpu-b01 initiates" '.diagnosis.initiating.ranks == [1] and .diagnosis.initiating.hosts == ["gpu-b01"]'
check "skew: the skew the logs show" '.diagnosis.clock_skew_s > 6.9 and .diagnosis.clock_skew_s < 7.1'
check "skew: the finding says the clocks decided nothing" '[.findings[] | select(.code == "initiating-failure")][0].message | test("clocks disagree by up to 7.0 s")'
check "skew: rank 2 is collateral" '[.diagnosis.collateral[].ranks[]] | index(2) != null'

# One paste per family (fixtures/families/README.md).
fam=$fx/families
expect 1 "shm last error" diagnose "$fam/shm_last_error.log" --json "$tmp/j.json"
check "shm: NCCL's last error is what started it, with the /dev/shm fix" '(.diagnosis.initiating.what | test("/dev/shm/nccl-Qx81Ta")) and ([.findings[] | select(.code == "initiating-failure")][0].fix | test("shm-size"))'
check "shm: no rank" '(.diagnosis.initiating.ranks | length) == 0'
expect 1 "ucx sigbus" diagnose "$fam/ucx_sigbus.log" --json "$tmp/j.json"
check "ucx: the process is host:pid from the handler's prefix" '.diagnosis.initiating.processes == ["c0ffee12ab34:4120"] and .diagnosis.initiating.hosts == ["c0ffee12ab34"]'
expect 1 "nvls" diagnose "$fam/nvls_cuda_failure.log" --json "$tmp/j.json"
check "nvls: host gpu-h7, the fabric manager's fix, no rank" '.diagnosis.initiating.hosts == ["gpu-h7"] and (.diagnosis.initiating.ranks | length) == 0 and ([.findings[] | select(.code == "initiating-failure")][0].fix | test("fabricmanager"))'
expect 1 "ib alike" diagnose "$fam/ib_error4_alike.log" --json "$tmp/j.json"
check "ib: nobody blamed, every host named" '.diagnosis.initiating == null and .diagnosis.met_alike.hosts == ["ib-n02","ib-n04","ib-n07"] and ([.findings[] | select(.code == "initiating-failure")][0] | (.ranks | length) == 0 and (.hosts | length) == 3 and (.fix | test("ACS")))'
grep -q "^Started by: no single rank" "$tmp/out" || { echo "FAIL: ib: human report does not say no single rank"; head -3 "$tmp/out"; fail=1; }
expect 1 "socket ifname" diagnose "$fam/socket_ifname_missing.log" --json "$tmp/j.json"
check "socket: the cause line and the setting's value in the fix" '(.diagnosis.initiating.what | test("neither AF_INET")) and ([.findings[] | select(.code == "initiating-failure")][0].fix | test("the input sets NCCL_SOCKET_IFNAME=ens9f1"))'
# Launcher summaries (survey E in SOURCES.md): Open MPI's end-of-job block, its signal
# handler's dump, torchrun's summary pasted without its layout.
expect 1 "mpirun first process" diagnose "$fam/mpirun_first_process.log" --json "$tmp/j.json"
check "mpirun: MPI rank 3, exit code 3" '.diagnosis.initiating.ranks == [3] and (.diagnosis.initiating.what | test("exit code 3"))'
expect 1 "open mpi segv handler" diagnose "$fam/ompi_segv_handler.log" --json "$tmp/j.json"
check "segv: the process is host:pid from the handler's prefix" '.diagnosis.initiating.processes == ["gpu-r7-14:90412"] and .diagnosis.initiating.hosts == ["gpu-r7-14"] and (.diagnosis.initiating.what | test("Segmentation fault"))'
expect 1 "torchrun flattened" diagnose "$fam/torchrun_flattened.log" --json "$tmp/j.json"
check "flattened: rank 5 by SIGKILL on lab-ws-3090" '.diagnosis.initiating.ranks == [5] and .diagnosis.initiating.hosts == ["lab-ws-3090"] and (.diagnosis.initiating.what | test("SIGKILL"))'
# A peer that went away: the lines that say so name it; their process only followed.
expect 1 "peer broken pipe" diagnose "$fam/peer_broken_pipe.log" --json "$tmp/j.json"
check "broken pipe: the peer at 10.31.5.88 went away first" '.diagnosis.initiating.peer == true and .diagnosis.initiating.processes == ["10.31.5.88"] and .diagnosis.initiating.hosts == ["10.31.5.88"] and (.diagnosis.initiating.what | test("gpu-q17:77120 lost its connection"))'
check "broken pipe: the reporter and its proxy's error only followed" '([.diagnosis.collateral[] | .processes[]?] | unique) == ["gpu-q17:77120"] and ([.diagnosis.collateral[].what] | all(test("^aborted after a peer failed")))'
grep -q "^Started by: the peer at 10.31.5.88" "$tmp/out" || { echo "FAIL: broken pipe: human report does not lead with the peer"; head -3 "$tmp/out"; fail=1; }
expect 1 "ib flush" diagnose "$fam/ib_flush_last_error.log" --json "$tmp/j.json"
check "ib flush: the peer at 10.4.2.17, with the flush's fix" '.diagnosis.initiating.processes == ["10.4.2.17"] and ([.findings[] | select(.code == "initiating-failure")][0].fix | test("ibstat"))'
check "ib flush: one process, rank 2 on 7f3c9ab21e07, only followed" '.nranks == 1 and ([.diagnosis.collateral[] | .ranks[]] | unique) == [2] and ([.diagnosis.collateral[] | .processes[]?] | length) == 0 and ([.diagnosis.collateral[] | .hosts[]] | unique) == ["7f3c9ab21e07"]'
expect 1 "ray worker died" diagnose "$fam/ray_worker_died.log" --json "$tmp/j.json"
check "ray: the dead worker 10.60.1.14:33120 started it" '.diagnosis.initiating.processes == ["10.60.1.14:33120"] and .diagnosis.initiating.hosts == ["10.60.1.14"] and (.diagnosis.initiating.ranks | length) == 0'
check "ray: rank 3's remote error only followed, and it is no timeout" '.diagnosis.collateral == [.diagnosis.collateral[0]] and .diagnosis.collateral[0].ranks == [3] and (.diagnosis.collateral[0].what | test("NCCL error in ALLREDUCE \\(SeqNum 4\\)")) and (.diagnosis.collateral[0].what | test("timeout") | not)'
expect 1 "srun init alike" diagnose "$fam/srun_init_alike.log" --json "$tmp/j.json"
check "srun: tasks 0-1 failed alike, nobody blamed" '.diagnosis.initiating == null and .diagnosis.met_alike.ranks == [0,1] and .diagnosis.met_alike.hosts == ["hpc-g027","hpc-g031"] and (.diagnosis.met_alike.what | test("ncclCommInitRank failed"))'
check "srun: nobody stopped by the launcher, no file-named process" '([.diagnosis.collateral[].what] | map(test("stopped")) | any | not) and ([.. | .processes? // empty | .[]] | map(test("^file ")) | any | not)'

# The same logs as one paste on standard input.
cat "$fx"/oom_two_nodes/node01.log "$fx"/oom_two_nodes/node02.log | timeout 60 "$drv" diagnose - --json "$tmp/j.json" >/dev/null 2>&1
[ $? -eq 1 ] || { echo "FAIL: stdin paste exit code"; fail=1; }
check "stdin: initiating rank 6" '.diagnosis.initiating.ranks == [6] and .inputs.files == ["-"]'
check "stdin: the verify line names a saved copy, never the terminal" '.findings[0].verify_argv == ["denpex-probe", "diagnose", "job.log"] and (.findings[0].verify_note | test("save it as job.log"))'

# Version evidence spread over three nodes' files, three launchers' prefixes.
expect 1 "versions fixture" diagnose "$fx/versions_three_nodes" --json "$tmp/j.json"
check "nccl-version-mismatch blames ranks 2-3 on node02" '[.findings[] | select(.code == "nccl-version-mismatch")][0] | .ranks == [2,3] and .hosts == ["node02"] and .expected == "2.26.2" and .found == "2.27.3"'
check "verify runs the gate on node02 with a node that agreed" '[.findings[] | select(.code == "nccl-version-mismatch")][0].verify | test("^mpirun -np 2 -H node02,node01 ")'

# A long log: 16 ranks, 30,000 steps, rank 15 diverges at step 25,000, and rank 5 lost three lines.
"$gen" "$tmp/long.log" 16 30000 25000 || { echo "FAIL: generator"; exit 1; }
grep -n 'gpu-node001:41005:41005 .*opCount \(1f4\|2710\|4e20\) ' "$tmp/long.log" | cut -d: -f1 | sort -rn | while read -r n; do sed -i "${n}d" "$tmp/long.log"; done
expect 1 "long log" diagnose "$tmp/long.log" --json "$tmp/j.json"
check "long log: rank 15 at position 25000, args mismatch" '[.findings[] | select(.code == "collective-args-mismatch")][0] | .ranks == [15] and .seq == 25000'
check "long log: lost lines counted for rank 5, not blamed" '[.findings[] | select(.code == "diagnose-lines-lost")][0].message | test("rank 5 \\(3\\)")'
check "long log: rank 5 blamed nowhere" '[.findings[] | select(.severity == "error") | .ranks[]] | index(5) == null'
check "long log: evidence is the diverging line" '[.findings[] | select(.code == "collective-args-mismatch")][0].evidence[0].text | test("opCount 61a8 .* count 1048577 ")'

# Saved rank records among the inputs are judged by the gate's rules.
src=$(dirname "$fx")/../fixtures/compare/rank_ok.json
for r in 0 1 2; do
  v=2.28.9; [ $r = 2 ] && v=2.27.3
  jq --argjson r $r --arg v $v '.rank = $r | .host = "n\($r)" | .nccl.version = $v' "$src" >"$tmp/rank$r.json"
done
expect 1 "saved records with a log" diagnose "$tmp/rank0.json" "$tmp/rank1.json" "$tmp/rank2.json" --json "$tmp/j.json"
check "saved records: nccl-version-mismatch blames rank 2" '[.findings[] | select(.code == "nccl-version-mismatch")][0] | .ranks == [2] and .hosts == ["n2"] and (.verify_argv[0:2] == ["denpex-probe", "compare"]) and (.verify_or.text | test("-H n2,n0 "))'

# Hostile input: binary, a 1 MB line, a 13-digit prefix, a rank count of 2^31.
head -c 300000 /dev/zero | tr '\0' '\377' >"$tmp/bin.dat"
awk 'BEGIN { srand(1); for (i = 0; i < 200000; i++) printf "%c", int(rand() * 256); }' >>"$tmp/bin.dat"
expect 2 "binary file" diagnose "$tmp/bin.dat"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: binary: not one stderr line"; cat "$tmp/err"; fail=1; }
{ head -c 1048576 /dev/zero | tr '\0' 'x'; echo " NCCL INFO AllReduce: opCount 0"; } >"$tmp/long_line.log"
expect 2 "1 MB line" diagnose "$tmp/long_line.log" --json "$tmp/j.json"
check "1 MB line counted unreadable" '.inputs.unreadable == 1 and (.inputs.unreadable_samples[0].text | length) <= 300'
printf '1732900000123: node01:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=2] stream 0x1\n' >"$tmp/stamp.log"
expect 2 "13-digit prefix" diagnose "$tmp/stamp.log"
grep -q "could not decide" "$tmp/err" || { echo "FAIL: 13-digit prefix: no clear line"; cat "$tmp/err"; fail=1; }
printf 'a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2147483648 cudaDev 0 - Init COMPLETE\na:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x1 [nranks=2147483648] stream 0x1\n' >"$tmp/huge.log"
expect 2 "rank count 2^31" diagnose "$tmp/huge.log" --json "$tmp/j.json"
check "2^31 ranks: both lines unreadable" '.inputs.unreadable == 2'

# Usage: missing path; options that mean nothing offline are refused.
expect 2 "missing path" diagnose "$tmp/nope.log"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "nope.log" "$tmp/err" || { echo "FAIL: missing path: stderr"; cat "$tmp/err"; fail=1; }
for sub in collectives diagnose; do
  expect 2 "$sub --prometheus" "$sub" --prometheus "$tmp/p.prom" "$fx/oom_two_nodes"
  grep -q -- "--prometheus cannot be used with $sub" "$tmp/err" || { echo "FAIL: $sub --prometheus message"; cat "$tmp/err"; fail=1; }
  expect 2 "$sub --baseline" "$sub" --baseline "$tmp/b.json" "$fx/oom_two_nodes"
  grep -q -- "--baseline cannot be used with $sub" "$tmp/err" || { echo "FAIL: $sub --baseline message"; cat "$tmp/err"; fail=1; }
done
[ $fail -eq 0 ] && echo PASS
exit $fail
