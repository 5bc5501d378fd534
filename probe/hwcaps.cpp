#include "probe/hwcaps.h"


namespace denpex {

bool ldso_has_glibc_hwcaps(const std::string& host_file) {
  return read_ldso(host_file).has_glibc_hwcaps;
}

Hwcaps hwcaps_for(const LoaderArch& arch, bool ldso_may_search_hwcaps, bool live) {
  Hwcaps h;
  h.names = arch.hwcaps;
  if (h.names.empty() || !ldso_may_search_hwcaps) return h;
  if (!live) {
    h.mode = HwcapsMode::cpu_unknown;
    return h;
  }
  h.mode = HwcapsMode::cpu_known;
  h.supported = host_cpu_hwcaps();
  return h;
}

std::string hwcaps_subdir(const std::string& name) { return "glibc-hwcaps/" + name; }

}  // namespace denpex
