// Benchmark 5: the judging step alone, records already in memory, for a simulated job of N ranks
// (default 1,000,000 on 125,000 hosts, 8 ranks per host) with K = 3 configurations. Builds
// ConfigGroups the way collect/mpi_job.cpp does (one (rank, digest, host) per rank -> groups by
// digest -> normalize_groups), then runs judge() + make_report() + render_human() +
// report_json().dump(2) and prints the time of each phase and the peak RSS.
//
// The configurations, made from a real rank record (TEMPLATE, from --rank-report):
//   0  the template                                   (the majority)
//   1  NCCL_PROTO=Simple, on every 97th rank          (scattered over ~10,000 hosts: folding)
//   2  NCCL 2.27.3, on every rank of 10 whole hosts   (a version mismatch)
// plus 2 ranks that never reported (rank-timeout).
//
// usage: denpex_bench_judge_sim TEMPLATE.json [N=1000000] [HOSTS=125000]
// Output: one "phase <name> <ms> ms" line per phase, then "total", "peak_rss_kb", the verdict,
// finding count, report sizes. Exit 0; 2 on bad usage or unreadable template.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/group.h"
#include "compare/judge.h"
#include "compare/report.h"
#include "bench/sim_inputs.h"
#include "probe/record.h"

using namespace denpex;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Reported {  // what rank 0 holds after phase 1 of the digest protocol
  int rank;
  unsigned long long digest;
  std::string host;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TEMPLATE.json [N=1000000] [HOSTS=125000]\n", argv[0]);
    return 2;
  }
  RankRecord base;
  if (!denpex_bench::load_template(argv[1], &base)) return 2;
  const int n = argc > 2 ? std::atoi(argv[2]) : 1000000;
  const int nhosts = argc > 3 ? std::atoi(argv[3]) : 125000;
  const int per_host = (n + nhosts - 1) / nhosts;

  // The K distinct records rank 0 would have fetched.
  const std::vector<RankRecord> configs = denpex_bench::three_configurations(base);
  std::vector<unsigned long long> digests;
  for (auto& c : configs) digests.push_back(configuration_digest(c));

  auto t0 = Clock::now();
  std::vector<Reported> reported;
  reported.reserve(static_cast<size_t>(n));
  std::vector<MissingRank> missing;
  const int bad_host_lo = nhosts / 2, bad_host_hi = bad_host_lo + 10;
  for (int r = 0; r < n; ++r) {
    int h = r / per_host;
    char host[32];
    std::snprintf(host, sizeof host, "node%06d", h);
    if (r == n - 1 || r == n / 3) {
      missing.push_back({r, host, "did not report before the deadline (--timeout)"});
      continue;
    }
    int c = (h >= bad_host_lo && h < bad_host_hi) ? 2 : (r % 97 == 1 ? 1 : 0);
    reported.push_back({r, digests[static_cast<size_t>(c)], host});
  }
  double t_receive = ms_since(t0);

  // As collect/mpi_job.cpp: by digest, one group per digest, members' ranks and hosts, normalize.
  t0 = Clock::now();
  std::map<unsigned long long, std::vector<const Reported*>> by_digest;
  for (const auto& r : reported) by_digest[r.digest].push_back(&r);
  std::vector<ConfigGroup> groups;
  for (auto& [digest, members] : by_digest) {
    ConfigGroup g;
    for (size_t c = 0; c < digests.size(); ++c)
      if (digests[c] == digest) g.record = configs[c];
    g.digest = digest;
    g.ranks.reserve(members.size());
    g.hosts.reserve(members.size());
    for (const Reported* m : members) {
      g.ranks.push_back(m->rank);
      g.hosts.push_back(m->host);
    }
    groups.push_back(std::move(g));
  }
  normalize_groups(&groups);
  double t_group = ms_since(t0);

  t0 = Clock::now();
  std::vector<Finding> findings = judge(groups, missing, JudgeOptions{});
  double t_judge = ms_since(t0);

  t0 = Clock::now();
  const size_t nfindings = findings.size();
  ClusterReport report = make_report(groups, missing, std::move(findings), n, false);
  report.bytes_at_root = -1;
  report.mode = "mpi";
  double t_make = ms_since(t0);

  t0 = Clock::now();
  std::string human = render_human(report, false);
  double t_human = ms_since(t0);

  t0 = Clock::now();
  nlohmann::json rj = report_json(report);
  double t_json = ms_since(t0);
  t0 = Clock::now();
  std::string json_text = rj.dump(2);
  double t_dump = ms_since(t0);

  const long peak = denpex_bench::peak_rss_kb();
  std::printf("ranks %d hosts %d configurations %zu missing %zu\n", n, nhosts, groups.size(),
              missing.size());
  std::printf("phase receive(sim) %.1f ms\n", t_receive);
  std::printf("phase group %.1f ms\n", t_group);
  std::printf("phase judge %.1f ms\n", t_judge);
  std::printf("phase make_report %.1f ms\n", t_make);
  std::printf("phase render_human %.1f ms\n", t_human);
  std::printf("phase report_json %.1f ms\n", t_json);
  std::printf("phase json_dump %.1f ms\n", t_dump);
  std::printf("total_judging %.1f ms\n",
              t_group + t_judge + t_make + t_human + t_json + t_dump);
  std::printf("peak_rss_kb %ld\n", peak);
  std::printf("verdict %s findings %zu human_bytes %zu human_lines %ld json_bytes %zu\n",
              report.verdict.c_str(), nfindings, human.size(),
              static_cast<long>(std::count(human.begin(), human.end(), '\n')), json_text.size());
  if (std::getenv("JUDGE_SIM_SHOW")) std::fputs(human.c_str(), stdout);
  return 0;
}
