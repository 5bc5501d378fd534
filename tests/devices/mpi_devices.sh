#!/usr/bin/env bash
# The device checks end to end under the real Open MPI mpirun: MPMD, one app context per
# stand-in host, each rank through device_host.sh (its own mount and UTS namespaces, the
# driver's and the kernel's device files written as tmpfs trees in their formats, from
# tests/fixtures/devices/h100). Two jobs, each batching its cases:
#   uniform  four H100 hosts and one whose NVIDIA driver is not loaded: no device finding
#   odd      three reference hosts and one odd host per case: each case's finding on its host
# then the probe alone (the prolog's mode) on stand-in hosts, with and without a baseline, and
# an image under --root (its device settings kept, checked on the nodes).
# NVML is the stand-in (tests/standins/fake_nvml.c), found through LD_LIBRARY_PATH, its GPUs
# from each host's nvml.txt.
# Last, the Slurm prolog itself (launch/slurm/denpex-prolog) on stand-in hosts against that
# baseline: NVML's findings drain the node with their code as the reason.
# usage: mpi_devices.sh PROBE FIXTURES STANDINS SCRATCH_BASE PROLOG
PROBE=$1 FIXTURES=$2 STANDINS=$3 PROLOG=$5
source "$(dirname "$0")/../integration/lib.sh"
HOST_SH=$(cd "$(dirname "$0")" && pwd)/device_host.sh
new_scratch "$4"
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces with tmpfs over /proc/driver, /sys)"
command -v mpirun >/dev/null || skip "mpirun not installed"
unshare -m --uts --propagation unchanged true 2>/dev/null || skip "unshare -m --uts not permitted here"
T=$SCRATCH/hosts

# The stand-in hosts' trees (trees.sh): ref, and one odd tree per case.
source "$(dirname "$0")/trees.sh"
make_trees
grep -q "GPU Excluded:.*Yes" "$(gpu excluded 0000:0a:00.0)" || fail "the excluded tree was not written"

# ctx HOST TREE [NAME=VALUE...]: one app context of one rank.
# JOBENV: NAME=VALUE words every context of a job gets.
CTX=() JOBENV=()
ctx() {
  local host=$1 tree=$2; shift 2
  [ ${#CTX[@]} = 0 ] || CTX+=(:)
  CTX+=(-np 1)
  # A variable the context sets itself replaces the job's.
  local job=() kv
  for kv in "${JOBENV[@]}"; do [[ " $* " == *" ${kv%%=*}="* ]] || job+=("$kv"); done
  for kv in "${job[@]}" "$@" $(nvml_env "$tree"); do CTX+=(-x "$kv"); done
  CTX+=("$HOST_SH" "$host" "$T/$tree" "$PROBE" --json "$OUT" "${EXTRA[@]}")
}
run_job() {
  local name=$1 want=$2 rc=0 start
  start=$(date +%s.%N)
  timeout -k 10 180 mpirun "${CTX[@]}" >"$SCRATCH/$name.txt" 2>"$SCRATCH/$name.err" || rc=$?
  echo "job $name: $(echo "$(date +%s.%N) - $start" | bc) s, exit $rc"
  [ "$rc" = "$want" ] || { cat "$SCRATCH/$name.txt" "$SCRATCH/$name.err" >&2; fail "mpirun exit $rc, expected $want"; }
}
DEVICE_CODES='["gpu-ecc-mode-mismatch","gpu-ecc-errors-pending","nvlink-down","fabric-manager-not-ready","container-visible-devices-unmatched","nccl-net-unavailable","nccl-topo-file-unreadable","gpu-mig-mismatch","gpu-compute-mode-mismatch","gpu-lost","gpu-count-short","gpu-count-mismatch","gpu-model-mismatch","gpu-kernel-module-mismatch","rdma-hca-mismatch","rdma-firmware-mismatch","rdma-port-down","gpudirect-mismatch","nccl-socket-ifname-unmatched","nccl-ib-hca-unmatched","cuda-visible-devices-beyond"]'
COMMON=(NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo CUDA_VISIBLE_DEVICES=0,1)
# NCCL_NET, NCCL_TOPO_FILE and NVIDIA_VISIBLE_DEVICES set alike on every host of both jobs: only
# a host where they fail is named.
SETTINGS=(NCCL_NET=IB NCCL_TOPO_FILE=/proc/driver/topo.xml NVIDIA_VISIBLE_DEVICES=all)

echo "== uniform: four H100 hosts and one without the NVIDIA driver: no device finding, pass"
OUT=$SCRATCH/uniform.json CTX=() EXTRA=(--write-baseline "$SCRATCH/baseline.json") JOBENV=("${SETTINGS[@]}")
for h in 1 2 3 4; do ctx "node0$h" ref "${COMMON[@]}"; done
ctx node05 nodriver "${COMMON[@]}"
run_job uniform 0
jq_is "$OUT" '.verdict' pass
jq_is "$OUT" ".nhosts" 5
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c))] | length" 0
# The facts are in the record (one per configuration under MPI): read on each host, unknown (with why) where the driver is not.
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node01")) | .record.devices | "\(.gpus.status) \(.gpus.devices|length) \(.rdma.devices|length) \(.gpudirect.module) \(.nvswitch.count)"][0]' "ok 2 2 nvidia_peermem 1"
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node05")) | .record.devices | "\(.gpus.status) \(.rdma.status) \(.gpudirect.status) \(.nvml.status) \(.nvml.why)"][0]' \
  "unknown ok absent unknown nvmlInit_v2: Driver Not Loaded (9)"
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node01")) | .record.devices.nvml | "\(.status) \(.gpus|length) \(.gpus[0].compute_mode) \(.gpus[0].mig)"][0]' "ok 2 default disabled"
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node01")) | .record.devices | "\(.nvml.gpus[1] | "\(.bus_location) \(.ecc) \(.ecc_uncorrected) \(.remap_pending) \(.nvlink_up)/\(.nvlink_links) \(.fabric)") \(.nvswitch.fabric_manager)"][0]' \
  "0000:18:00.0 enabled 0 no 18/18 completed ready"
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node05")) | .record.devices.nvswitch.fabric_manager][0]' unknown
jq_is "$OUT" '[.configurations[] | select(.hosts|index("node01")) | .record.devices.settings[] | "\(.variable)=\(.status)"] | join(" ")' \
  "NCCL_SOCKET_IFNAME=ok NCCL_IB_HCA=ok NCCL_NET=ok NCCL_TOPO_FILE=ok CUDA_VISIBLE_DEVICES=ok NVIDIA_VISIBLE_DEVICES=ok"
