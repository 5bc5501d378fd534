// Rank records written earlier (--rank-report: per-node Slurm prolog spools, a container's
// record beside the host's), read back to be judged as if they came from one job.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compare/group.h"
#include "probe/record.h"

namespace denpex {

// ok          every path read
// bad_input   a path is missing, unreadable, too large, not JSON or not a rank record; `error`
//             is one line naming the file and the problem (the contract's exit code 2)
enum class SavedStatus { ok, bad_input };

// Files bigger than this are refused without being read: a rank record is a few KB.
constexpr long long kMaxRecordFileBytes = 16ll << 20;

struct SavedVisit {
  SavedStatus status = SavedStatus::ok;
  std::string error;
  size_t records = 0;   // records handed to the visitor
};

// Reads rank records from files, and from the *.json files directly inside directories (sorted
// by name), handing each to `visit` as soon as it is parsed, so memory does not grow with the
// number of records. A file may hold one rank record, or a cluster report (schema
// "denpex.report.v1") whose "ranks" (or, when absent, "configurations") supply the records.
// Stops at the first bad input. Never throws.
SavedVisit for_each_saved_record(const std::vector<std::string>& paths,
                                 const std::function<void(RankRecord&&)>& visit);

// Rank numbers that repeat (separate runs, e.g. one per-node prolog each reporting rank 0) are
// renumbered, in order, after the highest rank seen, so per-node outputs compare as one job.
// Returns how many were renumbered.
int renumber_repeated_ranks(std::vector<int>* ranks);

// Saved records grouped into configurations as they are read: one full record per
// configuration, (rank, host) for the rest, and the first `keep` full records for the report.
struct SavedJob {
  SavedStatus status = SavedStatus::ok;
  std::string error;
  std::vector<ConfigGroup> groups;       // normalized (compare/group.h order)
  std::vector<RankRecord> kept;          // the first `keep` records, ranks renumbered
  int nranks = 0;
  int renumbered = 0;
};

SavedJob load_saved_job(const std::vector<std::string>& paths, size_t keep);

}  // namespace denpex
