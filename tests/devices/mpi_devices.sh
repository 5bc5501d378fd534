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
# usage: mpi_devices.sh PROBE FIXTURES STANDINS SCRATCH_BASE
PROBE=$1 FIXTURES=$2 STANDINS=$3
source "$(dirname "$0")/../integration/lib.sh"
HOST_SH=$(cd "$(dirname "$0")" && pwd)/device_host.sh
new_scratch "$4"
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces with tmpfs over /proc/driver, /sys)"
command -v mpirun >/dev/null || skip "mpirun not installed"
unshare -m --uts --propagation unchanged true 2>/dev/null || skip "unshare -m --uts not permitted here"
T=$SCRATCH/hosts

# tree NAME: a copy of the H100 host, links resolved (a tmpfs /sys/class has no /sys/devices
# behind it), without /sys/class/net (the machine's stays), and NVML's answer for its two GPUs
# (name, compute mode, MIG, lost).
tree() {
  mkdir -p "$T"
  cp -rL "$FIXTURES/h100" "$T/$1"
  rm -rf "$T/$1/sys/class/net" "$T/$1/sys/devices"
  printf 'NVIDIA H100 80GB HBM3\t0\t0\t0\nNVIDIA H100 80GB HBM3\t0\t0\t0\n' >"$T/$1/nvml.txt"
}
# The environment NVML is found in on a host (no nvml.txt: NVML answers "driver not loaded").
nvml_env() { echo "LD_LIBRARY_PATH=$STANDINS/nvml DENPEX_STANDIN_NVML=$T/$1/nvml.txt"; }
gpu() { echo "$T/$1/proc/driver/nvidia/gpus/$2/information"; }
port() { echo "$T/$1/sys/class/infiniband/$2/ports/1/$3"; }

tree ref
tree fewer;    rm -r "$T/fewer/proc/driver/nvidia/gpus/0000:18:00.0"
tree excluded; sed -i 's/^GPU Excluded:\t No/GPU Excluded:\t Yes/' "$(gpu excluded 0000:0a:00.0)" "$(gpu excluded 0000:18:00.0)"
tree model;    sed -i 's/NVIDIA H100 80GB HBM3/NVIDIA A100-SXM4-80GB/' "$(gpu model 0000:0a:00.0)" "$(gpu model 0000:18:00.0)"
tree module;   echo 550.54.15 >"$T/module/sys/module/nvidia/version"
tree hca;      rm -r "$T/hca/sys/class/infiniband/mlx5_1"
tree fw;       for d in mlx5_0 mlx5_1; do echo 28.39.1002 >"$T/fw/sys/class/infiniband/$d/fw_ver"; done
tree port;     echo "1: DOWN" >"$(port port mlx5_0 state)"; echo "3: Disabled" >"$(port port mlx5_0 phys_state)"
tree peermem;  rm -r "$T/peermem/sys/module/nvidia_peermem"
tree nodriver; rm -rf "$T/nodriver/proc/driver/"* "$T/nodriver/sys/module/"nvidia* "$T/nodriver/nvml.txt"
tree mig;      printf 'NVIDIA H100 80GB HBM3\t0\t1\t0\nNVIDIA H100 80GB HBM3\t0\t1\t0\n' >"$T/mig/nvml.txt"
tree mode;     printf 'NVIDIA H100 80GB HBM3\t3\t0\t0\nNVIDIA H100 80GB HBM3\t3\t0\t0\n' >"$T/mode/nvml.txt"
tree lost;     printf 'NVIDIA H100 80GB HBM3\t0\t0\t0\nNVIDIA H100 80GB HBM3\t0\t0\t1\n' >"$T/lost/nvml.txt"
grep -q "GPU Excluded:.*Yes" "$(gpu excluded 0000:0a:00.0)" || fail "the excluded tree was not written"

