#include "compare/vote.h"

#include <catch2/catch.hpp>

#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {
bool nccl_version(const RankRecord& r, std::string* v) {
  *v = r.nccl.version;
  return true;
}
}  // namespace

TEST_CASE("the value held by most ranks is the reference") {
  RankRecord base = load_record("rank_ok.json");
  RankRecord other = base;
  other.nccl.version = "2.27.3";
  auto records = ranks_of(base, 0, 3, 2);
  records.push_back(at(other, 3, "node2"));
  VoteResult v = vote(group_records(records), nccl_version, VoteBy::ranks);
  REQUIRE(v.values.size() == 2);
  CHECK(v.reference == 0);
  CHECK(v.values[0].value == "2.28.9");
  CHECK(v.values[0].weight == 3);
  CHECK(v.values[1].ranks == std::vector<int>{3});
  CHECK_FALSE(v.tie());
}

TEST_CASE("equal top weights have no reference") {
  RankRecord base = load_record("rank_ok.json");
  RankRecord other = base;
  other.nccl.version = "2.27.3";
  VoteResult v = vote(group_records({at(base, 0, "a"), at(base, 1, "a"), at(other, 2, "b"),
                                     at(other, 3, "b")}),
                      nccl_version, VoteBy::ranks);
  CHECK(v.reference == -1);
  CHECK(v.tie());
}

TEST_CASE("voting by hosts counts each host once") {
  RankRecord base = load_record("rank_ok.json");
  RankRecord other = base;
  other.nccl.version = "2.27.3";
  // 8 ranks on one host against 1 rank on each of two hosts: by hosts the two hosts win.
  auto records = ranks_of(base, 0, 8, 8);  // node1
  records.push_back(at(other, 8, "node2"));
  records.push_back(at(other, 9, "node3"));
  VoteResult by_hosts = vote(group_records(records), nccl_version, VoteBy::hosts);
  REQUIRE(by_hosts.reference == 0);
  CHECK(by_hosts.values[0].value == "2.27.3");
  VoteResult by_ranks = vote(group_records(records), nccl_version, VoteBy::ranks);
  CHECK(by_ranks.values[by_ranks.reference].value == "2.28.9");
}

TEST_CASE("groups the attribute does not apply to are left out") {
  RankRecord base = load_record("rank_ok.json");
  VoteResult v = vote(group_records({at(base, 0, "a")}),
                      [](const RankRecord&, std::string*) { return false; }, VoteBy::ranks);
  CHECK(v.values.empty());
  CHECK(v.reference == -1);
  CHECK_FALSE(v.tie());
}

TEST_CASE("strict_majority: the one weight above all others, else none") {
  CHECK(strict_majority({3, 1}) == 0);
  CHECK(strict_majority({1, 3}) == 1);
  CHECK(strict_majority({2, 2, 3}) == 2);   // a tie below the top is no tie
  CHECK(strict_majority({3, 3, 1}) == -1);  // the top ties
  CHECK(strict_majority({1, 3, 3}) == -1);
  CHECK(strict_majority({5}) == 0);
  CHECK(strict_majority({}) == -1);
}

TEST_CASE("judged_against: the majority, or under a tie the first other group") {
  CHECK(judged_against(2, 0) == 2);
  CHECK(judged_against(2, 1) == 2);
  CHECK(judged_against(-1, 0) == 1);
  CHECK(judged_against(-1, 1) == 0);
  CHECK(judged_against(-1, 2) == 0);
}
