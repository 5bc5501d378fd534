// Cross-host rules over the device facts of the records (probe/record.h DevicesInfo): GPU count
// against the ranks placed on a host, and hosts that differ from the others in GPU count, GPU
// model, MIG, compute mode, ECC mode, NVLink links active, kernel module version, RDMA devices,
// their firmware, their ports' states, and the GPUDirect peer-memory module. Every vote is by
// hosts (a host with 8 ranks is one machine), with the project's strict majority (vote.h).
// GPUDirect is compared among hosts with RDMA devices and known GPUs. Conditions of a host
// alone need no vote: GPUs lost, uncorrected ECC errors or retirements pending, a fabric
// registration not completed. A host whose fact is unknown or not probed takes no part, so it
// never causes a finding; a uniform cluster gives none.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/baseline.h"

#include "compare/finding.h"
#include "compare/group.h"
#include "compare/shell_command.h"

namespace denpex {

// Appends the device findings for `groups` (normalized, no empty groups) to `out`, and with a
// baseline those of every group whose fact differs from the one it pins (Baseline::devices; a
// host alone in the Slurm prolog is judged this way). `out` may already hold the other rules'
// findings: a kernel module finding that repeats a cuda-driver-version-mismatch on the same
// hosts is not added. Never fails.
void device_rules(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                  std::vector<Finding>* out);

// The device facts of `group`'s record as a baseline pins them (key -> value: "gpu_count",
// "gpu_model", "rdma_hcas", "rdma_firmware:<model>", "rdma_port:<device>:<port>",
// "gpudirect", "gpu_kernel_module", ...); facts that are unknown there are left out, so never
// pinned.
std::map<std::string, std::string> device_pins(const ConfigGroup& group);

// The verify line of a device finding: the gate again on `hosts` (at most 16 named, images
// left out), `per_host` ranks on each, with `exported` variables passed on as the caller has
// them (mpirun -x NAME: the value is never written into the line). Host names are words given
// to compare/shell_command.h; one it cannot quote safely gives constant prose, argv empty.
ShellCommand device_verify(std::vector<std::string> hosts, std::size_t per_host,
                           const std::vector<std::string>& exported = {});

}  // namespace denpex
