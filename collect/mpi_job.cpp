#include "collect/mpi_job.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collect/forwarded_output.h"
#include "probe/monotonic_clock.h"

namespace denpex {

namespace {

enum Tag : int {
  kTagDigest = 7101,
  kTagRequest = 7102,
  kTagRecord = 7103,
  kTagVerdict = 7104,
  kTagAck = 7105,
  kTagDeadline = 7106,
  kTagConfirm = 7107,
  kTagEnd = 7108,
};

// The verdict message (step 3): the exit code, and 1 when rank 0 ends the job with MPI_Abort.
struct Verdict {
  int32_t code;
  int32_t aborts;
};

void pause_briefly() { ::usleep(200); }

}  // namespace

std::string MpiJob::failed(const char* call, int peer, int code) const {
  char text[512] = {};
  api_->error_string(code, text, sizeof text);
  return fmt::format("rank {}: {} {} rank {} failed: {}", rank_, call,
                     std::strcmp(call, "MPI_Send") == 0 ? "to" : "from", peer, text);
}

bool MpiJob::start(const denpex_mpi_plugin* api, int* argc, char*** argv, MpiJob* out,
                   std::string* error) {
  out->api_ = api;
  int rc = api->init(argc, argv, &out->rank_, &out->size_);
  if (rc != 0) {
    char text[512] = {};
    api->error_string(rc, text, sizeof text);
    *error = fmt::format("MPI_Init failed: {}", text);
    return false;
  }
  return true;
}

int MpiJob::wait_for(int source, std::initializer_list<int> tags, double deadline,
                     std::string* error) {
  while (monotonic_seconds() < deadline) {
    for (int tag : tags) {
      int found = 0, from = 0, len = 0;
      int rc = api_->iprobe(source, tag, &found, &from, &len);
      if (rc != 0) {
        *error = failed("MPI_Iprobe", source, rc);
        return -1;
      }
      if (found) return tag;
    }
    pause_briefly();
  }
  return 0;
}

double MpiJob::share_deadline(double deadline, std::string* error) {
  if (rank_ == 0) {
    // 8 bytes each: a small send completes without waiting for the receiver (eager), so a
    // rank that is already stopped or stuck in its probe costs nothing here.
    const double left = deadline - monotonic_seconds();
    for (int r = 1; r < size_; ++r) {
      if (int rc = api_->send(&left, sizeof left, r, kTagDeadline)) {
        *error = failed("MPI_Send", r, rc);
        return deadline;
      }
    }
    return deadline;
  }
  int tag = wait_for(0, {kTagDeadline}, deadline, error);
  if (tag <= 0) return deadline;
  double left = 0;
  if (int rc = api_->recv(&left, sizeof left, 0, kTagDeadline)) {
    *error = failed("MPI_Recv", 0, rc);
    return deadline;
  }
  root_deadline_ = monotonic_seconds() + std::max(0.0, left);
  return root_deadline_;
}

CollectResult MpiJob::collect(const RankRecord* mine, const std::string& host,
                              const std::string& failure, double deadline) {
  return rank_ == 0 ? gather_at_root(mine, host, failure, deadline)
                    : send_to_root(mine, host, failure, deadline);
}

CollectResult MpiJob::send_to_root(const RankRecord* mine, const std::string& host,
                                   const std::string& failure, double deadline) {
  CollectResult res;
  res.nranks = size_;
  const std::string msg = digest_message(mine ? configuration_digest(*mine) : 0, host, failure);
  if (int rc = api_->send(msg.data(), static_cast<int>(msg.size()), 0, kTagDigest)) {
    res.error = failed("MPI_Send", 0, rc);
    return res;
  }
  // Rank 0 acknowledges as soon as it sees the digest, telling how long it still waits. Until
  // then only this rank's own deadline is known; rank 0 may be later (a longer --timeout, a slow
  // probe), hence the grace.
  int tag = wait_for(0, {kTagAck}, deadline + kRecordGrace, &res.error);
  if (tag < 0) return res;
  if (tag == 0) {
    res.note = fmt::format("rank {}: rank 0 did not acknowledge this rank's report before the "
                           "deadline (--timeout)", rank_);
    return res;
  }
  double left = 0;
  if (int rc = api_->recv(&left, sizeof left, 0, kTagAck)) {
    res.error = failed("MPI_Recv", 0, rc);
    return res;
  }
  root_deadline_ = monotonic_seconds() + std::max(0.0, left);
  // Rank 0 asks for the record by its deadline or, when another rank represents this
  // configuration, goes straight to the verdict (left queued for agree_exit_code).
  tag = wait_for(0, {kTagRequest, kTagVerdict}, root_deadline_ + kRecordGrace, &res.error);
  if (tag != kTagRequest) return res;
  char dummy = 0;
  if (int rc = api_->recv(&dummy, 1, 0, kTagRequest)) {
    res.error = failed("MPI_Recv", 0, rc);
    return res;
  }
  // Non-UTF-8 bytes become U+FFFD rather than an exception.
  const std::string json =
      mine ? nlohmann::json(*mine).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
           : std::string("{}");
  if (int rc = api_->send(json.data(), static_cast<int>(json.size()), 0, kTagRecord))
    res.error = failed("MPI_Send", 0, rc);
  return res;
}

bool MpiJob::gather_digests(const std::string& my_host, uint64_t my_digest,
                            const std::string& failure, double deadline, CollectResult* res,
                            std::map<int, std::string>* failures) {
  static_assert(sizeof(Reported) == 16, "rank 0 keeps 16 bytes per rank (mpi_job.h)");
  // One copy of each host name: 1M ranks on 125,000 hosts keep 125,000 strings, not 1M.
  auto host_id = [&](std::string_view h) { return host_names_.intern(h); };
  const double started = monotonic_seconds();
  reported_.clear();
  reported_.push_back({0, host_id(my_host), my_digest});
  if (my_digest == 0) (*failures)[0] = failure;
  std::vector<bool> seen(static_cast<size_t>(size_), false);
  seen[0] = true;
  int outstanding = size_ - 1;
  std::string buf;
  while (outstanding > 0 && monotonic_seconds() < deadline) {
    int found = 0, from = 0, len = 0;
    if (int rc = api_->iprobe(DENPEX_MPI_ANY_SOURCE, kTagDigest, &found, &from, &len)) {
      res->error = failed("MPI_Iprobe", -1, rc);
      return false;
    }
    if (!found) {
      pause_briefly();
      continue;
    }
    buf.resize(static_cast<size_t>(std::max(len, 0)));
    if (int rc = api_->recv(&buf[0], len, from, kTagDigest)) {
      res->error = failed("MPI_Recv", from, rc);
      return false;
    }
    res->bytes_at_root += len;
    // A rank outside the world or a second message from one rank is not ours to count.
    if (from <= 0 || from >= size_ || seen[static_cast<size_t>(from)]) continue;
    seen[static_cast<size_t>(from)] = true;
    --outstanding;
    Reported r{from, 0, 0};
    DigestMessage m = parse_digest_message(std::string_view(buf.data(), static_cast<size_t>(len)));
    if (m.malformed) {
      r.host = host_id("");
      (*failures)[from] = "sent a malformed message";
    } else {
      r.digest = m.digest;
      r.host = host_id(m.host);
      if (r.digest == 0) (*failures)[from] = m.failure;
    }
    reported_.push_back(r);
    double left = deadline - monotonic_seconds();
    if (int rc = api_->send(&left, sizeof left, from, kTagAck)) {
      res->error = failed("MPI_Send", from, rc);
      return false;
    }
  }
  const std::string waited = fmt::format("rank 0 waited {:.1f} s (--timeout)", deadline - started);
  for (int r = 1; r < size_; ++r) {
    if (seen[static_cast<size_t>(r)]) continue;
    res->missing.push_back({r, "", waited});
    ++res->gone;
  }
  return true;
}

bool MpiJob::fetch_records(const RankRecord* mine, double deadline, CollectResult* res) {
  std::map<int, uint64_t> pending;  // representative rank -> digest
  std::map<uint64_t, RankRecord> records;
  if (!request_records(mine, &pending, &records, res)) return false;
  if (!receive_records(deadline, &pending, &records, res)) return false;
  // A representative that answered once and then sent no record is as gone as a silent rank.
  res->gone += static_cast<int>(pending.size());
  group_records(&records, res);
  return true;
}

bool MpiJob::request_records(const RankRecord* mine, std::map<int, uint64_t>* pending,
                             std::map<uint64_t, RankRecord>* records, CollectResult* res) {
  // The lowest rank of each digest represents it; reported_ is in arrival order.
  for (const auto& [digest, rank] : representatives(reported_)) {
    if (rank == 0 && mine) {
      (*records)[digest] = *mine;
      continue;
    }
    char dummy = 0;
    if (int rc = api_->send(&dummy, 1, rank, kTagRequest)) {
      res->error = failed("MPI_Send", rank, rc);
      return false;
    }
    (*pending)[rank] = digest;
  }
  return true;
}

bool MpiJob::receive_records(double deadline, std::map<int, uint64_t>* pending,
                             std::map<uint64_t, RankRecord>* records, CollectResult* res) {
  const double record_deadline = std::max(deadline, monotonic_seconds()) + kRecordGrace;
  std::string json;
  while (!pending->empty() && monotonic_seconds() < record_deadline) {
    bool any = false;
    for (auto it = pending->begin(); it != pending->end();) {
      int found = 0, from = 0, len = 0;
      if (int rc = api_->iprobe(it->first, kTagRecord, &found, &from, &len)) {
        res->error = failed("MPI_Iprobe", it->first, rc);
        return false;
      }
      if (!found) {
        ++it;
        continue;
      }
      any = true;
      json.assign(static_cast<size_t>(std::max(len, 0)), '\0');
      if (int rc = api_->recv(&json[0], len, it->first, kTagRecord)) {
        res->error = failed("MPI_Recv", it->first, rc);
        return false;
      }
      res->bytes_at_root += len;
      RankRecord rec;
      std::string err;
      auto parsed = nlohmann::json::parse(json, nullptr, false);
      if (!parsed.is_discarded() && record_from_json(parsed, &rec, &err))
        (*records)[it->second] = std::move(rec);
      it = pending->erase(it);
    }
    if (!any) pause_briefly();
  }
  return true;
}

void MpiJob::group_records(std::map<uint64_t, RankRecord>* records, CollectResult* res) {
  group_reported(reported_, host_names_, records, &res->groups, &res->missing);
}

CollectResult MpiJob::gather_at_root(const RankRecord* mine, const std::string& host,
                                     const std::string& failure, double deadline) {
  CollectResult res;
  res.nranks = size_;
  std::map<int, std::string> failures;
  const uint64_t my_digest = mine ? configuration_digest(*mine) : 0;
  if (!gather_digests(host, my_digest, failure, deadline, &res, &failures)) return res;
  for (const Reported& r : reported_) {
    if (r.digest != 0) continue;
    const std::string& reason = failures[r.rank];
    res.missing.push_back({r.rank, host_names_[r.host],
                           reason.empty() ? "its probe failed" : reason});
  }
  if (!fetch_records(mine, deadline, &res)) return res;
  gone_ = res.gone;
  normalize_groups(&res.groups);
  std::sort(res.missing.begin(), res.missing.end(),
            [](const MissingRank& a, const MissingRank& b) { return a.rank < b.rank; });
  return res;
}

int MpiJob::agree_exit_code(int code, double own_deadline, double judge_time,
                            std::string* note) {
  if (rank_ == 0) return tell_verdict(code, note);
  // Whatever goes wrong below, rank 0 cannot end this job for this rank: it ends it itself.
  end_ = JobEnd::abort;
  return hear_verdict((root_deadline_ > 0 ? root_deadline_ : own_deadline) + judge_time, note);
}

int MpiJob::tell_verdict(int code, std::string* note) {
  end_ = JobEnd::abort;
  const Verdict v{code, gone_ > 0 ? 1 : 0};
  // Ranks that reported are alive and waiting for these 8 bytes: a small send completes
  // without waiting for the receiver, and keeps no request per rank at rank 0.
  for (const Reported& r : reported_) {
    if (r.rank == 0) continue;
    if (int rc = api_->send(&v, sizeof v, r.rank, kTagVerdict)) {
      *note = failed("MPI_Send", r.rank, rc);
      return code;
    }
  }
  if (gone_ > 0) return code;
  int confirmed = 0;
  if (confirm_at_root(&confirmed, note)) {
    end_ = JobEnd::finalize;
  } else if (note->empty()) {
    *note = fmt::format("rank 0: {} of {} ranks did not confirm the verdict within {:.1f} s "
                        "(stopped?); ending the job with MPI_Abort({})",
                        static_cast<int>(reported_.size()) - 1 - confirmed,
                        static_cast<int>(reported_.size()) - 1, confirm_wait_, code);
  }
  return code;
}

bool MpiJob::confirm_at_root(int* confirmed, std::string* note) {
  // A bit per rank: a rank that confirms twice is counted once.
  std::vector<bool> ok(static_cast<size_t>(size_), false);
  const int expected = static_cast<int>(reported_.size()) - 1;
  const double until = monotonic_seconds() + confirm_wait_;
  while (*confirmed < expected && monotonic_seconds() < until) {
    int found = 0, from = 0, len = 0;
    if (int rc = api_->iprobe(DENPEX_MPI_ANY_SOURCE, kTagConfirm, &found, &from, &len)) {
      *note = failed("MPI_Iprobe", -1, rc);
      return false;
    }
    if (!found) {
      pause_briefly();
      continue;
    }
    char byte = 0;
    if (int rc = api_->recv(&byte, 1, from, kTagConfirm)) {
      *note = failed("MPI_Recv", from, rc);
      return false;
    }
    if (from > 0 && from < size_ && !ok[static_cast<size_t>(from)]) {
      ok[static_cast<size_t>(from)] = true;
      ++*confirmed;
    }
  }
  const bool all = *confirmed == expected;
  const char finalize = all ? 1 : 0;
  for (int r = 1; r < size_; ++r) {
    if (!ok[static_cast<size_t>(r)]) continue;
    if (int rc = api_->send(&finalize, 1, r, kTagEnd)) {
      *note = failed("MPI_Send", r, rc);
      return false;
    }
  }
  return all;
}

int MpiJob::hear_verdict(double until, std::string* note) {
  std::string error;
  int tag = wait_for(0, {kTagVerdict}, until, &error);
  if (tag < 0) {
    *note = error;
    return 2;
  }
  if (tag == 0) {
    *note = fmt::format("rank {}: rank 0 sent no verdict before the deadline; exiting 1", rank_);
    return 1;
  }
  Verdict v{1, 0};
  if (int rc = api_->recv(&v, sizeof v, 0, kTagVerdict)) {
    *note = failed("MPI_Recv", 0, rc);
    return 2;
  }
  if (v.aborts) {
    end_ = JobEnd::await_abort;
    return v.code;
  }
  const char byte = 1;
  if (int rc = api_->send(&byte, 1, 0, kTagConfirm)) {
    *note = failed("MPI_Send", 0, rc);
    return v.code;
  }
  // Rank 0 waits up to confirm_wait_ for the other ranks' confirmations before it answers.
  tag = wait_for(0, {kTagEnd}, monotonic_seconds() + 2 * confirm_wait_, &error);
  if (tag < 0) {
    *note = error;
    return v.code;
  }
  if (tag == 0) {
    *note = fmt::format("rank {}: rank 0 did not say whether to finalize; ending the job with "
                        "MPI_Abort({})", rank_, v.code);
    return v.code;
  }
  char finalize = 0;
  if (int rc = api_->recv(&finalize, 1, 0, kTagEnd)) {
    *note = failed("MPI_Recv", 0, rc);
    return v.code;
  }
  end_ = finalize ? JobEnd::finalize : JobEnd::await_abort;
  return v.code;
}

void MpiJob::abort_job(int code) {
  // mpiexec.hydra stops forwarding output once the abort reaches it: the report must have left
  // this rank's pipes first (collect/forwarded_output.h).
  wait_for_forwarded_output();
  // The launcher ends every rank; MPI_Abort returns only when it could not reach it.
  api_->abort(code);
  ::_exit(code);
}

void MpiJob::wait_for_forwarded_output() const {
  std::fflush(nullptr);
  const double until = monotonic_seconds() + kOutputDrainWait;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    if (wait_until_read(fd, until) != DrainStatus::timed_out) continue;
    std::fprintf(stderr,
                 "denpex-probe: rank %d: the launcher had not read this rank's %s within %.0f s "
                 "(a stopped or overloaded launcher); ending the job anyway: the report may not "
                 "reach the job's output (a --json file holds it whole)\n",
                 rank_, fd == STDOUT_FILENO ? "stdout" : "stderr", kOutputDrainWait);
    return;
  }
}

void MpiJob::finish(int code) {
  switch (end_) {
    case JobEnd::finalize:
      std::fflush(nullptr);
      api_->finalize();
      return;
    case JobEnd::abort:
      // MPI_Abort is how MPI ends a job that cannot finish. Leaving without MPI_Finalize
      // (_exit) while other ranks wait in MPI_Finalize's fence makes Open MPI 4.1.4's mpirun
      // crash in its teardown (PMIx_server_finalize, a collective still pending).
      abort_job(code);
    case JobEnd::await_abort: {
      // MPI_Finalize would wait for the rank that is gone. Rank 0's MPI_Abort ends this rank;
      // if the launcher never does, leave with the verdict.
      wait_for_forwarded_output();
      const double until = monotonic_seconds() + kAbortWait;
      while (monotonic_seconds() < until) ::usleep(50 * 1000);
      ::_exit(code);
    }
  }
}

}  // namespace denpex
