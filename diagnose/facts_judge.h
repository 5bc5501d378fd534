// Facts read from logs judged by the same rules as live rank records (compare/judge.h): each
// process the logs show becomes a partial RankRecord holding only what its lines say, and every
// kind of fact is judged on its own, among the processes that printed it, so that a process
// whose log says nothing about its net plugin is not taken for one without a plugin.
#pragma once

#include <string>
#include <vector>

#include "compare/finding.h"
#include "evidence/events.h"
#include "evidence/log_reader.h"

// The room's typed events, under the names diagnose/ has always used.
namespace denpex::diag {
using evidence::CollResult;
using evidence::Evidence;
using evidence::Fact;
using evidence::Failure;
using evidence::LauncherEntry;
using evidence::LogReader;
using evidence::Reported;
using evidence::Unreadable;
using evidence::WatchRecord;
using evidence::When;
using evidence::Who;
}  // namespace denpex::diag

namespace denpex::diag {

struct JudgedFact {
  Finding finding;
  std::vector<std::string> processes;  // blamed processes whose rank is unknown (not in ranks)
  std::vector<Evidence> evidence;
};

// Findings with the codes the live gate gives (nccl-version-mismatch, nccl-build-mismatch,
// nccl-net-plugin-mismatch, nccl-env-mismatch, nccl-abi-mismatch, cuda-driver-stub,
// cuda-driver-too-old, cuda-driver-kernel-mismatch). Processes whose job-wide rank is unknown are
// named by process ("HGX-H100-11:18226") and left out of `ranks`. Never fails.
std::vector<JudgedFact> judge_facts(const std::vector<Fact>& facts);

// Replaces stand-in rank numbers (>= kSyntheticRank) in a finding by process names: removes them
// from `ranks` and rewrites "rank N"/"N" in the texts.
constexpr int kSyntheticRank = 1000000000;
void name_synthetic(Finding* f, const std::vector<std::pair<int, std::string>>& names);

}  // namespace denpex::diag
