#!/usr/bin/env bash
# The device checks end to end under the real torchrun (torch.distributed.run of the real torch
# 2.7.1 wheels, the c10d rendezvous, no MPI): one job of five elastic agents, each a stand-in
# host in its own network namespace (joined by veth pairs to a bridge in a sixth) and, through
# device_host.sh, its own mount and UTS namespaces with the device trees of trees.sh:
#   node01  ref       eth0  a healthy H100 host: the reference, named in no finding
#   node02  odd2      eth0  another GPU model, kernel module, mlx5_0 port down (mlx5_1's is down
#                           on every host: NCCL_IB_HCA=mlx5_0 and NCCL_NET=IB have no port left),
#                           no topology file; NVML: MIG on, GPU 0 lost, 12 of GPU 1's 18 NVLink
#                           links down, the fabric not registered; a container whose
#                           NVIDIA_VISIBLE_DEVICES is void
#   node03  odd3      ens5  one GPU excluded, no peer-memory module, other mlx5_1 firmware; NVML:
#                           ECC off and errors pending on a GPU, exclusive-process mode
#   node04  short     eth0  both GPUs excluded (none usable for its rank; NVML lists none, as it
#                           lists no excluded GPU), mlx5_1 another HCA model (MT4123)
#   node05  nodriver  eth0  no NVIDIA driver: its GPU facts unknown, named in no finding
# node04 is a host of its own: a host short of GPUs leaves the GPU count vote, and among three
# hosts the two left (node01's two GPUs, node03's one) would tie, so gpu-count-mismatch would
# name no odd host; among the four hosts node03 meets a majority.
# Every host sets NCCL_SOCKET_IFNAME=eth0, which node03's interfaces do not match (its only
# interface for the job is ens5), and CUDA_VISIBLE_DEVICES=0,1 (but node04, whose GPUs are all
# excluded: that finding is node03's): each fails on node03 only.
# Each case's finding names its odd host, as under mpirun (mpi_devices.sh).
# usage: torchrun_devices.sh PROBE FIXTURES STANDINS SCRATCH_BASE
PROBE=$1 FIXTURES=$2 STANDINS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../integration/lib.sh"
# shellcheck source=tests/real/paths.sh
source "$HERE/../real/paths.sh"
HOST_SH=$HERE/device_host.sh
new_scratch "$4"
[ "$(id -u)" = 0 ] || skip "needs root (network, mount and UTS namespaces)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
unshare -m --uts --propagation unchanged true 2>/dev/null || skip "unshare -m --uts not permitted here"
bash "$HERE/../torchrun/torch_env.sh" 2.7.1 ||
  skip "the torch 2.7.1 wheels could not be fetched into $WHEEL_CACHE (tests/torchrun/torch_env.sh)"
export PYTHONPATH=$WHEEL_TREES/env/torch-2.7.1
T=$SCRATCH/hosts
source "$HERE/trees.sh"
tree ref
tree odd2
sed -i 's/NVIDIA H100 80GB HBM3/NVIDIA A100-SXM4-80GB/' "$(gpu odd2 0000:0a:00.0)" "$(gpu odd2 0000:18:00.0)"
echo 550.54.15 >"$T/odd2/sys/module/nvidia/version"
echo "1: DOWN" >"$(port odd2 mlx5_0 state)"
rm "$T/odd2/proc/driver/topo.xml"
printf 'NVIDIA H100 80GB HBM3\t0\t1\t1\tbus=00000000:0A:00.0\tecc=1\tecc_unc=0\tremap=0\tnvlink=18/18\tfabric=1
NVIDIA H100 80GB HBM3\t0\t1\t0\tbus=00000000:18:00.0\tecc=1\tecc_unc=0\tremap=0\tnvlink=12/18\tfabric=1\n' >"$T/odd2/nvml.txt"
tree odd3
sed -i 's/^GPU Excluded:\t No/GPU Excluded:\t Yes/' "$(gpu odd3 0000:18:00.0)"
rm -r "$T/odd3/sys/module/nvidia_peermem"
echo 28.39.1002 >"$T/odd3/sys/class/infiniband/mlx5_1/fw_ver"
printf 'NVIDIA H100 80GB HBM3\t3\t0\t0\tbus=00000000:0A:00.0\tecc=0\tecc_unc=2\tremap=1\tnvlink=18/18\tfabric=3/0
NVIDIA H100 80GB HBM3\t3\t0\t0\tbus=00000000:18:00.0\tecc=1\tecc_unc=0\tremap=0\tnvlink=18/18\tfabric=3/0\n' >"$T/odd3/nvml.txt"

