// Moving rank records to rank 0 under MPI, bounded by a deadline, through the MPI transport
// plugin (collect/mpi_plugin/mpi_plugin.h; collect/mpi_plugin_loader.h picks and loads it).
//
// Protocol (every message point-to-point, every wait a poll against a deadline, so a rank that
// hangs or dies costs rank 0 its deadline and nothing more):
//   0. right after MPI_Init, 0 -> every rank: 8 bytes, the seconds left until rank 0's deadline,
//      so a rank whose own probe hangs (a longer --timeout, a library that never returns) gives
//      up on it in time to report instead of being missed
//   1. every rank -> 0: the 64-bit digest of its record without identity fields, and its host
//      name (8 + strlen(host) bytes; digest 0 = "my probe failed", followed by '\n' and the
//      reason, at most 1,032 bytes in all). 0 -> that rank: an 8-byte acknowledgement holding
//      the seconds left until rank 0's deadline, so every rank waits for rank 0's deadline
//      (plus kRecordGrace) and not its own: a representative whose own --timeout ends first
//      still answers rank 0's request.
//   2. 0 -> one rank per distinct digest: "send your record"; that rank -> 0: the record as JSON
//   3. 0 -> every rank that reported: the exit code, and whether rank 0 aborts (8 bytes). When a
//      rank never answered (killed, stopped, cut off), MPI_Finalize would wait for it forever:
//      rank 0 calls MPI_Abort with the exit code after the report is written, and the others
//      wait for the launcher to end them.
//   4. Otherwise every rank -> 0: "I have it" (1 byte), and 0 -> each of them: finalize or not
//      (1 byte). A rank frozen after it reported would hold MPI_Finalize on every rank: rank 0
//      waits kConfirmWait for every rank's answer, and when one is missing it aborts instead.
// Rank 0 receives (N-1) x (8 + host) bytes + K records (K = distinct configurations); it holds
// 16 bytes per rank that reported, one copy of each distinct host name, a bit per rank, and the
// K records. Nothing is allocated per rank before that rank's message arrives.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "collect/mpi_plugin/mpi_plugin.h"
#include "collect/rank_digests.h"
#include "compare/group.h"
#include "compare/judge.h"
#include "probe/record.h"

namespace denpex {

// Rank 0 waits this long past its deadline for the records it asked for (those ranks have
// answered once, so they are alive); every other rank waits this long past rank 0's deadline.
constexpr double kRecordGrace = 5.0;

// How a rank leaves MPI (MpiJob::finish).
enum class JobEnd {
  finalize,     // every rank answered: MPI_Finalize
  abort,        // this rank calls MPI_Abort: rank 0 when a rank never answered or never
                // confirmed the verdict; any rank whose MPI call failed, or that rank 0 never
                // sent the verdict or its word to finalize
  await_abort,  // rank 0 said it aborts: no MPI_Finalize (Open MPI's waits for every rank);
                // wait for the launcher to end this rank
};

// How long a rank told that rank 0 aborts waits for the launcher before it leaves by itself.
constexpr double kAbortWait = 20.0;
// Before it ends the job, how long a rank waits for the launcher to read what it printed
// (collect/forwarded_output.h): past --timeout only when the launcher itself is stopped.
constexpr double kOutputDrainWait = 2.0;
// Step 4: how long rank 0 waits for every rank to confirm the verdict (they are alive and
// polling, so they answer at once; one that is only slow costs an abort with the same exit
// code, not a wrong one); a rank waits twice that for rank 0's word to finalize.
constexpr double kConfirmWait = 2.0;

struct CollectResult {
  std::vector<ConfigGroup> groups;     // rank 0 only: one per distinct configuration
  std::vector<MissingRank> missing;    // rank 0 only: ranks that did not report in time
  long long bytes_at_root = 0;         // rank 0 only: payload bytes received
  int gone = 0;                        // rank 0 only: ranks that never answered (no digest, or
                                       // no record when asked): they are dead, stopped or cut off
  int nranks = 0;
  std::string error;                   // an MPI call failed: "MPI_Recv from rank 3: <MPI's text>"
  std::string note;                    // rank != 0: rank 0 never acknowledged (its deadline passed)
};

class MpiJob {
 public:
  // Initialises MPI through `api`. Returns false (and sets *error) when MPI_Init fails. Never
  // throws.
  static bool start(const denpex_mpi_plugin* api, int* argc, char*** argv, MpiJob* out,
                    std::string* error);

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Step 0, right after start(). Rank 0: sends every other rank the seconds left until
  // `deadline` and returns `deadline`. Other ranks: wait for that message until `deadline`
  // (their own) and return rank 0's deadline on this rank's clock, or `deadline` when it did
  // not come. A failed MPI call sets *error and returns `deadline`.
  double share_deadline(double deadline, std::string* error);

