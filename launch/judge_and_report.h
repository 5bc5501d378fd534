// The last step every mode shares: judge the gathered configurations, print and write the
// report, write a baseline if asked, and give the contract's exit code.
#pragma once

#include <string>
#include <vector>

#include "compare/baseline.h"
#include "compare/group.h"
#include "compare/judge.h"
#include "launch/options.h"

namespace denpex {

struct JobResult {
  std::vector<ConfigGroup> groups;
  std::vector<MissingRank> missing;
  std::vector<RankRecord> full_records;   // every rank's record when small enough, else empty
  int nranks = 0;
  long long bytes_at_root = -1;
  std::string mode;                       // "mpi", "single", "root", "compare"
  std::vector<std::string> notes;         // printed under the report (e.g. renumbered ranks)
};

// Loads --baseline when given. Returns false with *error (one line naming the file) when it is
// missing or malformed: the caller exits 2.
bool load_baseline_option(const Options& o, Baseline* out, bool* have, std::string* error);

// Judges, prints the human report (stdout, or stderr with --json -) unless --quiet, writes
// --json, --write-baseline and --prometheus. Returns 0 pass, 1 reject, 2 when an output could
// not be written.
int judge_and_report(const Options& o, const Baseline* baseline, JobResult job);

}  // namespace denpex
