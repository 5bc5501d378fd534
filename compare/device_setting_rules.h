// Findings from the settings each rank checked against its own host's devices
// (probe/record.h DeviceSettingCheck): NCCL_SOCKET_IFNAME that selects no usable interface
// (error: NCCL's bootstrap fails), NCCL_IB_HCA that selects no HCA or only ports that are down
// (warning: NCCL falls back to sockets, the job runs slower), CUDA_VISIBLE_DEVICES or
// NVIDIA_VISIBLE_DEVICES naming a GPU the host does not have or none (error), NCCL_NET naming a
// network the host does not have (error: NCCL's init fails), NCCL_TOPO_FILE that cannot be read
// (warning: NCCL ignores it). Ranks whose facts were unknown are never judged.
#pragma once

#include <vector>

#include "compare/finding.h"
#include "compare/group.h"

namespace denpex {

// Appends one finding per setting and failure (groups failing alike share it), naming the hosts
// where it fails and those where the same setting selects devices. Never fails.
void device_setting_rules(const std::vector<ConfigGroup>& groups, std::vector<Finding>* out);

}  // namespace denpex
