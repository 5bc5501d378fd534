#include "compare/group.h"

#include <algorithm>
#include <unordered_map>

namespace denpex {

namespace {

template <typename T>
void sort_unique(std::vector<T>* v) {
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

  std::vector<ConfigGroup> groups;
  std::vector<std::string> group_json;  // configuration_json of each group's representative
  std::unordered_multimap<unsigned long long, std::size_t> by_digest;
  for (const RankRecord* r : by_rank) {
    std::string json = configuration_json(*r);
    unsigned long long digest = configuration_digest(*r);
    std::size_t index = groups.size();
    auto range = by_digest.equal_range(digest);
    for (auto it = range.first; it != range.second; ++it) {
      // A 64-bit digest can collide; equal JSON is the real test of "same configuration".
      if (group_json[it->second] == json) {
        index = it->second;
        break;
      }
    }
    if (index == groups.size()) {
      groups.push_back(ConfigGroup{*r, {}, {}, digest});
      group_json.push_back(std::move(json));
      by_digest.insert({digest, index});
    }
    groups[index].ranks.push_back(r->rank);
    groups[index].hosts.push_back(r->host);
  }
  normalize_groups(&groups);
  return groups;
}

}  // namespace denpex
