#include "compare/facts.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace denpex {

std::string nccl_version_of(const NcclInfo& nccl) {
  if (!nccl.version.empty()) return nccl.version;
  if (!nccl.static_version.empty()) return nccl.static_version;
  return nccl_version_from_code(nccl.version_code);
}

bool nccl_found(const NcclInfo& nccl) {
  return nccl.status == NcclStatus::ok || nccl.status == NcclStatus::not_loaded;
}

std::string api_versions_text(const std::vector<std::string>& api_versions) {
  if (api_versions.empty()) return "none";
  return fmt::format("{}", fmt::join(api_versions, ","));
}

std::string net_plugin_summary(const PluginInfo& plugin) {
  if (plugin.status != PluginStatus::ok) return to_string(plugin.status);
  return fmt::format("ok {} ({})", plugin.path, api_versions_text(plugin.api_versions));
}

namespace {

// "12.4" -> {12, 4}; false when it does not start with a number.
bool parse_cuda(const std::string& s, long* major, long* minor) {
  const char* p = s.c_str();
  char* end = nullptr;
  *major = std::strtol(p, &end, 10);
  if (end == p) return false;
  *minor = 0;
  if (*end == '.') {
    const char* q = end + 1;
    *minor = std::strtol(q, &end, 10);
    if (end == q) *minor = 0;
  }
  return true;
}

}  // namespace

int compare_cuda_versions(const std::string& a, const std::string& b) {
  long amaj, amin, bmaj, bmin;
  if (!parse_cuda(a, &amaj, &amin) || !parse_cuda(b, &bmaj, &bmin)) return 0;
  if (amaj != bmaj) return amaj < bmaj ? -1 : 1;
  if (amin != bmin) return amin < bmin ? -1 : 1;
  return 0;
}

}  // namespace denpex
