// The verdict line and the lead lines of a finished JSON report of any mode, made from the JSON
// alone (so --brief, the HTML page and a report written earlier all say the same): the gate's
// and compare's "denpex-probe: REJECT  2 errors, 0 warnings  (4 ranks on 2 hosts)" and their
// first findings; diagnose's "Started by:", "Followed:" and "Launcher:" lines; collectives' first
// divergence.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

enum class ReportKind { gate, collectives, diagnose };

// diagnose when the report has a "diagnosis" object, collectives when it counts
// "communicators", the gate (live, --root or compare) otherwise.
ReportKind report_kind(const nlohmann::json& report);

struct Lead {
  std::string verdict;             // "pass", "reject", "inconclusive" (as in the JSON; "" if absent)
  std::string verdict_line;        // one line, no trailing newline
  std::vector<std::string> lines;  // the lead lines, each one line
};

// Lead lines: for diagnose the initiating party ("Started by: rank 6 on node02 at 05-14
// 10:12:05: torch.OutOfMemoryError ..." or "Started by: not decided from this input"), the
// collateral ("Followed: ..."), the launcher's claim when there is one, and what to add when
// inconclusive; for the gate and collectives one line per finding, most severe first, at most
// kMaxLeadFindings, then "... and N more findings". Missing or mistyped keys are read as absent.
// Never throws.
Lead lead_of(const nlohmann::json& report);

// --brief: the verdict line, then the lead lines, newline-terminated.
std::string brief_text(const nlohmann::json& report);

// "rank 6 on node02", "processes node01:12, node01:13", "a rank on node[01-02]": who a party of
// the diagnosis (initiating, collateral, launcher_claim) is. "an unknown rank" when it says
// nothing. Never throws.
std::string party_subject_of(const nlohmann::json& party);

constexpr std::size_t kMaxLeadFindings = 3;

}  // namespace denpex