jq -e '[.configurations[] | select(.hosts|index("node05"))][0].record.devices.gpus.why | test("/proc/driver/nvidia")' "$OUT" >/dev/null ||
  fail "node05's GPUs are unknown without saying why"
# Per-host identities do not split the configuration: the four H100 hosts are one.
jq_is "$OUT" '[.configurations[] | select(.hosts | index("node01"))][0].hosts | join(",")' "node01,node02,node03,node04"

echo "== odd hosts: each case's finding names its host and the hosts it differs from"
OUT=$SCRATCH/odd.json CTX=() EXTRA=() JOBENV=("${SETTINGS[@]}")
ctx node01 ref "${COMMON[@]}"
ctx node02 ref "${COMMON[@]}"
ctx node03 ref "${COMMON[@]}"
ctx node04 fewer NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo CUDA_VISIBLE_DEVICES=0
ctx node05 excluded NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo
ctx node06 model "${COMMON[@]}"
ctx node07 module "${COMMON[@]}"
ctx node08 hca "${COMMON[@]}"
ctx node09 fw "${COMMON[@]}"
ctx node10 port "${COMMON[@]}"
ctx node11 peermem "${COMMON[@]}"
ctx node12 ref NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=eth9 CUDA_VISIBLE_DEVICES=0,1
ctx node13 ref NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo CUDA_VISIBLE_DEVICES=0,1,2
ctx node14 mig "${COMMON[@]}"
ctx node15 lost "${COMMON[@]}"
ctx node16 mode "${COMMON[@]}"
ctx node17 ecc "${COMMON[@]}"
ctx node18 eccerr "${COMMON[@]}"
ctx node19 nvlink "${COMMON[@]}"
ctx node20 fabric "${COMMON[@]}"
ctx node21 notopo "${COMMON[@]}"
# A container (its `container` variable, as podman sets it) the runtime gave no GPU.
ctx node22 ref "${COMMON[@]}" container=podman NVIDIA_VISIBLE_DEVICES=void
run_job odd 1
jq_is "$OUT" '.verdict' reject
# code -> "severity hosts" for every device finding.
got=$(jq -r "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c)) | \"\(.code) \(.severity) \(.hosts|join(\",\"))\"] | sort | join(\"\n\")" "$OUT")
want="container-visible-devices-unmatched error node22
cuda-visible-devices-beyond error node13
fabric-manager-not-ready error node20
gpu-compute-mode-mismatch warning node16
gpu-count-mismatch warning node04
gpu-count-short error node05
gpu-ecc-errors-pending error node18
gpu-ecc-mode-mismatch warning node17
gpu-kernel-module-mismatch warning node07
gpu-lost error node15
gpu-mig-mismatch error node14
gpu-model-mismatch warning node06
gpudirect-mismatch warning node11
nccl-ib-hca-unmatched warning node10
nccl-net-unavailable error node10
nccl-socket-ifname-unmatched error node12
nccl-topo-file-unreadable warning node21
nvlink-down warning node19
rdma-firmware-mismatch warning node09
rdma-hca-mismatch warning node08
rdma-port-down warning node10"
[ "$got" = "$want" ] || { echo "--- got:"; echo "$got"; echo "--- want:"; echo "$want"; fail "device findings differ"; } >&2
# Each names the hosts it differs from, and carries a verify command that is plain words.
jq_is "$OUT" '[.findings[] | select(.code=="gpu-model-mismatch")][0].message' \
  "node06 has GPU model NVIDIA A100-SXM4-80GB, where node[01-05,07-22] have GPU model NVIDIA H100 80GB HBM3"
