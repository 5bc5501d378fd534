// This host's network interfaces as NCCL's socket code sees them: getifaddrs() of the probe's
// network namespace (the job's), each interface with whether it is running and its IPv4/IPv6
// addresses. No file is read, so tests give a host other interfaces with a network namespace.
#pragma once

#include "probe/record.h"

namespace denpex {

// Every interface, sorted by name. Status ok; unknown with `why` (the errno text) when
// getifaddrs fails. Never throws.
InterfaceFacts read_interfaces();

}  // namespace denpex
