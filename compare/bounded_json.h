// Parsing a JSON document that came from outside (a saved rank report, a baseline) without
// letting its shape hurt the reader: nesting is capped while parsing, so a hostile document
// ({"schema": [[[...]]]} 100,000 levels deep) is refused before anything recursive (dump(),
// record_from_json) walks it and overflows the stack. nlohmann's parser itself is iterative.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace denpex {

// Our documents (a rank record, a cluster report, a baseline) nest a handful of levels.
constexpr int kMaxJsonDepth = 64;

// ok        `value` holds the document
// too_deep  arrays/objects nest more than the cap; `value` is discarded
// invalid   not JSON (truncated, corrupt, empty); `value` is discarded
enum class BoundedJsonStatus { ok, too_deep, invalid };

struct BoundedJson {
  BoundedJsonStatus status = BoundedJsonStatus::invalid;
  nlohmann::json value;
};

// Parses `text`, refusing it once an array or object opens at nesting level `max_depth` + 1
// (the top-level value is level 1: "[[1]]" is 2 levels). Never throws.
BoundedJson parse_bounded_json(const std::string& text, int max_depth = kMaxJsonDepth);

}  // namespace denpex
