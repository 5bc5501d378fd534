#include "bench/sim_inputs.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace denpex_bench {

bool load_template(const char* path, denpex::RankRecord* out) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  std::string err;
  if (!in || j.is_discarded() || !denpex::record_from_json(j, out, &err)) {
    std::fprintf(stderr, "%s: not a rank record %s\n", path, err.c_str());
    return false;
  }
  return true;
}

std::vector<denpex::RankRecord> three_configurations(const denpex::RankRecord& base) {
  std::vector<denpex::RankRecord> configs(3, base);
  configs[1].nccl_env["NCCL_PROTO"] = "Simple";
  configs[2].nccl.version = "2.27.3";
  configs[2].nccl.version_code = 22703;
  configs[2].nccl.static_version = "2.27.3";
  configs[2].system_nccl = configs[2].nccl;
  return configs;
}

long rss_kb() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

long peak_rss_kb() {
  struct rusage ru {};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return ru.ru_maxrss;
}

}  // namespace denpex_bench