jq_is "$OUT" '[.findings[] | select(.code=="rdma-port-down")][0].message' \
  "node10 has mlx5_0 port 1 DOWN, where node[01-09,11-22] have mlx5_0 port 1 ACTIVE"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-count-short")][0].message' \
  "node05 has 0 usable GPUs for 1 rank placed on it"
jq_is "$OUT" '[.findings[] | select(.code=="nvlink-down")][0].message' \
  "node19 has 30 of 36 NVLink links active, where node[01-13,17-18,20-22] have 36 of 36 NVLink links active"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-ecc-errors-pending")][0].message' \
  "node18 has 1 GPU with rows pending remapping, volatile uncorrected ECC errors (NVML)"
jq_is "$OUT" '[.findings[] | select(.code=="fabric-manager-not-ready")][0].found' "GPU fabric registration not-started"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-count-short")][0].verify' \
  "mpirun -np 1 -H node05:1 --map-by ppr:1:node denpex-probe"
jq_is "$OUT" '[.findings[] | select(.code=="nccl-socket-ifname-unmatched")][0].verify_argv | join(" ")' \
  "mpirun -np 1 -H node12:1 --map-by ppr:1:node -x NCCL_SOCKET_IFNAME denpex-probe"
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c)) | select((.verify|length) == 0)] | length" 0
grep -q "verify: mpirun" "$SCRATCH/odd.txt" || fail "the human report prints no verify line"
echo "== alone (the Slurm prolog's mode): a host's settings against its own devices"
# alone HOST TREE WANT_EXIT [NAME=VALUE...] ["$PROBE" OPTIONS...]: the probe alone on one
# stand-in host.
alone() {
  local host=$1 tree=$2 want=$3 rc=0; shift 3
  OUT=$SCRATCH/alone-$host.json
  # NAME=VALUE words, then optionally "$PROBE" and its options.
  # The jobs' settings too: the baseline they wrote pins them (NCCL_NET changes the wire).
  local envs=("${SETTINGS[@]}") args=()
  while [ $# -gt 0 ] && [ "$1" != "$PROBE" ]; do envs+=("$1"); shift; done
  [ $# = 0 ] || { shift; args=("$@"); }
  "$HOST_SH" "$host" "$T/$tree" env $(nvml_env "$tree") "${envs[@]}" "$PROBE" --json "$OUT" "${args[@]}" \
    >"$OUT.txt" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$OUT.txt" >&2; fail "alone on $host: exit $rc, expected $want"; }
}
alone node13 ref 1 CUDA_VISIBLE_DEVICES=0,1,2
jq_is "$OUT" '[.findings[] | select(.code=="cuda-visible-devices-beyond") | .hosts[0]] | join(",")' node13
# Its only named port down: NCCL_IB_HCA is a warning (sockets instead), NCCL_NET=IB an error.
alone node10 port 1 NCCL_IB_HCA==mlx5_0:1
jq_is "$OUT" '[.findings[] | select(.code=="nccl-ib-hca-unmatched" or .code=="nccl-net-unavailable") | "\(.code) \(.severity)"] | join(",")' \
  "nccl-net-unavailable error,nccl-ib-hca-unmatched warning"
alone node05 nodriver 0 NCCL_IB_HCA=mlx5_0 CUDA_VISIBLE_DEVICES=0 NCCL_SOCKET_IFNAME=lo
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c))] | length" 0
jq_is "$OUT" '[.configurations[0].record.devices.settings[] | "\(.variable)=\(.status)"] | join(" ")' \
  "NCCL_SOCKET_IFNAME=ok NCCL_IB_HCA=ok NCCL_NET=ok NCCL_TOPO_FILE=ok CUDA_VISIBLE_DEVICES=unknown NVIDIA_VISIBLE_DEVICES=ok"
echo "== alone against the baseline the uniform job wrote (the prolog with --baseline)"
jq_is "$SCRATCH/baseline.json" '.devices | "\(.gpu_count) \(.gpu_model) \(.rdma_hcas) \(.gpudirect) \(.gpu_mig) \(.gpu_compute_mode) \(.gpu_ecc) \(.nvlink)"' \
  "2 NVIDIA H100 80GB HBM3 2 x MT4129 loaded disabled default enabled 36 of 36"
