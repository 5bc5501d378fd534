#include "compare/bounded_json.h"

namespace denpex {

BoundedJson parse_bounded_json(const std::string& text, int max_depth) {
  using nlohmann::json;
  bool too_deep = false;
  // nlohmann passes the number of enclosing containers: 0 for the top-level value.
  auto depth_cap = [&too_deep, max_depth](int enclosing, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start ||
         event == json::parse_event_t::array_start) &&
        enclosing + 1 > max_depth)
      too_deep = true;
    return !too_deep;
  };
  BoundedJson out;
  out.value = json::parse(text, depth_cap, /*allow_exceptions=*/false);
  if (too_deep) {
    out.status = BoundedJsonStatus::too_deep;
    out.value = json(json::value_t::discarded);
  } else if (out.value.is_discarded()) {
    out.status = BoundedJsonStatus::invalid;
  } else {
    out.status = BoundedJsonStatus::ok;
  }
  return out;
}

}  // namespace denpex
