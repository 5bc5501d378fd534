#!/usr/bin/env bash
# The device checks end to end under the real torchrun (torch.distributed.run of the real torch
# 2.7.1 wheels, the c10d rendezvous, no MPI): one job of three elastic agents, each a stand-in
# host in its own network namespace (joined by veth pairs to a bridge in a fourth) and, through
# device_host.sh, its own mount and UTS namespaces with the device trees of trees.sh:
#   node01  ref     eth0   a healthy H100 host
#   node02  nvlink  eth0   12 of a GPU's 18 NVLink links down          -> nvlink-down
#   node03  eccerr  ens5   a GPU with uncorrected ECC errors pending   -> gpu-ecc-errors-pending
# Every host sets NCCL_SOCKET_IFNAME=eth0, which node03's interfaces do not match (its only
# interface for the job is ens5): nccl-socket-ifname-unmatched on node03 only, and no
# nccl-env-mismatch (the value is the same everywhere).
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
tree nvlink; nvml_gpus nvlink "$HEALTHY" "${HEALTHY/nvlink=18\/18/nvlink=12/18}"
tree eccerr; nvml_gpus eccerr "$HEALTHY" 'ecc=1\tecc_unc=2\tremap=1\tnvlink=18/18\tfabric=3/0'

# The network: namespaces named after this process (removed on exit), 10.77.0.N/24 on host N.
NS=dpx$$
cleanup() { for n in sw h1 h2 h3; do ip netns del "$NS-$n" 2>/dev/null || true; done; }
trap cleanup EXIT
ip netns add "$NS-sw" || skip "ip netns add is not permitted here"
ip -n "$NS-sw" link add name br0 type bridge
ip -n "$NS-sw" link set br0 up
IFNAMES=(eth0 eth0 ens5)
for i in 1 2 3; do
  ip netns add "$NS-h$i"
  ip -n "$NS-sw" link add name "p$i" type veth peer name "v$i"
  ip -n "$NS-sw" link set "v$i" netns "$NS-h$i"
  ip -n "$NS-sw" link set "p$i" master br0 up
  ip -n "$NS-h$i" link set "v$i" name "${IFNAMES[i - 1]}"
  ip -n "$NS-h$i" addr add "10.77.0.$i/24" dev "${IFNAMES[i - 1]}"
  ip -n "$NS-h$i" link set "${IFNAMES[i - 1]}" up
  ip -n "$NS-h$i" link set lo up
done
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# agent N TREE: one torchrun agent of the job, in host N's namespaces. node01 serves the
# rendezvous store: torch would not tell that 10.77.0.1 is its own address (the host names
# resolve nowhere), so it is told with is_host.
agent() {
  local n=$1 tree=$2 host=false
  [ "$n" != 1 ] || host=true
  ip netns exec "$NS-h$n" "$HOST_SH" "node0$n" "$T/$tree" \
    env $(nvml_env "$tree") NCCL_SOCKET_IFNAME=eth0 \
    timeout -k 5 150 python3 -m torch.distributed.run --nnodes 3 --nproc-per-node 1 \
    --rdzv-backend c10d --rdzv-endpoint "10.77.0.1:$port" --rdzv-id "devices$port" \
    --rdzv-conf "is_host=$host" --local-addr "10.77.0.$n" --max-restarts 0 --log-dir "$SCRATCH/agentlogs$n" \
    --no-python "$PROBE" --color never --timeout 30 --json "$SCRATCH/report.json" \
    >"$SCRATCH/agent$n.log" 2>&1
}
echo "== one torchrun job, three hosts: each odd host's finding on it"
start=$(date +%s.%N)
pids=() rcs=()
agent 1 ref & pids+=($!)
agent 2 nvlink & pids+=($!)
agent 3 eccerr & pids+=($!)
for p in "${pids[@]}"; do rc=0; wait "$p" || rc=$?; rcs+=("$rc"); done
echo "job torchrun: $(echo "$(date +%s.%N) - $start" | bc) s, agents exit ${rcs[*]}"
[ -s "$SCRATCH/report.json" ] || { tail -n 20 "$SCRATCH"/agent*.log >&2; fail "no cluster report"; }
jq_is "$SCRATCH/report.json" '"\(.mode) \(.verdict) \(.nranks) \(.nhosts)"' "torchrun reject 3 3"
# Rank 0 exits 1 for a reject, and its agent with it.
[[ " ${rcs[*]} " == *" 1 "* ]] || fail "no agent exited 1 for a reject: ${rcs[*]}"
got=$(jq -r '[.findings[] | select(.code | test("^(gpu|nvlink|fabric|rdma|gpudirect|nccl-socket|nccl-ib|nccl-net|nccl-topo|nccl-env|cuda-visible|nvidia-visible)")) | "\(.code) \(.severity) \(.hosts | join(","))"] | sort | join("\n")' "$SCRATCH/report.json")
want="gpu-ecc-errors-pending error node03
nccl-socket-ifname-unmatched error node03
nvlink-down warning node02"
[ "$got" = "$want" ] || { echo "--- got:"; echo "$got"; echo "--- want:"; echo "$want"; fail "device findings differ"; } >&2
jq_is "$SCRATCH/report.json" '[.findings[] | select(.code=="nccl-socket-ifname-unmatched")][0].message' \
  "rank $(jq -r '[.findings[] | select(.code=="nccl-socket-ifname-unmatched")][0].ranks[0]' "$SCRATCH/report.json") on node03: NCCL_SOCKET_IFNAME=eth0 selects no interface on this host: NCCL's bootstrap finds no socket interface, where it selects devices on node[01-02]"
echo "PASS"
