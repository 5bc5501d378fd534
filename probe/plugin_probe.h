// The NCCL plugins (net, tuner, profiler) NCCL would load, found by NCCL's own naming rules and
// read without loading: the plugin API versions are in the exported symbol names
// (ncclNetPlugin_v8, ncclCollNetPlugin_v8, ncclTunerPlugin_v3, ncclProfiler_v2).
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

enum class PluginKind { net, tuner, profiler };

// NCCL's rule (src/plugin/plugin_open.cc): the variable (NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN,
// NCCL_PROFILER_PLUGIN) may list several names separated by ','; "none" disables; a name
// containing '/' is a path; otherwise the name is tried as given, then as
// libnccl-<kind>-<name>.so; unset means libnccl-<kind>.so. The library is dlopen()ed by NCCL,
// so NCCL's RPATH/RUNPATH apply (`nccl_path`, "" when unknown).
// Never throws: status missing (nothing resolves), disabled ("none"), error (resolved but not an
// ELF of this machine or without plugin symbols), ok.
PluginInfo probe_plugin(const ProbeContext& ctx, PluginKind kind, const std::string& nccl_path);

// "ncclNetPlugin_v8"-style names in `symbols` for this plugin kind, sorted.
std::vector<std::string> plugin_api_symbols(PluginKind kind,
                                            const std::vector<std::string>& symbols);

}  // namespace denpex