  // Collective over all ranks that are alive. `mine` is this rank's record, or nullptr when its
  // probe failed (`failure` says why: rank 0 reports the rank as missing with that reason).
  // Rank 0 returns when every rank reported or at `deadline` (CLOCK_MONOTONIC seconds) plus
  // kRecordGrace for records; other ranks return after sending and answering a record request,
  // waiting until rank 0's deadline plus kRecordGrace. A failed MPI call sets `error` and
  // returns at once.
  CollectResult collect(const RankRecord* mine, const std::string& host,
                        const std::string& failure, double deadline);

  // Steps 3 and 4. Rank 0: tells every rank that reported the exit code and whether it aborts
  // (some rank never answered, or did not confirm), returns `code`. Other ranks: wait for it
  // until rank 0's deadline plus `judge_time` (or `own_deadline` plus it when rank 0's is
  // unknown) and return it; return 1 (and set *note) when rank 0 never answered, 2 when an MPI
  // call failed. Sets how finish() ends MPI.
  int agree_exit_code(int code, double own_deadline, double judge_time, std::string* note);

  // Ends MPI as agree_exit_code decided (JobEnd): MPI_Finalize and return; or MPI_Abort with
  // `code` (never returns; a failed MPI_Abort leaves with _exit(code)); or wait up to
  // kAbortWait for the launcher to end this rank, then _exit(code). stdio is flushed first.
  void finish(int code);

  // MPI_Abort with `code` after flushing stdio and waiting for the launcher to read it
  // (wait_for_forwarded_output); _exit(code) when MPI_Abort fails. For a rank
  // that cannot finish the protocol (a failed MPI call).
  [[noreturn]] void abort_job(int code);
  // Flushes stdio, then waits up to kOutputDrainWait until the launcher has read this rank's
  // stdout and stderr pipes; says so on stderr when it has not.
  void wait_for_forwarded_output() const;

  JobEnd end() const { return end_; }
  // Step 4's wait (kConfirmWait), shorter in unit tests.
  void set_confirm_wait(double seconds) { confirm_wait_ = seconds; }

 private:
  using Reported = ReportedRank;   // 16 bytes per rank at rank 0 (collect/rank_digests.h)

  int tell_verdict(int code, std::string* note);
  int hear_verdict(double until, std::string* note);
  // Step 4 at rank 0: true when every rank that reported confirmed within confirm_wait_; tells
  // each one that confirmed whether to finalize. False when one did not (*confirmed says how
  // many did), or with *note set when an MPI call failed.
  bool confirm_at_root(int* confirmed, std::string* note);
  CollectResult send_to_root(const RankRecord* mine, const std::string& host,
                             const std::string& failure, double deadline);
  CollectResult gather_at_root(const RankRecord* mine, const std::string& host,
                               const std::string& failure, double deadline);
  // Rank 0, phase 1: digests until every rank reported or `deadline`.
  bool gather_digests(const std::string& my_host, uint64_t my_digest, const std::string& failure,
                      double deadline, CollectResult* res, std::map<int, std::string>* failures);
  // Rank 0, phase 2: one record per distinct digest, in three steps: ask each digest's lowest
  // rank for its record (rank 0's own is `mine`), receive them until `deadline` plus a grace,
  // and group every reported rank under its record (a rank whose record never came is missing).
  bool fetch_records(const RankRecord* mine, double deadline, CollectResult* res);
  bool request_records(const RankRecord* mine, std::map<int, uint64_t>* pending,
                       std::map<uint64_t, RankRecord>* records, CollectResult* res);
  bool receive_records(double deadline, std::map<int, uint64_t>* pending,
                       std::map<uint64_t, RankRecord>* records, CollectResult* res);
  void group_records(std::map<uint64_t, RankRecord>* records, CollectResult* res);
  // Polls until a message from `source` with one of `tags` waits (returns the tag), `deadline`
  // passes (returns 0) or a call fails (returns -1, *error set).
  int wait_for(int source, std::initializer_list<int> tags, double deadline, std::string* error);
  std::string failed(const char* call, int peer, int code) const;

  const denpex_mpi_plugin* api_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  double root_deadline_ = 0;         // rank != 0: rank 0's deadline on this rank's clock, 0 if unknown
  int gone_ = 0;                     // rank 0: ranks that never answered
  JobEnd end_ = JobEnd::finalize;
  double confirm_wait_ = kConfirmWait;
  std::vector<Reported> reported_;   // rank 0: every rank that sent phase-1 messages
  HostNames host_names_;             // rank 0: each distinct host once
};

}  // namespace denpex
