#include "compare/ras_counts.h"

#include <algorithm>

#include <fmt/format.h>

#include "compare/finding_codes.h"
#include "compare/fold.h"

namespace denpex {

RasCountVerdict judge_ras_counts(const std::vector<RasOpCount>& counts) {
  RasCountVerdict v;
  if (counts.empty()) return v;
  auto [lo, hi] = std::minmax_element(counts.begin(), counts.end(),
                                      [](const RasOpCount& a, const RasOpCount& b) { return a.count < b.count; });
  v.leader_count = hi->count;
  v.lowest_count = lo->count;
  v.agree = v.leader_count == v.lowest_count;
  for (const RasOpCount& c : counts) {
    if (c.count == v.leader_count) {
      v.leaders.push_back(c.rank);
      continue;
    }
    v.behind.push_back(c.rank);
    if (!c.host.empty()) v.behind_hosts.push_back(c.host);
    if (c.count == v.lowest_count) v.furthest_behind.push_back(c.rank);
  }
  for (auto* list : {&v.leaders, &v.behind, &v.furthest_behind}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  std::sort(v.behind_hosts.begin(), v.behind_hosts.end());
  v.behind_hosts.erase(std::unique(v.behind_hosts.begin(), v.behind_hosts.end()), v.behind_hosts.end());
  return v;
}

bool ras_count_finding(const RasCountVerdict& v, const std::string& comm, const std::string& op,
                       Finding* out) {
  if (v.agree) return false;
  Finding f;
  f.code = FindingCode::collective_missing;
  f.severity = Severity::error;
  f.ranks = v.behind;
  f.hosts = v.behind_hosts;
  f.comm = comm;
  f.seq = static_cast<long long>(v.lowest_count);
  f.expected = fmt::format("{} {} launched", v.leader_count, op);
  f.found = fmt::format("{} launched", v.lowest_count);
  std::string furthest = v.furthest_behind.size() == v.behind.size()
                             ? ""
                             : fmt::format(" (furthest behind: {} at {})", rank_subject(v.furthest_behind), v.lowest_count);
  f.message = fmt::format(
      "{} of communicator {} launched fewer {} operations than {}, which launched {}{}: the ranks "
      "behind are where to look; the {} ahead only wait for them",
      rank_phrase(v.behind, v.behind_hosts), comm, op, rank_subject(v.leaders), v.leader_count,
      furthest, v.leaders.size() == 1 ? "rank" : fmt::format("{} ranks", v.leaders.size()));
  f.fix = "find what the ranks behind are doing instead of the next operation (their stacks, py-spy "
          "dump, their logs): a rank stuck in compute, in another collective or dead holds the others";
  *out = std::move(f);
  return true;
}

}  // namespace denpex
