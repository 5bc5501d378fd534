// Configurations: ranks whose records are identical apart from identity fields (rank, host,
// pid). Every rule in compare/ works on groups, never on all records, because at scale collect/
// gathers only digests plus one full record per distinct configuration.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "probe/record.h"

namespace denpex {

struct ConfigGroup {
  RankRecord record;               // representative: the record of the group's lowest rank
  std::vector<int> ranks;          // every rank with this configuration, sorted ascending
  std::vector<std::string> hosts;  // hosts of those ranks, sorted, no duplicates
  unsigned long long digest = 0;   // configuration_digest(record)
};

// Groups records by configuration (equal configuration_json; `digest` is configuration_digest of
// it). Records whose digests collide but whose configuration_json differs stay in separate
// groups (with the same digest). Groups are ordered
// by size descending, then by lowest rank. Never fails; the empty input gives no groups.
std::vector<ConfigGroup> group_records(const std::vector<RankRecord>& records);

// Groups records one at a time, keeping one record per configuration: memory grows with the
// configurations, not the ranks. Records added in ascending rank order make each group's
// representative its lowest rank. finish() returns the groups ordered as group_records orders
// them, and leaves the builder empty. Never fails.
class GroupBuilder {
 public:
  void add(const RankRecord& r);
  std::vector<ConfigGroup> finish();

 private:
  std::vector<ConfigGroup> groups_;
  std::unordered_map<std::string, std::size_t> by_json_;
};

// Orders groups the way group_records does (size descending, then lowest rank), and sorts and
// deduplicates each group's ranks and hosts. For collect/, which builds groups from digests.
void normalize_groups(std::vector<ConfigGroup>* groups);

}  // namespace denpex
