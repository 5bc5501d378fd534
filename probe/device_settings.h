// The settings that name devices, checked against this host's facts with the rules NCCL and
// CUDA apply to them: NCCL_SOCKET_IFNAME (interfaces that are running and have an address, as
// NCCL's socket code takes them), NCCL_IB_HCA (ACTIVE ports of InfiniBand or Ethernet link layer,
// as NCCL's IB transport takes them) and CUDA_VISIBLE_DEVICES (indices and UUID prefixes against
// the GPUs the driver lists, excluded ones left out). The environment wins over nccl.conf, as in
// NCCL.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// One check per setting that is in force (unset ones give none; NCCL_IB_HCA is not in force with
// NCCL_IB_DISABLE set and not 0, or NCCL_NET=Socket). A check whose facts are not
// ok is status unknown with why; nothing is guessed. Never throws.
std::vector<DeviceSettingCheck> check_device_settings(
    const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& nccl_conf, const DevicesInfo& devices);

// Each one alone, for tests: `value` as set.
DeviceSettingCheck check_socket_ifname(const std::string& value, const std::string& family,
                                       const InterfaceFacts& facts);
DeviceSettingCheck check_ib_hca(const std::string& value, const RdmaFacts& facts);
DeviceSettingCheck check_cuda_visible_devices(const std::string& value, const GpuFacts& facts);

}  // namespace denpex
