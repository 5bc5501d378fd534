// Helpers shared by the compare/ tests: fixture records at chosen ranks and hosts, and lookups
// in finding lists. Header-only; each test file is its own executable.
#pragma once

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "compare/finding.h"
#include "compare/group.h"
#include "probe/record.h"

namespace denpex::test {

inline std::string fixture_path(const std::string& name) {
  return std::string(DENPEX_COMPARE_FIXTURES) + "/" + name;
}

inline RankRecord load_record(const std::string& name) {
  std::ifstream in(fixture_path(name));
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  RankRecord r;
  std::string error;
  INFO("fixture " << name);
  REQUIRE(record_from_json(nlohmann::json::parse(text.str()), &r, &error));
  return r;
}

// `base` as seen at another rank and host.
inline RankRecord at(RankRecord base, int rank, const std::string& host) {
  base.rank = rank;
  base.host = host;
  base.pid = 1000 + rank;
  return base;
}

// `n` copies of `base`, ranks first..first+n-1, `per_host` ranks per host "nodeN" (1-based).
inline std::vector<RankRecord> ranks_of(const RankRecord& base, int first, int n, int per_host) {
  std::vector<RankRecord> out;
  for (int r = first; r < first + n; ++r) out.push_back(at(base, r, "node" + std::to_string(r / per_host + 1)));
  return out;
}

inline std::vector<Finding> with_code(const std::vector<Finding>& findings,
                                      const std::string& code) {
  std::vector<Finding> out;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return code_name(f.code) == code; });
  return out;
}

inline std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(code_name(f.code));
  return out;
}

}  // namespace denpex::test
