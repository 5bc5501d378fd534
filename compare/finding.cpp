#include "compare/finding.h"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "compare/fold.h"

namespace denpex {

const char* to_string(Severity s) { return s == Severity::error ? "error" : "warning"; }

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"code", code_name(f.code)},     {"severity", to_string(f.severity)}, {"ranks", f.ranks},
       {"hosts", f.hosts},   {"message", f.message},              {"expected", f.expected},
       {"found", f.found},   {"fix", f.fix}};
  if (f.ranks_total >= 0) {
    j["ranks_total"] = f.ranks_total;
    j["rank_ranges"] = nlohmann::json::array();
    for (const auto& r : f.rank_ranges) j["rank_ranges"].push_back({r.first, r.second});
  }
  if (!f.verify.text.empty()) {
    j["verify"] = f.verify.text;
    j["verify_argv"] = command_json(f.verify)["argv"];
  }
  if (!f.comm.empty()) {
    j["comm"] = f.comm;
    j["seq"] = f.seq;
  }
}

std::string ranks_subject(const Finding& f) {
  if (f.ranks_total >= 0)
    return ranges_subject(f.rank_ranges, f.ranks_total, f.rank_ranges.size() == static_cast<size_t>(kListedRanges));
  return f.ranks.empty() ? std::string("ranks -") : rank_subject(f.ranks);
}

void sort_findings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity == Severity::error;
    // By name, as the reports have always listed them.
    if (a.code != b.code) return std::string_view(code_name(a.code)) < code_name(b.code);
    int ra = a.ranks.empty() ? -1 : a.ranks.front();
    int rb = b.ranks.empty() ? -1 : b.ranks.front();
    return ra < rb;
  });
}

bool rejects(const std::vector<Finding>& findings, bool strict) {
  return std::any_of(findings.begin(), findings.end(), [strict](const Finding& f) {
    return f.severity == Severity::error || strict;
  });
}

}  // namespace denpex
