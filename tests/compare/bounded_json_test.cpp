// The one depth-capped JSON parser (compare/bounded_json.h) that saved reports and baselines
// are read through: the cap is exact, and a hostile document is refused, not recursed into.
#include <catch2/catch.hpp>

#include <string>

#include "compare/bounded_json.h"

using namespace denpex;

namespace {

// `levels` nested arrays around 1: nested(1) = "[1]", nested(2) = "[[1]]".
std::string nested(int levels) {
  return std::string(static_cast<size_t>(levels), '[') + "1" +
         std::string(static_cast<size_t>(levels), ']');
}

// An object whose "x" member opens `levels` - 1 more arrays: `levels` levels in all.
std::string nested_object(int levels) { return "{\"x\": " + nested(levels - 1) + "}"; }

}  // namespace

TEST_CASE("a document exactly at the cap parses, one level more does not") {
  BoundedJson at = parse_bounded_json(nested(kMaxJsonDepth));
  REQUIRE(at.status == BoundedJsonStatus::ok);
  CHECK(at.value.is_array());
  CHECK(parse_bounded_json(nested(kMaxJsonDepth + 1)).status == BoundedJsonStatus::too_deep);
  CHECK(parse_bounded_json(nested_object(kMaxJsonDepth)).status == BoundedJsonStatus::ok);
  CHECK(parse_bounded_json(nested_object(kMaxJsonDepth + 1)).status ==
        BoundedJsonStatus::too_deep);
}

TEST_CASE("the cap is the caller's when given") {
  CHECK(parse_bounded_json("[[1]]", 2).status == BoundedJsonStatus::ok);
  CHECK(parse_bounded_json("[[[1]]]", 2).status == BoundedJsonStatus::too_deep);
  CHECK(parse_bounded_json("{\"a\": {\"b\": 1}}", 1).status == BoundedJsonStatus::too_deep);
  // Scalars open nothing: any cap takes them.
  CHECK(parse_bounded_json("\"text\"", 1).status == BoundedJsonStatus::ok);
}

TEST_CASE("a 100,000-level bomb is refused while parsing, valid or cut short") {
  const std::string bomb = nested(100000);
  BoundedJson valid = parse_bounded_json("{\"schema\": " + bomb + "}");
  CHECK(valid.status == BoundedJsonStatus::too_deep);
  CHECK(valid.value.is_discarded());
  CHECK(parse_bounded_json(std::string(100000, '[')).status == BoundedJsonStatus::too_deep);
}

TEST_CASE("what is not JSON is invalid, not too deep") {
  CHECK(parse_bounded_json("").status == BoundedJsonStatus::invalid);
  CHECK(parse_bounded_json("{\"a\": ").status == BoundedJsonStatus::invalid);
  CHECK(parse_bounded_json("[1,]").status == BoundedJsonStatus::invalid);
  BoundedJson ok = parse_bounded_json("{\"a\": [1, 2]}");
  REQUIRE(ok.status == BoundedJsonStatus::ok);
  CHECK(ok.value.at("a").size() == 2);
}
