// The cluster report: the verdict, the findings and the configurations of one job, as JSON
// (schema "denpex.report.v1", the contract's "The cluster report") and as text for a
// person at a terminal.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compare/finding.h"
#include "compare/group.h"
#include "compare/judge.h"
#include "probe/record.h"

namespace denpex {

// Above this many ranks collect/ leaves ClusterReport::ranks empty: every rank's full record
// would make the report megabytes long while `configurations` already holds one record per
// distinct configuration. (docs/extensions.md documents this limit.)
constexpr int kMaxRanksWithFullRecords = 256;

struct ClusterReport {
  std::string verdict = "pass";          // "pass" or "reject"
  int nranks = 0;                        // ranks in the job, reported or not
  int nhosts = 0;                        // distinct hosts known (reported, or named by collect/)
  std::vector<Finding> findings;         // sorted by sort_findings
  std::vector<ConfigGroup> configurations;  // size descending (group_records order)
  std::vector<RankRecord> ranks;         // full records, when the caller provides them (may be
                                         // empty above kMaxRanksWithFullRecords)
  long long bytes_at_root = -1;          // bytes rank 0 received while collecting; -1: not known
  std::string mode;                      // how the job ran: "mpi", "single", "root", "compare";
                                         // "" when not set (then left out of the JSON)
};

// Assembles a report: sorts findings, orders configurations, counts hosts over configurations
// and missing ranks, and sets the verdict ("reject" when rejects(findings, strict)).
// `missing` only contributes host names here; judge() turns it into rank-timeout findings.
ClusterReport make_report(std::vector<ConfigGroup> configurations,
                          std::vector<MissingRank> missing, std::vector<Finding> findings,
                          int nranks, bool strict);

// The report as JSON: schema, verdict, nranks, nhosts, errors, warnings, findings,
// configurations [{ranks, hosts, digest, record}], ranks (when non-empty), bytes_at_root (when
// >= 0), mode (when set). Never throws for reports built from valid records.
nlohmann::json report_json(const ClusterReport& report);

// The report for a person: a verdict line (PASS/REJECT, errors, warnings, ranks, hosts), the
// findings most severe first (ranks as ranges, hosts folded, expected/found, fix), then one line
// per configuration. ANSI colour only when `color`. Stays short at any scale: at most
// kMaxFindingsShown findings and kMaxConfigurationsShown configurations are printed, each on a
// bounded number of lines, with a note pointing to --json for the rest.
std::string render_human(const ClusterReport& report, bool color);

constexpr std::size_t kMaxFindingsShown = 20;
constexpr std::size_t kMaxConfigurationsShown = 8;

}  // namespace denpex
