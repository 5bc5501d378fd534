#include "probe/plugin_probe.h"

#include <algorithm>

#include <fmt/format.h>

#include "probe/elf_file.h"
#include "probe/library_probe.h"
#include "probe/text.h"

namespace denpex {

namespace {

struct KindInfo {
  const char* variable;
  const char* short_name;   // libnccl-<short>.so
  std::vector<const char*> symbol_prefixes;
};

KindInfo kind_info(PluginKind k) {
  switch (k) {
    case PluginKind::net: return {"NCCL_NET_PLUGIN", "net", {"ncclNetPlugin_v", "ncclCollNetPlugin_v"}};
    case PluginKind::tuner: return {"NCCL_TUNER_PLUGIN", "tuner", {"ncclTunerPlugin_v"}};
    case PluginKind::profiler: return {"NCCL_PROFILER_PLUGIN", "profiler", {"ncclProfiler_v"}};
  }
  return {"", "", {}};
}

}  // namespace

std::vector<std::string> plugin_api_symbols(PluginKind kind,
                                            const std::vector<std::string>& symbols) {
  std::vector<std::string> out;
  for (const auto& s : symbols)
    for (const char* p : kind_info(kind).symbol_prefixes)
      if (s.rfind(p, 0) == 0) out.push_back(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

PluginInfo probe_plugin(const ProbeContext& ctx, PluginKind kind, const std::string& nccl_path) {
  KindInfo k = kind_info(kind);
  PluginInfo p;
  std::string value = env_value(ctx, k.variable);
  p.requested = value.empty() ? fmt::format("libnccl-{}.so", k.short_name) : value;
  if (value == "none") {
    p.status = PluginStatus::disabled;
    return p;
  }
  ElfInfo nccl_elf;
  Requester req;
  if (!nccl_path.empty()) {
    nccl_elf = read_elf(host_path(ctx.loader.fs, nccl_path), false);
    if (nccl_elf.status == ElfStatus::ok) req = Requester{nccl_path, &nccl_elf, {}, {}};
  }
  std::vector<std::string> tries;
  if (value.empty()) {
    tries.push_back(p.requested);
  } else {
    for (const auto& name : split_nonempty(value, ',')) {
      tries.push_back(name);
      if (name.find('/') == std::string::npos)
        tries.push_back(fmt::format("libnccl-{}-{}.so", k.short_name, name));
    }
  }
  for (const auto& name : tries) {
    Resolution res = resolve_library(ctx.loader, name, req);
    // NCCL would dlopen the plugin; the probe only reads its symbol table (no version call).
    LibraryProbe lp = probe_library(ctx, res, nullptr, nullptr);
    if (lp.step == LibraryStep::not_found) continue;
    if (lp.step == LibraryStep::fatal) {
      p.status = PluginStatus::error;
      p.path = res.path;
      p.error = fmt::format("{}: {}", res.path, res.error);
      return p;
    }
    p.path = lp.path;
    ElfInfo elf = read_elf(lp.host, true);
    if (!elf.dynsyms_read) {
      // Not "exports no symbol": nothing is known about what it exports.
      p.status = PluginStatus::error;
      p.error = fmt::format("cannot read the dynamic symbols of {}: {}", p.path,
                            elf.status != ElfStatus::ok ? to_string(elf.status)
                                                        : elf.dynsyms_error);
      return p;
    }
    std::vector<std::string> names;
    for (const auto& s : elf.dynsyms)
      if (s.defined) names.push_back(s.name);
    p.api_versions = plugin_api_symbols(kind, names);
    if (p.api_versions.empty()) {
      p.status = PluginStatus::error;
      p.error = fmt::format("{} exports no {}N symbol: NCCL will not use it", p.path,
                            k.symbol_prefixes.front());
      return p;
    }
    p.status = PluginStatus::ok;
    return p;
  }
  p.status = PluginStatus::missing;
  return p;
}

}  // namespace denpex
