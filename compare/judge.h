// The rules of the contract's "Finding codes" (all but the collective-* ones, which live in
// collectives.*), applied to configuration groups.
//
// One-process rules look at each group's representative record and blame the whole group.
// Cross-group rules vote (vote.h): the value held by the most ranks (hosts, for the driver) is
// the reference and the others are blamed; when the top values tie there is no reference and a
// single finding names every group. With a baseline, every group is also judged against it
// (expected = the baseline's value); a baseline finding that repeats a cross-group finding
// exactly is dropped.
#pragma once

#include <string>
#include <vector>

#include "compare/baseline.h"
#include "compare/finding.h"
#include "compare/group.h"

namespace denpex {

// A rank that did not report (collect/ gives up on it at the deadline).
struct MissingRank {
  int rank = 0;
  std::string host;    // "" when unknown
  std::string reason;  // e.g. "no report within 30 s"; may be empty
};

struct JudgeOptions {
  bool require_gpu = false;            // cuda-driver-missing is an error instead of a warning
  const Baseline* baseline = nullptr;  // not owned; nullptr: judge ranks only against each other
};

// Every finding for these groups and missing ranks, ordered by sort_findings. Groups need not be
// normalized; empty groups are ignored. Never throws.
std::vector<Finding> judge(const std::vector<ConfigGroup>& groups,
                           const std::vector<MissingRank>& missing, const JudgeOptions& options);

}  // namespace denpex
