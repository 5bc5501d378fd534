#include "compare/vote.h"

#include <algorithm>
#include <map>

namespace denpex {

namespace {

// Appends `more` to `into`, keeping it sorted. Linear when `more` is sorted (groups are, after
// normalize_groups), where sorting the concatenation would not be.
template <typename T>
void merge_sorted(std::vector<T>* into, const std::vector<T>& more) {
  const auto middle = static_cast<std::ptrdiff_t>(into->size());
  into->insert(into->end(), more.begin(), more.end());
  auto mid = into->begin() + middle;
  if (!std::is_sorted(mid, into->end())) std::sort(mid, into->end());
  std::inplace_merge(into->begin(), mid, into->end());
}

}  // namespace

int strict_majority(const std::vector<std::size_t>& weights) {
  int best = -1;
  bool tie = false;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (best < 0 || weights[i] > weights[static_cast<std::size_t>(best)]) {
      best = static_cast<int>(i);
      tie = false;
    } else if (weights[i] == weights[static_cast<std::size_t>(best)]) {
      tie = true;
    }
  }
  return tie ? -1 : best;
}

std::size_t judged_against(int majority, std::size_t g) {
  if (majority >= 0) return static_cast<std::size_t>(majority);
  return g == 0 ? 1 : 0;
}

VoteResult vote(const std::vector<ConfigGroup>& groups,
                const std::function<bool(const RankRecord&, std::string*)>& value_of,
                VoteBy by) {
  std::map<std::string, VoteValue> by_value;
  for (const auto& g : groups) {
    std::string value;
    if (!value_of(g.record, &value)) continue;
    VoteValue& v = by_value[value];
    v.value = value;
    merge_sorted(&v.ranks, g.ranks);
    merge_sorted(&v.hosts, g.hosts);
  }
  VoteResult result;
  for (auto& [value, v] : by_value) {
    v.ranks.erase(std::unique(v.ranks.begin(), v.ranks.end()), v.ranks.end());
    v.hosts.erase(std::remove(v.hosts.begin(), v.hosts.end(), std::string()), v.hosts.end());
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
  if (result.values.size() > 1) {
    std::vector<std::size_t> weights;
    for (const auto& v : result.values) weights.push_back(v.weight);
    result.reference = strict_majority(weights);
  }
  return result;
}

}  // namespace denpex
