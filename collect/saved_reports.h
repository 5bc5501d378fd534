// Rank records written earlier (--rank-report: per-node Slurm prolog spools, a container's
// record beside the host's), read back to be judged as if they came from one job.
#pragma once

#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// ok          every path read; `records` holds them in path order (directories sorted by name)
// bad_input   a path is missing, unreadable, too large, not JSON or not a rank record; `error`
//             is one line naming the file and the problem (the contract's exit code 2)
enum class SavedStatus { ok, bad_input };

struct SavedRecords {
  SavedStatus status = SavedStatus::ok;
  std::vector<RankRecord> records;
  std::string error;
};

// Files bigger than this are refused without being read: a rank record is a few KB.
constexpr long long kMaxRecordFileBytes = 16ll << 20;

// Reads rank records from files, and from the *.json files directly inside directories. A file
// may hold one rank record, or a cluster report (schema "denpex.report.v1") whose "ranks" (or,
// when absent, "configurations") supply the records. Ranks that repeat across files are
// renumbered after the highest seen, so per-node prolog outputs (each rank 0) can be compared;
// `renumbered` counts them. Never throws.
SavedRecords load_saved_records(const std::vector<std::string>& paths, int* renumbered);

}  // namespace denpex
