#include "compare/group.h"

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace denpex {

namespace {

// Groups from collect/ usually arrive sorted already: checking is linear, sorting is not, and
// at a million ranks the difference is most of judge()'s time.
template <typename T>
void sort_unique(std::vector<T>* v) {
  if (std::adjacent_find(v->begin(), v->end(), std::greater_equal<T>()) == v->end()) return;
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

void normalize_groups(std::vector<ConfigGroup>* groups) {
  for (auto& g : *groups) {
    sort_unique(&g.ranks);
    sort_unique(&g.hosts);
  }
  std::stable_sort(groups->begin(), groups->end(), [](const ConfigGroup& a, const ConfigGroup& b) {
    if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
    int ra = a.ranks.empty() ? 0 : a.ranks.front();
    int rb = b.ranks.empty() ? 0 : b.ranks.front();
    return ra < rb;
  });
}

std::vector<ConfigGroup> group_records(const std::vector<RankRecord>& records) {
  // Visiting records by rank makes each group's representative its lowest rank, whatever order
  // the records arrived in.
  std::vector<const RankRecord*> by_rank;
  by_rank.reserve(records.size());
  for (const auto& r : records) by_rank.push_back(&r);
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [](const RankRecord* a, const RankRecord* b) { return a->rank < b->rank; });

  GroupBuilder builder;
  for (const RankRecord* r : by_rank) builder.add(*r);
  return builder.finish();
}

// Keyed by the configuration JSON itself: equal text is what "same configuration" means, so
// digest collisions cannot merge groups, and each record is serialised once. The digest is
// computed once per group.
void GroupBuilder::add(const RankRecord& r) {
  auto inserted = by_json_.emplace(configuration_json(r), groups_.size());
  if (inserted.second) groups_.push_back(ConfigGroup{r, {}, {}, configuration_digest(r)});
  ConfigGroup& g = groups_[inserted.first->second];
  g.ranks.push_back(r.rank);
  g.hosts.push_back(r.host);
}

std::vector<ConfigGroup> GroupBuilder::finish() {
  std::vector<ConfigGroup> out = std::move(groups_);
  groups_.clear();
  by_json_.clear();
  normalize_groups(&out);
  return out;
}

}  // namespace denpex
