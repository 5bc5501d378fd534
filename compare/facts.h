// The values that rules and baselines compare, read from a record in one place so that a
// baseline written from a group and the judge reading it agree on what "the NCCL version" is.
#pragma once

#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// The NCCL version a record reports: the live version, else the one read from the file's
// literal (static probes), else decoded from version_code. "" when unknown.
std::string nccl_version_of(const NcclInfo& nccl);

// True when NCCL was found (live or read statically); false for missing and unloadable, which
// have their own rules.
bool nccl_found(const NcclInfo& nccl);

// The net plugin as one comparable string: "missing", "disabled", "ok /path (ncclNetPlugin_v8)".
// Two ranks with the same string load the same plugin the same way.
std::string net_plugin_summary(const PluginInfo& plugin);

// "ncclNetPlugin_v7,ncclNetPlugin_v8" or "none": api_versions as one string.
std::string api_versions_text(const std::vector<std::string>& api_versions);

// Compares CUDA versions "12.4" / "13.0" / "12" numerically by major then minor.
// Returns -1, 0 or 1; returns 0 when either does not parse (unknown is never "older").
int compare_cuda_versions(const std::string& a, const std::string& b);

}  // namespace denpex
