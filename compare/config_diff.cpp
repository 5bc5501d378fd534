#include "compare/config_diff.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compare/facts.h"

namespace denpex {

namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string nccl_value(const NcclInfo& n) {
  if (!nccl_found(n)) return fmt::format("NCCL {}", to_string(n.status));
  return fmt::format("NCCL {}{}", nccl_version_of(n), n.cuda_build.empty() ? "" : "+cuda" + n.cuda_build);
}

// The NCCL as a phrase when it differs: version, and the file and origin when those differ too.
void nccl_phrase(const char* label, const NcclInfo& n, const NcclInfo& ref, const TorchInfo& torch,
                 std::vector<std::string>* out) {
  bool value = nccl_value(n) != nccl_value(ref);
  bool file = n.path != ref.path || n.origin != ref.origin || n.method != ref.method;
  if (!value && !file) return;
  std::string s = fmt::format("{}{}", label, nccl_value(n));
  if (nccl_found(n) && file) {
    std::string origin = nccl_origin_phrase(n, torch);
    // The directory is already in "via LD_LIBRARY_PATH=dir"; other origins name the file.
    if (n.origin != "LD_LIBRARY_PATH" && !n.path.empty()) s += " " + n.path;
    if (!origin.empty()) s += " " + origin;
  } else if (!nccl_found(n) && !n.error.empty()) {
    s += " (" + n.error + ")";
  }
  out->push_back(std::move(s));
}

std::string torch_value(const TorchInfo& t) {
  switch (t.status) {
    case TorchStatus::ok: return fmt::format("torch {}{}", t.version, t.build == "cpu" ? " (CPU build)" : "");
    case TorchStatus::error: return "torch unreadable";
    case TorchStatus::missing: break;
  }
  return "no torch";
}

std::string driver_value(const CudaDriverInfo& d) {
  if (d.status != DriverStatus::ok) return fmt::format("driver {}", to_string(d.status));
  std::string s = fmt::format("driver {}", d.library_version);
  if (!d.kernel_module_version.empty() && d.kernel_module_version != d.library_version)
    s += fmt::format(" (kernel module {})", d.kernel_module_version);
  if (d.forward_compat) s += " (cuda-compat)";
  return s;
}

void plugin_phrase(const char* what, const PluginInfo& p, const PluginInfo& ref, std::vector<std::string>* out) {
  std::string a = net_plugin_summary(p), b = net_plugin_summary(ref);
  if (a != b) out->push_back(fmt::format("{} plugin {}", what, a));
}

void variables_phrase(const std::map<std::string, std::string>& vars, const std::map<std::string, std::string>& ref,
                      const char* where, std::vector<std::string>* out) {
  std::set<std::string> names;
  for (const auto& kv : vars) names.insert(kv.first);
  for (const auto& kv : ref) names.insert(kv.first);
  for (const auto& name : names) {
    auto mine = vars.find(name);
    auto theirs = ref.find(name);
    if (mine != vars.end() && theirs != ref.end() && mine->second == theirs->second) continue;
    out->push_back(mine == vars.end() ? fmt::format("{} unset{}", name, where)
                                      : fmt::format("{}={}{}", name, mine->second, where));
  }
}

// Record keys whose differences the phrases above already name.
const std::set<std::string>& phrased_keys() {
  static const std::set<std::string> keys = {
      "nccl", "system_nccl", "torch", "cuda_driver", "net_plugin", "tuner_plugin", "profiler_plugin",
      "nccl_env", "nccl_conf", "arch", "arch_source"};
  return keys;
}

// Keys of the record JSON that differ and have no phrase: named, not explained.
void other_keys(const RankRecord& r, const RankRecord& ref, std::vector<std::string>* out) {
  nlohmann::json a = nlohmann::json::parse(configuration_json(r), nullptr, false);
  nlohmann::json b = nlohmann::json::parse(configuration_json(ref), nullptr, false);
  if (!a.is_object() || !b.is_object()) return;
  std::set<std::string> keys;
  for (const auto& kv : a.items()) keys.insert(kv.key());
  for (const auto& kv : b.items()) keys.insert(kv.key());
  std::vector<std::string> differ;
  for (const auto& k : keys) {
    if (phrased_keys().count(k)) continue;
    if (!a.contains(k) || !b.contains(k) || a[k] != b[k]) differ.push_back(k);
  }
  if (!differ.empty())
    out->push_back(fmt::format("{} differ{}", fmt::join(differ, ", "), differ.size() == 1 ? "s" : ""));
}

}  // namespace

std::string nccl_origin_phrase(const NcclInfo& n, const TorchInfo& torch) {
  const std::string& o = n.origin;
  if (o.empty()) return "";
  if (o == "LD_LIBRARY_PATH") return "via LD_LIBRARY_PATH=" + dir_of(n.path);
  if (o == "LD_PRELOAD") return "via LD_PRELOAD";
  if (o == "rpath") return "via the program's RPATH";
  if (o == "runpath") return "via the program's RUNPATH";
  if (o == "torch-rpath" || o == "torch-runpath") {
    const char* kind = o == "torch-rpath" ? "RPATH" : "RUNPATH";
    return torch.nccl.linkage == "wheel" ? fmt::format("torch wheel {}", kind)
                                         : fmt::format("libtorch_cuda.so {}", kind);
  }
  if (o == "torch-static") return "linked into libtorch_cuda.so";
  if (o == "torch-wheel") return "torch wheel";
  if (o == "ld.so.cache") return "from ld.so.cache";
  if (o == "default-dir") return "from the default library directories";
  if (o == "already-loaded") return "already loaded in the process";
  return "via " + o;
}

std::vector<std::string> what_sets_apart(const RankRecord& r, const RankRecord& ref) {
  std::vector<std::string> out;
  nccl_phrase("", r.nccl, ref.nccl, r.torch, &out);
  // PyTorch's NCCL is `nccl` when PyTorch is there: the system one only matters when it differs.
  if (r.torch.status == TorchStatus::ok) nccl_phrase("system ", r.system_nccl, ref.system_nccl, r.torch, &out);
  if (torch_value(r.torch) != torch_value(ref.torch)) out.push_back(torch_value(r.torch));
  if (r.torch.nccl.linkage != ref.torch.nccl.linkage && r.torch.status == TorchStatus::ok)
    out.push_back(fmt::format("torch's NCCL linkage {}", r.torch.nccl.linkage.empty() ? "unresolved" : r.torch.nccl.linkage));
  if (driver_value(r.cuda_driver) != driver_value(ref.cuda_driver)) out.push_back(driver_value(r.cuda_driver));
  plugin_phrase("net", r.net_plugin, ref.net_plugin, &out);
  plugin_phrase("tuner", r.tuner_plugin, ref.tuner_plugin, &out);
  plugin_phrase("profiler", r.profiler_plugin, ref.profiler_plugin, &out);
  variables_phrase(r.nccl_env, ref.nccl_env, "", &out);
  variables_phrase(r.nccl_conf, ref.nccl_conf, " (nccl.conf)", &out);
  if (r.arch != ref.arch) out.push_back(r.arch.empty() ? "architecture unknown" : r.arch);
  other_keys(r, ref, &out);
  return out;
}

}  // namespace denpex
