#include "compare/fold.h"

#include <catch2/catch.hpp>

using denpex::abbreviate_list;
using denpex::fold_hosts;
using denpex::rank_phrase;
using denpex::rank_ranges;

TEST_CASE("fold_hosts folds padded numeric suffixes into Slurm ranges") {
  CHECK(fold_hosts({"node004", "node001", "node003", "node002", "node009", "gpu7"}) ==
        "gpu7,node[001-004,009]");
}

TEST_CASE("fold_hosts keeps names without digits unchanged and sorted") {
  CHECK(fold_hosts({"login", "alpha", "beta"}) == "alpha,beta,login");
}

TEST_CASE("fold_hosts prints a lone numbered host without brackets") {
  CHECK(fold_hosts({"gpu7"}) == "gpu7");
}

TEST_CASE("fold_hosts keeps different zero padding apart") {
  CHECK(fold_hosts({"node1", "node01", "node2", "node02"}) == "node[01-02],node[1-2]");
}

TEST_CASE("fold_hosts lets an unpadded number join a padded group of its width") {
  CHECK(fold_hosts({"node001", "node100"}) == "node[001,100]");
}

TEST_CASE("fold_hosts ranges across a digit-count change when unpadded") {
  CHECK(fold_hosts({"node9", "node10", "node11"}) == "node[9-11]");
}

TEST_CASE("fold_hosts handles non-contiguous numbers") {
  CHECK(fold_hosts({"n1", "n3", "n5", "n6", "n7"}) == "n[1,3,5-7]");
}

TEST_CASE("fold_hosts drops duplicates and empty names") {
  CHECK(fold_hosts({"a1", "a1", ""}) == "a1");
  CHECK(fold_hosts({}) == "");
}

TEST_CASE("fold_hosts uses only the trailing number") {
  CHECK(fold_hosts({"rack1-n1", "rack1-n2", "rack2-n1"}) == "rack1-n[1-2],rack2-n1");
}

TEST_CASE("fold_hosts treats a number too long for 64 bits as part of the name") {
  CHECK(fold_hosts({"h123456789012345678901", "h123456789012345678902"}) ==
        "h123456789012345678901,h123456789012345678902");
}

TEST_CASE("rank_ranges") {
  CHECK(rank_ranges({7, 0, 1, 2, 3}) == "0-3,7");
  CHECK(rank_ranges({}) == "");
  CHECK(rank_ranges({5}) == "5");
  CHECK(rank_ranges({2, 1, 1}) == "1-2");
  CHECK(rank_ranges({0, 2, 4}) == "0,2,4");
}

TEST_CASE("abbreviate_list cuts at a comma and marks the cut") {
  std::vector<int> even;
  for (int r = 0; r < 400; r += 2) even.push_back(r);
  std::string full = rank_ranges(even);
  std::string shortened = abbreviate_list(full, 40);
  CHECK(shortened.size() <= 44);
  CHECK(shortened.substr(shortened.size() - 4) == ",...");
  CHECK(full.compare(0, shortened.size() - 4, shortened, 0, shortened.size() - 4) == 0);
  CHECK(abbreviate_list("0-3,7", 40) == "0-3,7");
}

TEST_CASE("abbreviate_list closes a bracket group it cuts into") {
  std::string shortened = abbreviate_list("node[001,003,005,007,009,011,013,015,017]", 20);
  CHECK(shortened == "node[001,003,005,007,...]");
}

TEST_CASE("rank_phrase names ranks and folded hosts") {
  CHECK(rank_phrase({3}, {"node2"}) == "rank 3 on node2");
  CHECK(rank_phrase({0, 1, 2, 3, 7}, {"node2", "node1"}) == "ranks 0-3,7 on node[1-2]");
  CHECK(rank_phrase({4, 5}, {}) == "ranks 4-5");
}

TEST_CASE("rank_subject: counted after duplicates, ranged, and abbreviated past one line") {
  using denpex::rank_subject;
  CHECK(rank_subject({2}) == "rank 2");
  CHECK(rank_subject({2, 2}) == "rank 2");
  CHECK(rank_subject({5, 0, 1, 2, 3}) == "ranks 0-3,5");
  CHECK(rank_subject({}) == "no ranks");
  std::vector<int> even;
  for (int r = 0; r < 400; r += 2) even.push_back(r);
  const std::string long_list = rank_subject(even);
  CHECK(long_list.rfind("ranks 0,2,4,", 0) == 0);
  CHECK(long_list.substr(long_list.size() - 4) == ",...");
  CHECK(long_list.size() <= std::string("ranks ").size() + 96 + 4);
  // rank_phrase says the same subject, then the hosts.
  CHECK(rank_phrase(even, {"n1"}) == long_list + " on n1");
}