tree short
sed -i 's/^GPU Excluded:\t No/GPU Excluded:\t Yes/' "$(gpu short 0000:0a:00.0)" "$(gpu short 0000:18:00.0)"
: >"$T/short/nvml.txt"
echo MT4123 >"$T/short/sys/class/infiniband/mlx5_1/hca_type"
tree nodriver
rm -rf "$T/nodriver/proc/driver/nvidia"* "$T/nodriver/sys/module/"nvidia* "$T/nodriver/nvml.txt"

# The network: namespaces named after this process (removed on exit), 10.77.0.N/24 on host N.
NS=dpx$$
cleanup() { for n in sw h1 h2 h3 h4 h5; do ip netns del "$NS-$n" 2>/dev/null || true; done; }
trap cleanup EXIT
ip netns add "$NS-sw" || skip "ip netns add is not permitted here"
nsenter --net="/run/netns/$NS-sw" ip link add name br0 type bridge
nsenter --net="/run/netns/$NS-sw" ip link set br0 up
IFNAMES=(eth0 eth0 ens5 eth0 eth0)
for i in 1 2 3 4 5; do
  ip netns add "$NS-h$i"
  nsenter --net="/run/netns/$NS-sw" ip link add name "p$i" type veth peer name "v$i"
  nsenter --net="/run/netns/$NS-sw" ip link set "v$i" netns "$NS-h$i"
  nsenter --net="/run/netns/$NS-sw" ip link set "p$i" master br0 up
  nsenter --net="/run/netns/$NS-h$i" ip link set "v$i" name "${IFNAMES[i - 1]}"
  nsenter --net="/run/netns/$NS-h$i" ip addr add "10.77.0.$i/24" dev "${IFNAMES[i - 1]}"
  nsenter --net="/run/netns/$NS-h$i" ip link set "${IFNAMES[i - 1]}" up
  nsenter --net="/run/netns/$NS-h$i" ip link set lo up
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# agent N TREE [NAME=VALUE...] [-NAME...]: one torchrun agent of the job, in host N's namespaces,
# with the settings every host has (COMMON), the ones given (a NAME=VALUE replaces the common
# one) and without those named -NAME. node01 serves the rendezvous store: torch would not tell
# that 10.77.0.1 is its own address (the host names resolve nowhere), so it is told with is_host.
COMMON=(NCCL_SOCKET_IFNAME=eth0 NCCL_IB_HCA=mlx5_0 NCCL_NET=IB CUDA_VISIBLE_DEVICES=0,1
  NCCL_TOPO_FILE=/proc/driver/topo.xml NVIDIA_VISIBLE_DEVICES=all)
