#include "launch/did_you_mean.h"

#include <catch2/catch.hpp>

using namespace denpex;

TEST_CASE("edit_distance: insertions, deletions, substitutions, an adjacent swap as one") {
  CHECK(edit_distance("diagnose", "diagnose") == 0);
  CHECK(edit_distance("diagnoze", "diagnose") == 1);
  CHECK(edit_distance("diagnsoe", "diagnose") == 1);
  CHECK(edit_distance("colectives", "collectives") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("did_you_mean: the nearest, if near enough, and never a tie") {
  std::vector<std::string> subs = {"compare", "collectives", "diagnose"};
  CHECK(did_you_mean("diagnoze", subs) == "diagnose");
  CHECK(did_you_mean("compre", subs) == "compare");
  CHECK(did_you_mean("diagnose", subs).empty());
  CHECK(did_you_mean("frobnicate", subs).empty());
  CHECK(did_you_mean("x", subs).empty());
  CHECK(did_you_mean("--htm", {"--html", "--json"}) == "--html");
  CHECK(did_you_mean("ab", {"ac", "ad"}).empty());
}