# ctx HOST TREE [NAME=VALUE...]: one app context of one rank.
CTX=()
ctx() {
  local host=$1 tree=$2; shift 2
  [ ${#CTX[@]} = 0 ] || CTX+=(:)
  CTX+=(-np 1)
  for kv in "$@" $(nvml_env "$tree"); do CTX+=(-x "$kv"); done
  CTX+=("$HOST_SH" "$host" "$T/$tree" "$PROBE" --json "$OUT" "${EXTRA[@]}")
}
run_job() {
  local name=$1 want=$2 rc=0 start
  start=$(date +%s.%N)
  timeout -k 10 180 mpirun "${CTX[@]}" >"$SCRATCH/$name.txt" 2>"$SCRATCH/$name.err" || rc=$?
  echo "job $name: $(echo "$(date +%s.%N) - $start" | bc) s, exit $rc"
  [ "$rc" = "$want" ] || { cat "$SCRATCH/$name.txt" "$SCRATCH/$name.err" >&2; fail "mpirun exit $rc, expected $want"; }
}
DEVICE_CODES='["gpu-mig-mismatch","gpu-compute-mode-mismatch","gpu-lost","gpu-count-short","gpu-count-mismatch","gpu-model-mismatch","gpu-kernel-module-mismatch","rdma-hca-mismatch","rdma-firmware-mismatch","rdma-port-down","gpudirect-mismatch","nccl-socket-ifname-unmatched","nccl-ib-hca-unmatched","cuda-visible-devices-beyond"]'
COMMON=(NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo CUDA_VISIBLE_DEVICES=0,1)

echo "== uniform: four H100 hosts and one without the NVIDIA driver: no device finding, pass"
OUT=$SCRATCH/uniform.json CTX=() EXTRA=(--write-baseline "$SCRATCH/baseline.json")
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
jq -e '[.configurations[] | select(.hosts|index("node05"))][0].record.devices.gpus.why | test("/proc/driver/nvidia")' "$OUT" >/dev/null ||
  fail "node05's GPUs are unknown without saying why"
# Per-host identities do not split the configuration: the four H100 hosts are one.
jq_is "$OUT" '[.configurations[] | select(.hosts | index("node01"))][0].hosts | join(",")' "node01,node02,node03,node04"

echo "== odd hosts: each case's finding names its host and the hosts it differs from"
OUT=$SCRATCH/odd.json CTX=() EXTRA=()
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
run_job odd 1
jq_is "$OUT" '.verdict' reject
# code -> "severity hosts" for every device finding.
got=$(jq -r "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c)) | \"\(.code) \(.severity) \(.hosts|join(\",\"))\"] | sort | join(\"\n\")" "$OUT")
want="cuda-visible-devices-beyond error node13
gpu-compute-mode-mismatch warning node16
gpu-count-mismatch warning node04
gpu-count-short error node05
gpu-kernel-module-mismatch warning node07
gpu-lost error node15
gpu-mig-mismatch error node14
gpu-model-mismatch warning node06
gpudirect-mismatch warning node11
nccl-ib-hca-unmatched warning node10
nccl-socket-ifname-unmatched error node12
rdma-firmware-mismatch warning node09
rdma-hca-mismatch warning node08
rdma-port-down warning node10"
[ "$got" = "$want" ] || { echo "--- got:"; echo "$got"; echo "--- want:"; echo "$want"; fail "device findings differ"; } >&2
# Each names the hosts it differs from, and carries a verify command that is plain words.
jq_is "$OUT" '[.findings[] | select(.code=="gpu-model-mismatch")][0].message' \
  "node06 has GPU model NVIDIA A100-SXM4-80GB, where node[01-05,07-16] have GPU model NVIDIA H100 80GB HBM3"
jq_is "$OUT" '[.findings[] | select(.code=="rdma-port-down")][0].message' \
  "node10 has mlx5_0 port 1 DOWN, where node[01-09,11-16] have mlx5_0 port 1 ACTIVE"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-count-short")][0].message' \
  "node05 has 0 usable GPUs for 1 rank placed on it"
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
  local envs=() args=()
  while [ $# -gt 0 ] && [ "$1" != "$PROBE" ]; do envs+=("$1"); shift; done
  [ $# = 0 ] || { shift; args=("$@"); }
  "$HOST_SH" "$host" "$T/$tree" env $(nvml_env "$tree") "${envs[@]}" "$PROBE" --json "$OUT" "${args[@]}" \
    >"$OUT.txt" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$OUT.txt" >&2; fail "alone on $host: exit $rc, expected $want"; }
}
alone node13 ref 1 CUDA_VISIBLE_DEVICES=0,1,2
jq_is "$OUT" '[.findings[] | select(.code=="cuda-visible-devices-beyond") | .hosts[0]] | join(",")' node13
alone node10 port 0 NCCL_IB_HCA==mlx5_0:1
jq_is "$OUT" '[.findings[] | select(.code=="nccl-ib-hca-unmatched") | .severity] | join(",")' warning
alone node05 nodriver 0 NCCL_IB_HCA=mlx5_0 CUDA_VISIBLE_DEVICES=0 NCCL_SOCKET_IFNAME=lo
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c))] | length" 0
jq_is "$OUT" '[.configurations[0].record.devices.settings[] | "\(.variable)=\(.status)"] | join(" ")' \
  "NCCL_SOCKET_IFNAME=ok NCCL_IB_HCA=ok CUDA_VISIBLE_DEVICES=unknown"
echo "== alone against the baseline the uniform job wrote (the prolog with --baseline)"
jq_is "$SCRATCH/baseline.json" '.devices | "\(.gpu_count) \(.gpu_model) \(.rdma_hcas) \(.gpudirect) \(.gpu_mig) \(.gpu_compute_mode)"' \
  "2 NVIDIA H100 80GB HBM3 2 x MT4129 loaded disabled default"
alone node06 model 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" '[.findings[] | select(.code=="gpu-model-mismatch") | "\(.severity) \(.message)"] | join(";")' \
  "warning node06 has GPU model NVIDIA A100-SXM4-80GB, where baseline $SCRATCH/baseline.json pins GPU model NVIDIA H100 80GB HBM3"
alone node11 peermem 1 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json" --strict
jq_is "$OUT" '[.findings[] | select(.code=="gpudirect-mismatch") | .hosts[0]] | join(",")' node11
alone node01 ref 0 "${COMMON[@]}" "$PROBE" --baseline "$SCRATCH/baseline.json"
jq_is "$OUT" "[.findings[] | select(.code as \$c | $DEVICE_CODES | index(\$c))] | length" 0
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
