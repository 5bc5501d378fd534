#!/usr/bin/env bash
# Every case of docs/gate.md's device table in the Slurm prolog: launch/slurm/denpex-prolog as
# slurmd runs it (alone, no launcher), on stand-in hosts (device_host.sh: mount and UTS
# namespaces, the device trees of trees.sh), against a baseline the probe wrote alone on the
# reference host. Each odd host's report in the spool names the case's finding on that host, and
# the prolog drains it for an error (exit 1), not for a warning (exit 0, as without --strict);
# the reference and a host without the driver pass.
# usage: prolog_devices.sh PROBE FIXTURES STANDINS SCRATCH_BASE PROLOG
PROBE=$1 FIXTURES=$2 STANDINS=$3 PROLOG=$5
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../integration/lib.sh"
HOST_SH=$HERE/device_host.sh
new_scratch "$4"
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces with tmpfs over /proc/driver, /sys)"
command -v jq >/dev/null || skip "jq is not installed (the prolog reads its reason with it)"
unshare -m --uts --propagation unchanged true 2>/dev/null || skip "unshare -m --uts not permitted here"
T=$SCRATCH/hosts
source "$HERE/trees.sh"
make_trees
tree hcamodel; echo MT4123 >"$T/hcamodel/sys/class/infiniband/mlx5_1/hca_type"

# The settings every host has, as in the MPI job (mpi_devices.sh); `lo` is up everywhere.
COMMON=(NCCL_IB_HCA=mlx5_0 NCCL_SOCKET_IFNAME=lo CUDA_VISIBLE_DEVICES=0,1 NCCL_NET=IB
  NCCL_TOPO_FILE=/proc/driver/topo.xml NVIDIA_VISIBLE_DEVICES=all)
# settings_of [NAME=VALUE...] [-NAME...]: COMMON, a NAME=VALUE replacing the common one, -NAME
# dropping it.
settings_of() {
  local kv
  SETTINGS=()
  for kv in "${COMMON[@]}"; do
    [[ " $* " == *" ${kv%%=*}="* || " $* " == *" -${kv%%=*} "* ]] || SETTINGS+=("$kv")
  done
  for kv in "$@"; do [[ "$kv" == -* ]] || SETTINGS+=("$kv"); done
}

echo "== the baseline: the probe alone on the reference host"
settings_of
"$HOST_SH" node01 "$T/ref" env $(nvml_env ref) "${SETTINGS[@]}" \
  "$PROBE" --write-baseline "$SCRATCH/baseline.json" >"$SCRATCH/baseline.txt" 2>&1 ||
  { cat "$SCRATCH/baseline.txt" >&2; fail "the reference host does not pass alone"; }
jq_is "$SCRATCH/baseline.json" '.devices | "\(.gpu_count) \(.rdma_hcas) \(.gpudirect) \(.gpu_ecc) \(.nvlink)"' \
  "2 2 x MT4129 loaded enabled 36 of 36"

# prolog HOST TREE WANT_EXIT [NAME=VALUE...] [-NAME...]: the prolog in the stand-in host.
prolog() {
  local host=$1 tree=$2 want=$3 rc=0; shift 3
  local conf=$SCRATCH/prolog-$host.conf
  settings_of "$@"
  printf '%s\n' "probe = $PROBE" "spool = $SCRATCH/spool" "syslog = no" "timeout = 20" \
    "baseline = $SCRATCH/baseline.json" >"$conf"
  "$HOST_SH" "$host" "$T/$tree" env SLURM_JOB_ID=42 SLURMD_NODENAME="$host" DENPEX_PROLOG_CONF="$conf" \
    $(nvml_env "$tree") "${SETTINGS[@]}" "$PROLOG" >"$conf.out" 2>"$conf.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$conf.out" "$conf.err" "$SCRATCH/spool/$host.txt" >&2; fail "prolog on $host: exit $rc, expected $want"; }
}
# case_of HOST TREE WANT_EXIT CODES [settings...]: the prolog exits WANT_EXIT on HOST, and its
# report names each of CODES (comma-separated) on it.
case_of() {
  local host=$1 tree=$2 want=$3 codes=$4 code; shift 4
  prolog "$host" "$tree" "$want" "$@"
  for code in ${codes//,/ }; do
    grep -q -- "$code" "$SCRATCH/spool/$host.txt" ||
      fail "the prolog on $host ($tree) has no $code: $(cat "$SCRATCH/spool/$host.txt")"
    grep -A3 -- "$code" "$SCRATCH/spool/$host.txt" | grep -q "$host" ||
      fail "the prolog's $code does not name $host: $(cat "$SCRATCH/spool/$host.txt")"
  done
  printf '%-7s %-9s %s\n' "$host" "$tree" "$(head -n 1 "$SCRATCH/prolog-$host.conf.err")"
}

echo "== the reference and a host without the driver pass"
start=$(date +%s.%N)
prolog node01 ref 0
prolog node02 nodriver 0 -CUDA_VISIBLE_DEVICES
echo "== each odd host: the case's finding on it"
cases=(
  "node03 excluded 1 gpu-count-short -CUDA_VISIBLE_DEVICES"
  "node04 fewer 0 gpu-count-mismatch CUDA_VISIBLE_DEVICES=0"
  "node05 model 0 gpu-model-mismatch"
  "node06 mig 1 gpu-mig-mismatch"
  "node07 mode 0 gpu-compute-mode-mismatch"
  "node08 lost 1 gpu-lost"
  "node09 module 0 gpu-kernel-module-mismatch"
  "node10 hca 0 rdma-hca-mismatch"
  "node11 hcamodel 0 rdma-hca-mismatch"
  "node12 fw 0 rdma-firmware-mismatch"
  "node13 port 1 rdma-port-down,nccl-ib-hca-unmatched,nccl-net-unavailable"
  "node14 peermem 0 gpudirect-mismatch"
  "node15 ref 1 nccl-socket-ifname-unmatched NCCL_SOCKET_IFNAME=eth9"
  "node16 ref 1 cuda-visible-devices-beyond CUDA_VISIBLE_DEVICES=0,1,2"
  "node18 ecc 0 gpu-ecc-mode-mismatch"
  "node19 eccerr 1 gpu-ecc-errors-pending"
  "node20 nvlink 0 nvlink-down"
  "node21 fabric 1 fabric-manager-not-ready"
  "node22 ref 1 container-visible-devices-unmatched container=podman NVIDIA_VISIBLE_DEVICES=void"
  "node23 notopo 0 nccl-topo-file-unreadable"
)
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086  # each case is words
  set -- $c
  case_of "$@"
done
echo "prologs: $(echo "$(date +%s.%N) - $start" | bc) s for $((${#cases[@]} + 2)) hosts"
echo "PASS"
