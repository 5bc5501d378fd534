#include "collect/launcher.h"

#include <cstdlib>

namespace denpex {

LauncherInfo detect_launcher(const std::map<std::string, std::string>& env) {
  struct Rule { const char* variable; Launcher kind; const char* rank_variable; };
  const Rule rules[] = {
      {"OMPI_COMM_WORLD_SIZE", Launcher::open_mpi, "OMPI_COMM_WORLD_RANK"},
      {"PMIX_RANK", Launcher::pmix, "PMIX_RANK"},
      {"PMI_RANK", Launcher::pmi, "PMI_RANK"},
      {"PMI_FD", Launcher::pmi, "PMI_RANK"},
  };
  LauncherInfo info;
  for (const auto& r : rules) {
    if (!env.count(r.variable)) continue;
    info.kind = r.kind;
    info.evidence = r.variable;
    auto it = env.find(r.rank_variable);
    if (it != env.end()) {
      char* end = nullptr;
      long v = std::strtol(it->second.c_str(), &end, 10);
      if (end && *end == '\0' && v >= 0) info.rank_hint = static_cast<int>(v);
    }
    return info;
  }
  return info;
}

}  // namespace denpex
