// Moving rank records to rank 0 through torchrun's c10d TCPStore (collect/tcp_store_client.h),
// with the MPI protocol's shape (collect/mpi_job.h): digests and host names from every rank,
// one full record per distinct configuration, a deadline, missing ranks reported, and one
// verdict every rank exits with.
//
// Keys, all under a prefix unique to the job and to its restart (the agent's store outlives a
// restart): "denpex/v1/<TORCHELASTIC_RUN_ID>/<TORCHELASTIC_RESTART_COUNT>/".
//   claim/<digest>  ADD by every rank with that digest: the one that gets 1 represents it
//   rec/<digest>    the representative's full record (JSON); rank 0 never uploads its own
//   d/<rank>        every rank's digest message (collect/rank_digests.h)
//   n               ADD by every rank but 0 after its d/<rank>; the one that makes it
//                   WORLD_SIZE-1 sets "all", so rank 0 waits on one key, not N
//   verdict         rank 0's exit code ("0", "1", "2"), which every rank waits for
//   read            ADD by every rank but 0 once it holds a failing verdict (or any, when
//                   rank 0 serves the store); the one that makes it WORLD_SIZE-1 sets
//                   "allread", which rank 0 waits on before it exits
// Rank 0 reads N x (digest + host) + K records; nothing is read per rank before that rank's
// key exists. A rank that never reports costs rank 0 its deadline and is reported missing.
#pragma once

#include <string>

#include "collect/launcher.h"
#include "collect/mpi_job.h"
#include "collect/rank_digests.h"
#include "collect/tcp_store_client.h"
#include "probe/record.h"

namespace denpex {

// The key prefix for this worker's job and restart.
std::string store_key_prefix(const TorchrunWorker& w);

class StoreJob {
 public:
  // Connects to MASTER_ADDR:MASTER_PORT and checks the protocol before `deadline`. Not ok:
  // unreachable, or a server this client cannot speak to (the caller exits 2).
  StoreReply start(const TorchrunWorker& w, double deadline);

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Every rank puts its digest and host (and, when it represents its configuration, its
  // record). Rank 0 waits until every rank reported or `deadline`, then for the records it
  // needs until `deadline` plus kRecordGrace; other ranks return once their keys are put.
  // A store error sets `error` (the caller exits 2).
  CollectResult collect(const RankRecord* mine, const std::string& host,
                        const std::string& failure, double deadline);

  // Rank 0: puts `code` as the verdict and returns it. Other ranks: wait for the verdict
  // until `until`; return it, 1 (and *note) when rank 0 put none by then, 2 (and *note) when
  // the store went away or answered what no rank 0 puts.
  int agree_exit_code(int code, double until, std::string* note);

  // Whether rank 0 serves the store itself (collect/tcp_store_server.h): it leaves with rank 0.
  void set_rank0_serves(bool serves) { rank0_serves_ = serves; }
  // Whether rank 0 must outlast the others' reading of `code`: torchrun stops every worker
  // once one exits non-zero, so a rank 0 that left first with a failing verdict could have the
  // others stopped before they exit with it; a store rank 0 serves leaves with it.
  bool verdict_needs_readers(int code) const { return code != 0 || rank0_serves_; }
  // Other ranks, once agree_exit_code read the verdict from the store and it needs readers:
  // count themselves on a key, the last of WORLD_SIZE-1 marking them all on one more. Does
  // nothing on rank 0 or when no verdict was read; a store error is ignored (rank 0's wait is
  // bounded).
  void acknowledge_verdict(int code);
  // Rank 0: waits until every rank that reported has acknowledged the verdict, or `until`.
  void wait_for_readers(double until);

  // One probe for the ranks of a host whose probe inputs are the same (probe/probe_inputs.h),
  // under "probe/<host>/<key>/". claim_probe: true when this rank is the first to ask, and then
  // probes and calls share_probe with its record, or with none when it has none, so the others
  // probe themselves at once instead of waiting. A store error is false: the rank probes.
  bool claim_probe(const std::string& host, const std::string& key, double deadline);
  void share_probe(const RankRecord* mine, double deadline);
  // The claiming rank's record, when it is shared before `until`; false when none comes by
  // then, when that rank had none, or on a store error (the connection is then fresh again, or
  // closed for the collect step to report). The record keeps the sharer's rank and pid.
  bool take_probe(double until, RankRecord* out);

  long long bytes_at_root() const { return client_.bytes_received(); }

 private:
  std::string probe_prefix_;   // "probe/<host>/<key>/" under prefix_, once claimed
  bool put_mine(const RankRecord* mine, uint64_t digest, const std::string& host,
                const std::string& failure, double deadline, std::string* error);
  bool reconnect(double deadline, std::string* error);
  // Rank 0: which of `keys` exist and their values, once `ready_key` (or, when "", every key)
  // exists or at `deadline` (then key by key on a fresh connection); values[i] is "" for an
  // absent key. False with *error when the store fails.
  bool fetch_present(const std::vector<std::string>& keys, const std::string& ready_key,
                     size_t max_bytes, double deadline, std::vector<bool>* present,
                     std::vector<std::string>* values, std::string* error);
  bool gather_digests(uint64_t my_digest, const std::string& my_host, const std::string& failure,
                      double deadline, CollectResult* res);
  bool fetch_records(const RankRecord* mine, uint64_t my_digest, double deadline,
                     CollectResult* res);
  std::string where() const;   // "torchrun's store at HOST:PORT (MASTER_ADDR:MASTER_PORT)"

  TcpStoreClient client_;
  std::string host_;
  int port_ = 0;
  std::string prefix_;
  int rank_ = 0;
  int size_ = 1;
  bool rank0_serves_ = false;
  bool read_verdict_ = false;            // other ranks: the verdict came from the store
  long long earlier_bytes_ = 0;          // read on connections closed by a timed-out wait
  std::vector<ReportedRank> reported_;   // rank 0
  HostNames hosts_;                      // rank 0
  std::map<int, std::string> failures_;  // rank 0: ranks whose probe failed, with the reason
};

}  // namespace denpex
