#include "compare/vote.h"

#include <algorithm>
#include <map>

namespace denpex {

VoteResult vote(const std::vector<ConfigGroup>& groups,
                const std::function<bool(const RankRecord&, std::string*)>& value_of,
                VoteBy by) {
  std::map<std::string, VoteValue> by_value;
  for (const auto& g : groups) {
    std::string value;
    if (!value_of(g.record, &value)) continue;
    VoteValue& v = by_value[value];
    v.value = value;
    v.ranks.insert(v.ranks.end(), g.ranks.begin(), g.ranks.end());
    for (const auto& h : g.hosts)
      if (!h.empty()) v.hosts.push_back(h);
  }
  VoteResult result;
  for (auto& [value, v] : by_value) {
    std::sort(v.ranks.begin(), v.ranks.end());
    v.ranks.erase(std::unique(v.ranks.begin(), v.ranks.end()), v.ranks.end());
    std::sort(v.hosts.begin(), v.hosts.end());
    v.hosts.erase(std::unique(v.hosts.begin(), v.hosts.end()), v.hosts.end());
    v.weight = by == VoteBy::ranks ? v.ranks.size() : v.hosts.size();
    result.values.push_back(std::move(v));
  }
  std::sort(result.values.begin(), result.values.end(), [](const VoteValue& a, const VoteValue& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    int ra = a.ranks.empty() ? 0 : a.ranks.front();
    int rb = b.ranks.empty() ? 0 : b.ranks.front();
    return ra < rb;
  });
  if (result.values.size() > 1 && result.values[0].weight > result.values[1].weight) {
    result.reference = 0;
  }
  return result;
}

}  // namespace denpex
