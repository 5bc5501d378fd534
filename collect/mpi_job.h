// Moving rank records to rank 0 under MPI, bounded by a deadline. The only header in the project
// whose implementation includes mpi.h.
//
// Protocol (every message point-to-point, every wait a poll against the deadline, so a rank that
// hangs or dies costs rank 0 its deadline and nothing more):
//   1. every rank -> 0: the 64-bit digest of its record without identity fields, and its host
//      name (12 + strlen(host) bytes; digest 0 = "my probe failed", with the reason)
//   2. 0 -> one rank per distinct digest: "send your record"; that rank -> 0: the record as JSON
//   3. 0 -> every rank that reported: the exit code
// Bytes at rank 0 grow as N x (12 + host) + K x record, K = distinct configurations.
#pragma once

#include <string>
#include <vector>

#include "compare/group.h"
#include "compare/judge.h"
#include "probe/record.h"

namespace denpex {

struct CollectResult {
  std::vector<ConfigGroup> groups;     // rank 0 only: one per distinct configuration
  std::vector<MissingRank> missing;    // rank 0 only: ranks that did not report in time
  long long bytes_at_root = 0;         // rank 0 only: payload bytes received
  int nranks = 0;
};

class MpiJob {
 public:
  // Initialises MPI. Returns false (and sets *error) when MPI_Init fails. Never throws.
  static bool start(int* argc, char*** argv, MpiJob* out, std::string* error);

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Collective over all ranks that are alive. `mine` is this rank's record, or nullptr when its
  // probe failed (`failure` says why: rank 0 reports the rank as missing with that reason).
  // Rank 0 returns when every rank reported or at `deadline` (CLOCK_MONOTONIC seconds); other
  // ranks return after sending (and answering a record request until `deadline`).
  CollectResult collect(const RankRecord* mine, const std::string& host,
                        const std::string& failure, double deadline);

  // Rank 0: tells every rank that reported the exit code. Other ranks: waits for it until
  // `deadline`; returns 1 (and sets *note) when rank 0 never answered.
  int agree_exit_code(int code, double deadline, std::string* note);

  // Ends MPI. When ranks are missing (they may be hung inside a library), rank 0 aborts the job
  // so the launcher kills them instead of waiting forever in MPI_Finalize; the launcher then
  // exits with `code`.
  void finish(int code, bool ranks_missing);

 private:
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> reported_;   // rank 0: ranks that sent phase-1 messages
};

}  // namespace denpex
