#include "compare/group.h"

#include <catch2/catch.hpp>

#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

TEST_CASE("identical records apart from identity form one group") {
  RankRecord base = load_record("rank_ok.json");
  auto groups = group_records(ranks_of(base, 0, 4, 2));
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(groups[0].hosts == std::vector<std::string>{"node1", "node2"});
  CHECK(groups[0].digest == configuration_digest(base));
}

TEST_CASE("groups are ordered by size, then lowest rank; the representative is the lowest rank") {
  RankRecord base = load_record("rank_ok.json");
  RankRecord other = base;
  other.nccl.version = "2.27.3";
  std::vector<RankRecord> records = {at(base, 3, "node2"), at(other, 1, "node1"),
                                     at(base, 0, "node1"), at(base, 2, "node2")};
  auto groups = group_records(records);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].ranks == std::vector<int>{0, 2, 3});
  CHECK(groups[0].record.rank == 0);
  CHECK(groups[1].ranks == std::vector<int>{1});
  CHECK(groups[1].record.nccl.version == "2.27.3");
  CHECK(groups[0].digest != groups[1].digest);
}

TEST_CASE("equal-size groups are ordered by lowest rank") {
  RankRecord base = load_record("rank_ok.json");
  RankRecord other = base;
  other.nccl_env["NCCL_PROTO"] = "Simple";
  auto groups = group_records({at(other, 0, "a"), at(base, 1, "b"), at(other, 2, "a"),
                               at(base, 3, "b")});
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].ranks == std::vector<int>{0, 2});
  CHECK(groups[1].ranks == std::vector<int>{1, 3});
}

TEST_CASE("no records give no groups") { CHECK(group_records({}).empty()); }

TEST_CASE("normalize_groups sorts ranks and hosts and orders groups") {
  std::vector<ConfigGroup> groups(2);
  groups[0].ranks = {9};
  groups[1].ranks = {5, 1, 1};
  groups[1].hosts = {"b", "a", "b"};
  normalize_groups(&groups);
  CHECK(groups[0].ranks == std::vector<int>{1, 5});
  CHECK(groups[0].hosts == std::vector<std::string>{"a", "b"});
  CHECK(groups[1].ranks == std::vector<int>{9});
}