agent() {
  local n=$1 tree=$2 host=false envs=() kv
  shift 2
  [ "$n" != 1 ] || host=true
  for kv in "${COMMON[@]}"; do
    [[ " $* " == *" ${kv%%=*}="* || " $* " == *" -${kv%%=*} "* ]] || envs+=("$kv")
  done
  for kv in "$@"; do [[ "$kv" == -* ]] || envs+=("$kv"); done
  # nsenter, not `ip netns exec`: that remounts / as a slave, which fails in a chroot (the fresh
  # root of CI) where / is no mount point; the probe reads interfaces by netlink, not /sys.
  nsenter --net="/run/netns/$NS-h$n" "$HOST_SH" "node0$n" "$T/$tree" \
    env $(nvml_env "$tree") "${envs[@]}" \
    timeout -k 5 150 python3 -m torch.distributed.run --nnodes 5 --nproc-per-node 1 \
    --rdzv-backend c10d --rdzv-endpoint "10.77.0.1:$port" --rdzv-id "devices$port" \
    --rdzv-conf "is_host=$host" --local-addr "10.77.0.$n" --max-restarts 0 --log-dir "$SCRATCH/agentlogs$n" \
    --no-python "$PROBE" --color never --timeout 30 --json "$SCRATCH/report.json" \
    >"$SCRATCH/agent$n.log" 2>&1
}
echo "== one torchrun job, five hosts: each odd host's finding on it"
start=$(date +%s.%N)
pids=() rcs=()
agent 1 ref & pids+=($!)
agent 2 odd2 container=podman NVIDIA_VISIBLE_DEVICES=void & pids+=($!)
agent 3 odd3 & pids+=($!)
agent 4 short -CUDA_VISIBLE_DEVICES & pids+=($!)
agent 5 nodriver & pids+=($!)
for p in "${pids[@]}"; do rc=0; wait "$p" || rc=$?; rcs+=("$rc"); done
echo "job torchrun: $(echo "$(date +%s.%N) - $start" | bc) s, agents exit ${rcs[*]}"
[ -s "$SCRATCH/report.json" ] || { tail -n 20 "$SCRATCH"/agent*.log >&2; fail "no cluster report"; }
jq_is "$SCRATCH/report.json" '"\(.mode) \(.verdict) \(.nranks) \(.nhosts)"' "torchrun reject 5 5"
# Rank 0 exits 1 for a reject, and its agent with it.
[[ " ${rcs[*]} " == *" 1 "* ]] || fail "no agent exited 1 for a reject: ${rcs[*]}"
got=$(jq -r '[.findings[] | select(.code | test("^(gpu|nvlink|fabric|rdma|gpudirect|nccl-socket|nccl-ib|nccl-net|nccl-topo|nccl-env|cuda-visible|container-visible)")) | "\(.code) \(.severity) \(.hosts | join(","))"] | sort | join("\n")' "$SCRATCH/report.json")
want="container-visible-devices-unmatched error node02
cuda-visible-devices-beyond error node03
fabric-manager-not-ready error node02
gpu-compute-mode-mismatch warning node03
gpu-count-mismatch warning node03
gpu-count-short error node04
gpu-ecc-errors-pending error node03
gpu-ecc-mode-mismatch warning node03
gpu-kernel-module-mismatch warning node02
gpu-lost error node02
gpu-mig-mismatch error node02
gpu-model-mismatch warning node02
gpudirect-mismatch warning node03
nccl-ib-hca-unmatched warning node02
nccl-net-unavailable error node02
nccl-socket-ifname-unmatched error node03
nccl-topo-file-unreadable warning node02
nvlink-down warning node02
rdma-firmware-mismatch warning node03
rdma-hca-mismatch warning node04
rdma-port-down warning node02"
[ "$got" = "$want" ] || { echo "--- got:"; echo "$got"; echo "--- want:"; echo "$want"; fail "device findings differ"; } >&2
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="nccl-socket-ifname-unmatched")][0].message' \
  "rank $(jq -r '[.findings[] | select(.code=="nccl-socket-ifname-unmatched")][0].ranks[0]' "$SCRATCH/report.json") on node03: NCCL_SOCKET_IFNAME=eth0 selects no interface on this host: NCCL's bootstrap finds no socket interface, where it selects devices on node[01-02,04-05]"
# The cases the MPI job had alone: each message names its odd host and those it differs from.
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="gpu-count-short")][0].message' \
  "node04 has 0 usable GPUs for 1 rank placed on it"
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="gpu-lost")][0].message' \
  "node02 has 1 GPU lost (NVML: GPU is lost)"
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="rdma-hca-mismatch")][0].message' \
  "node04 has 1 x MT4123, 1 x MT4129, where node[01-03,05] have 2 x MT4129"
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="nccl-ib-hca-unmatched")][0].message | sub("^rank [0-9]+ "; "")' \
  "on node02: NCCL_IB_HCA=mlx5_0 selects only ports that are not ACTIVE here: NCCL finds no IB device and falls back to sockets, where it selects devices on node[01,03-05]"
# The host without the driver: its facts unknown, with why, and no finding (the list above).
jq_is "$SCRATCH/report.json" '[.configurations[] | select(.hosts|index("node05")) | .record.devices | "\(.gpus.status) \(.nvml.status) \(.nvml.why)"][0]' \
  "unknown unknown nvmlInit_v2: Driver Not Loaded (9)"
echo "PASS"
