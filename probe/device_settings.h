// The settings that name devices, checked against this host's facts with the rules NCCL, CUDA
// and the NVIDIA container runtime apply to them: NCCL_SOCKET_IFNAME (interfaces that are
// running and have an address, as NCCL's socket code takes them), NCCL_IB_HCA (ACTIVE ports of
// InfiniBand or Ethernet link layer, as NCCL's IB transport takes them), NCCL_NET (NCCL's own
// networks IB and Socket, or a net plugin's), NCCL_TOPO_FILE (a file NCCL can open),
// CUDA_VISIBLE_DEVICES (indices and UUID prefixes against the GPUs the driver lists, excluded
// ones left out) and NVIDIA_VISIBLE_DEVICES (all, none, void, indices, UUIDs). The environment
// wins over nccl.conf, as in NCCL.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// What the checks need to know of the process besides its devices.
struct SettingHost {
  bool container = false;   // the probe runs in a container (record.h RankRecord::container)
  bool net_plugin = false;  // NCCL would load a net plugin (its network names are not read)
};

// One check per setting that is in force (unset ones give none; NCCL_IB_HCA is not in force with
// NCCL_IB_DISABLE set and not 0, or NCCL_NET=Socket). A check whose facts are not ok is status
// unknown with why; nothing is guessed. Never throws.
std::vector<DeviceSettingCheck> check_device_settings(
    const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& nccl_conf, const DevicesInfo& devices,
    const SettingHost& host = {});

// Each one alone, for tests: `value` as set.
DeviceSettingCheck check_socket_ifname(const std::string& value, const std::string& family,
                                       const InterfaceFacts& facts);
DeviceSettingCheck check_ib_hca(const std::string& value, const RdmaFacts& facts);
DeviceSettingCheck check_cuda_visible_devices(const std::string& value, const GpuFacts& facts);
// `ib_hca`: NCCL_IB_HCA's value, "" when unset; `ib_disabled`: NCCL_IB_DISABLE is set and not 0.
DeviceSettingCheck check_nccl_net(const std::string& value, const RdmaFacts& rdma,
                                  const std::string& ib_hca, bool ib_disabled, bool net_plugin);
// `live`: the file system is the node's (not an image under --root).
DeviceSettingCheck check_topo_file(const std::string& value, bool live);
DeviceSettingCheck check_nvidia_visible_devices(const std::string& value, const GpuFacts& facts,
                                                bool container);

}  // namespace denpex
