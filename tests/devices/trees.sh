# The stand-in hosts of the device tests (sourced by mpi_devices.sh and torchrun_devices.sh):
# directory trees of the driver's and the kernel's device files, from tests/fixtures/devices/h100,
# each with the NVML stand-in's answer (tests/standins/fake_nvml.c) in nvml.txt.
# Needs T (where the trees go), FIXTURES and STANDINS.
# tree NAME: a copy of the H100 host, links resolved (a tmpfs /sys/class has no /sys/devices
# behind it), without /sys/class/net (the machine's stays), NVML's answer for its two GPUs
# (nvml_gpus: name, compute mode, MIG, lost, then bus id, ECC on with no error, no row pending
# remapping, 18 of 18 NVLink links up, the fabric registered: an NVSwitch H100 host in health),
# and an NCCL topology file where NCCL_TOPO_FILE names it.
NVML_H100='NVIDIA H100 80GB HBM3\t0\t0\t0'
nvml_gpus() {  # nvml_gpus TREE KEYS_OF_GPU0 KEYS_OF_GPU1
  printf "$NVML_H100\tbus=00000000:0A:00.0\t%b\n$NVML_H100\tbus=00000000:18:00.0\t%b\n" "$2" "$3" >"$T/$1/nvml.txt"
}
HEALTHY='ecc=1\tecc_unc=0\tremap=0\tnvlink=18/18\tfabric=3/0'
tree() {
  mkdir -p "$T"
  cp -rL "$FIXTURES/h100" "$T/$1"
  rm -rf "$T/$1/sys/class/net" "$T/$1/sys/devices"
  nvml_gpus "$1" "$HEALTHY" "$HEALTHY"
  echo '<system version="1"></system>' >"$T/$1/proc/driver/topo.xml"
}
# The environment NVML is found in on a host (no nvml.txt: NVML answers "driver not loaded").
nvml_env() { echo "LD_LIBRARY_PATH=$STANDINS/nvml DENPEX_STANDIN_NVML=$T/$1/nvml.txt"; }
gpu() { echo "$T/$1/proc/driver/nvidia/gpus/$2/information"; }
port() { echo "$T/$1/sys/class/infiniband/$2/ports/1/$3"; }

# make_trees: ref and one odd tree per case.
make_trees() {
  tree ref
  tree fewer;    rm -r "$T/fewer/proc/driver/nvidia/gpus/0000:18:00.0"
  tree excluded; sed -i 's/^GPU Excluded:\t No/GPU Excluded:\t Yes/' "$(gpu excluded 0000:0a:00.0)" "$(gpu excluded 0000:18:00.0)"
  tree model;    sed -i 's/NVIDIA H100 80GB HBM3/NVIDIA A100-SXM4-80GB/' "$(gpu model 0000:0a:00.0)" "$(gpu model 0000:18:00.0)"
  tree module;   echo 550.54.15 >"$T/module/sys/module/nvidia/version"
  tree hca;      rm -r "$T/hca/sys/class/infiniband/mlx5_1"
  tree fw;       for d in mlx5_0 mlx5_1; do echo 28.39.1002 >"$T/fw/sys/class/infiniband/$d/fw_ver"; done
  tree port;     echo "1: DOWN" >"$(port port mlx5_0 state)"; echo "3: Disabled" >"$(port port mlx5_0 phys_state)"
  tree peermem;  rm -r "$T/peermem/sys/module/nvidia_peermem"
  tree nodriver; rm -rf "$T/nodriver/proc/driver/nvidia"* "$T/nodriver/sys/module/"nvidia* "$T/nodriver/nvml.txt"
  tree mig;      printf 'NVIDIA H100 80GB HBM3\t0\t1\t0\nNVIDIA H100 80GB HBM3\t0\t1\t0\n' >"$T/mig/nvml.txt"
  tree mode;     printf 'NVIDIA H100 80GB HBM3\t3\t0\t0\nNVIDIA H100 80GB HBM3\t3\t0\t0\n' >"$T/mode/nvml.txt"
  tree lost;     printf 'NVIDIA H100 80GB HBM3\t0\t0\t0\nNVIDIA H100 80GB HBM3\t0\t0\t1\n' >"$T/lost/nvml.txt"
  tree ecc;      nvml_gpus ecc "${HEALTHY/ecc=1/ecc=0}" "${HEALTHY/ecc=1/ecc=0}"
  tree eccerr;   nvml_gpus eccerr "$HEALTHY" 'ecc=1\tecc_unc=2\tremap=1\tnvlink=18/18\tfabric=3/0'
  tree nvlink;   nvml_gpus nvlink "$HEALTHY" "${HEALTHY/nvlink=18\/18/nvlink=12/18}"
  tree fabric;   nvml_gpus fabric "${HEALTHY/fabric=3\/0/fabric=1}" "${HEALTHY/fabric=3\/0/fabric=1}"
  tree notopo;   rm "$T/notopo/proc/driver/topo.xml"
}
