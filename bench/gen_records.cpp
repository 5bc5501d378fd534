// Generator for benchmark 4: writes N rank records (one *.json file each) into DIR, made from a
// real rank record (denpex-probe --rank-report x.json). Each record gets its own rank, host
// (8 ranks per host) and pid; K configurations are made by NCCL_PROTO in nccl_env: the majority
// keeps the template's, every 97th rank gets "Simple" and every 101st "LL" (for K = 3).
//
// usage: denpex_bench_gen_records TEMPLATE.json DIR N [K=3]
// Exit 0 on success, 2 on bad usage or an unreadable template / unwritable directory.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TEMPLATE.json DIR N [K=3]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  auto tmpl = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!in || tmpl.is_discarded() || !tmpl.is_object()) {
    std::fprintf(stderr, "%s: not a JSON rank record\n", argv[1]);
    return 2;
  }
  const std::string dir = argv[2];
  const long n = std::atol(argv[3]);
  const int k = argc > 4 ? std::atoi(argv[4]) : 3;
  const char* protos[] = {"Simple", "LL"};
  for (long i = 0; i < n; ++i) {
    nlohmann::json r = tmpl;
    r["rank"] = i;
    char host[32];
    std::snprintf(host, sizeof host, "node%05ld", i / 8);
    r["host"] = host;
    r["pid"] = 100000 + i;
    if (k >= 2 && i % 97 == 1) r["nccl_env"]["NCCL_PROTO"] = protos[0];
    else if (k >= 3 && i % 101 == 2) r["nccl_env"]["NCCL_PROTO"] = protos[1];
    char name[64];
    std::snprintf(name, sizeof name, "/rank-%07ld.json", i);
    std::ofstream out(dir + name);
    out << r.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "%s%s: cannot write\n", dir.c_str(), name);
      return 2;
    }
  }
  return 0;
}