alone node06 model 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-model-mismatch") | "\(.severity) \(.message)"] | join(";")' \
  "warning node06 has GPU model NVIDIA A100-SXM4-80GB, where baseline $SCRATCH/baseline.json pins GPU model NVIDIA H100 80GB HBM3"
alone node11 peermem 1 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json" --strict
jq_is "$OUT" '[.findings[] | select(.code=="gpudirect-mismatch") | .hosts[0]] | join(",")' node11
# NVML's facts in the prolog: conditions of the host alone, and differences from the baseline.
alone node18 eccerr 1 "${COMMON[@]}"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-ecc-errors-pending") | "\(.severity) \(.hosts[0])"] | join(",")' "error node18"
alone node20 fabric 1 "${COMMON[@]}"
jq_is "$OUT" '[.findings[] | select(.code=="fabric-manager-not-ready") | .hosts[0]] | join(",")' node20
alone node17 ecc 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-ecc-mode-mismatch") | .message] | join(";")' \
  "node17 has ECC disabled, where baseline $SCRATCH/baseline.json pins ECC enabled"
alone node19 nvlink 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" '[.findings[] | select(.code=="nvlink-down") | .found] | join(";")' "30 of 36 NVLink links active"
alone node21 notopo 0 "${COMMON[@]}"
jq_is "$OUT" '[.findings[] | select(.code=="nccl-topo-file-unreadable") | .severity] | join(",")' warning
alone node01 ref 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c))] | length" 0
echo "== the Slurm prolog (denpex-prolog) on stand-in hosts, against the baseline"
# prolog HOST TREE WANT_EXIT [CONF_LINES...]: the prolog as slurmd runs it, in the stand-in host.
prolog() {
  local host=$1 tree=$2 want=$3 rc=0; shift 3
  local conf=$SCRATCH/prolog-$host.conf
  printf '%s\n' "probe = $PROBE" "spool = $SCRATCH/spool" "syslog = no" "timeout = 20" \
    "baseline = $SCRATCH/baseline.json" "$@" >"$conf"
  "$HOST_SH" "$host" "$T/$tree" env SLURM_JOB_ID=42 SLURMD_NODENAME="$host" DENPEX_PROLOG_CONF="$conf" \
    $(nvml_env "$tree") "${COMMON[@]}" "${SETTINGS[@]}" "$PROLOG" >"$conf.out" 2>"$conf.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$conf.out" "$conf.err" >&2; fail "prolog on $host: exit $rc, expected $want"; }
  echo "prolog on $host: exit $rc: $(head -n 1 "$conf.err")"
}
prolog node01 ref 0
prolog node18 eccerr 1
grep -q "gpu-ecc-errors-pending: node18 has 1 GPU with" "$SCRATCH/prolog-node18.conf.err" || fail "the prolog's reason is not the ECC finding"
prolog node20 fabric 1
grep -q "fabric-manager-not-ready: node20 has GPU fabric registration not-started" "$SCRATCH/prolog-node20.conf.err" ||
  fail "the prolog's reason is not the fabric manager finding"
prolog node19 nvlink 0
prolog node19 nvlink 1 "extra_args = --strict"
# The reason is the first warning (another, such as no CUDA driver here, may come first); the
# node's report in the spool has the NVLink finding.
grep -q "node19 has 30 of 36 NVLink links active" "$SCRATCH/spool/node19.txt" ||
  fail "the prolog's report lacks the NVLink finding: $(cat "$SCRATCH/spool/node19.txt")"
jq_is "$SCRATCH/spool/node19.json" '.devices.nvml.gpus[1].nvlink_up' 12

echo "== an image (--root): its device settings are kept and said, devices checked on the nodes"
mkdir -p "$SCRATCH/image/etc"
echo "ID=debian" >"$SCRATCH/image/etc/os-release"
echo '["NCCL_SOCKET_IFNAME=eth0", "NCCL_IB_HCA=mlx5_0"]' >"$SCRATCH/image-env.json"
rc=0
"$PROBE" --root "$SCRATCH/image" --image-env "$SCRATCH/image-env.json" --json "$SCRATCH/image.json" \
  >"$SCRATCH/image.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$SCRATCH/image.txt" >&2; fail "--root exit $rc"; }
jq_is "$SCRATCH/image.json" '.configurations[0].record.devices | "\(.status) \([.settings[] | "\(.variable)=\(.value):\(.status)"] | join(" "))"' \
  "not-probed NCCL_SOCKET_IFNAME=eth0:unknown NCCL_IB_HCA=mlx5_0:unknown"
grep -q "sets NCCL_SOCKET_IFNAME=eth0, NCCL_IB_HCA=mlx5_0 (checked against each node's devices" "$SCRATCH/image.txt" ||
  fail "the image's settings are not said: $(cat "$SCRATCH/image.txt")"
echo "PASS"
