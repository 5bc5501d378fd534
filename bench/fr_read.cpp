// bench/fr_dumps.sh's reader: every dump in DIR read (evidence/fr_dump.h) and judged
// (compare/fr_judge.h) as `diagnose` would, timed inside the process. Prints one line of
// key=value figures and the findings' codes and ranks.
//   denpex_bench_fr_read DIR
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "compare/fold.h"
#include "evidence/fr_analyse.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::vector<std::string> paths;
  if (DIR* d = ::opendir(argv[1])) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') paths.push_back(std::string(argv[1]) + "/" + e->d_name);
    ::closedir(d);
  }
  std::sort(paths.begin(), paths.end());
  auto t0 = std::chrono::steady_clock::now();
  denpex::evidence::FrAnalysis a = denpex::evidence::analyse_fr_dumps(paths);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fr dumps=%zu entries=%llu bytes=%llu seconds=%.3f findings=%zu problems=%zu\n", a.dumps,
              static_cast<unsigned long long>(a.entries), static_cast<unsigned long long>(a.bytes), secs,
              a.judgement.findings.size(), a.problems.size());
  for (const auto& f : a.judgement.findings)
    std::printf("finding %s %s seq=%lld\n", denpex::code_name(f.finding.code), denpex::rank_ranges(f.finding.ranks).c_str(),
                f.finding.seq);
  for (const auto& p : a.problems) std::printf("problem %s\n", p.c_str());
  return 0;
}
