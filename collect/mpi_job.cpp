#include "collect/mpi_job.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "probe/isolated_call.h"

namespace denpex {

namespace {

enum Tag : int { kTagDigest = 7101, kTagRequest = 7102, kTagRecord = 7103, kTagVerdict = 7104 };

// Host names are at most 255 bytes (POSIX HOST_NAME_MAX is 64 on Linux); the reason of a failed
// probe is cut to fit.
constexpr int kMaxDigestMessage = 8 + 256 + 768;

// Rank 0 waits this long past the deadline for the records it asked for: those ranks have
// already answered once, so they are alive.
constexpr double kRecordGrace = 5.0;

void pause_briefly() { ::usleep(200); }

// Polls until a message from `source` with one of `tags` is waiting (returns that tag, the
// message left to be received) or `deadline` passes (returns -1).
int wait_for_tag(int source, std::initializer_list<int> tags, double deadline) {
  while (monotonic_seconds() < deadline) {
    for (int tag : tags) {
      int flag = 0;
      MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) return tag;
    }
    pause_briefly();
  }
  return -1;
}

std::string digest_message(unsigned long long digest, const std::string& host,
                           const std::string& failure) {
  std::string m(8, '\0');
  std::memcpy(&m[0], &digest, 8);
  m += host.substr(0, 255);
  if (digest == 0) m += '\n' + failure.substr(0, kMaxDigestMessage - m.size() - 1);
  return m;
}

struct Reported {
  int rank;
  unsigned long long digest;
  std::string host;
  std::string failure;
};

Reported parse_digest_message(int rank, const char* buf, int len) {
  Reported r{rank, 0, "", ""};
  if (len < 8) {
    r.failure = "sent a malformed message";
    return r;
  }
  std::memcpy(&r.digest, buf, 8);
  std::string rest(buf + 8, static_cast<size_t>(len - 8));
  size_t nl = rest.find('\n');
  r.host = rest.substr(0, nl);
  if (nl != std::string::npos) r.failure = rest.substr(nl + 1);
  return r;
}

}  // namespace

bool MpiJob::start(int* argc, char*** argv, MpiJob* out, std::string* error) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    *error = "MPI_Init failed";
    return false;
  }
  // Errors are return codes from here on, never an abort inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &out->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &out->size_);
  return true;
}

CollectResult MpiJob::collect(const RankRecord* mine, const std::string& host,
                              const std::string& failure, double deadline) {
  CollectResult res;
  res.nranks = size_;
  const unsigned long long my_digest = mine ? configuration_digest(*mine) : 0;

  if (rank_ != 0) {
    std::string msg = digest_message(my_digest, host, failure);
    MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_CHAR, 0, kTagDigest, MPI_COMM_WORLD);
    // Rank 0 either asks for the record or, when another rank represents this configuration,
    // goes straight to the verdict (left queued for agree_exit_code).
    if (wait_for_tag(0, {kTagRequest, kTagVerdict}, deadline) == kTagRequest) {
      char dummy = 0;
      MPI_Recv(&dummy, 1, MPI_CHAR, 0, kTagRequest, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      // Non-UTF-8 bytes become U+FFFD rather than an exception (issue 6).
      std::string json =
          mine ? nlohmann::json(*mine).dump(-1, ' ', false,
                                            nlohmann::json::error_handler_t::replace)
               : std::string("{}");
      MPI_Send(json.data(), static_cast<int>(json.size()), MPI_CHAR, 0, kTagRecord,
               MPI_COMM_WORLD);
    }
    return res;
  }

  // Rank 0, phase 1: one receive posted per rank, polled until all arrive or the deadline.
  const double started = monotonic_seconds();
  const int n = size_;
  std::vector<std::vector<char>> bufs(static_cast<size_t>(n));
  std::vector<MPI_Request> reqs(static_cast<size_t>(n), MPI_REQUEST_NULL);
  for (int r = 1; r < n; ++r) {
    bufs[r].resize(kMaxDigestMessage);
    MPI_Irecv(bufs[r].data(), kMaxDigestMessage, MPI_CHAR, r, kTagDigest, MPI_COMM_WORLD,
              &reqs[r]);
  }
  std::vector<Reported> reported;
  reported.push_back({0, my_digest, host, failure});
  std::vector<bool> done(static_cast<size_t>(n), false);
  done[0] = true;
  int outstanding = n - 1;
  std::vector<int> idx(static_cast<size_t>(n));
  std::vector<MPI_Status> sts(static_cast<size_t>(n));
  while (outstanding > 0 && monotonic_seconds() < deadline) {
    int count = 0;
    MPI_Testsome(n, reqs.data(), &count, idx.data(), sts.data());
    if (count == MPI_UNDEFINED) break;
    for (int i = 0; i < count; ++i) {
      int r = idx[i];
      int len = 0;
      MPI_Get_count(&sts[i], MPI_CHAR, &len);
      res.bytes_at_root += len;
      reported.push_back(parse_digest_message(r, bufs[r].data(), len));
      done[r] = true;
      --outstanding;
    }
    if (count == 0) pause_briefly();
  }
  const std::string waited = fmt::format("rank 0 waited {:.1f} s (--timeout)", deadline - started);
  for (int r = 1; r < n; ++r) {
    if (done[r]) continue;
    MPI_Cancel(&reqs[r]);
    MPI_Request_free(&reqs[r]);
    res.missing.push_back({r, "", waited});
  }
  reported_.clear();
  for (const auto& r : reported) reported_.push_back(r.rank);

  // Phase 2: one full record per distinct digest, from its lowest rank.
  std::map<unsigned long long, std::vector<const Reported*>> by_digest;
  for (const auto& r : reported) {
    if (r.digest == 0) {
      res.missing.push_back({r.rank, r.host,
                             r.failure.empty() ? "its probe failed" : r.failure});
    } else {
      by_digest[r.digest].push_back(&r);
    }
  }
  std::map<int, unsigned long long> pending;  // representative rank -> digest
  std::map<unsigned long long, RankRecord> records;
  for (auto& [digest, members] : by_digest) {
    std::sort(members.begin(), members.end(),
              [](const Reported* a, const Reported* b) { return a->rank < b->rank; });
    int rep = members.front()->rank;
    if (rep == 0 && mine) {
      records[digest] = *mine;
    } else {
      char dummy = 0;
      MPI_Send(&dummy, 1, MPI_CHAR, rep, kTagRequest, MPI_COMM_WORLD);
      pending[rep] = digest;
    }
  }
  const double record_deadline = std::max(deadline, monotonic_seconds()) + kRecordGrace;
  while (!pending.empty() && monotonic_seconds() < record_deadline) {
    bool any = false;
    for (auto it = pending.begin(); it != pending.end();) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(it->first, kTagRecord, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        ++it;
        continue;
      }
      any = true;
      int len = 0;
      MPI_Get_count(&st, MPI_CHAR, &len);
      std::string json(static_cast<size_t>(len), '\0');
      MPI_Recv(&json[0], len, MPI_CHAR, it->first, kTagRecord, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      res.bytes_at_root += len;
      RankRecord rec;
      std::string err;
      auto parsed = nlohmann::json::parse(json, nullptr, false);
      if (!parsed.is_discarded() && record_from_json(parsed, &rec, &err)) {
        records[it->second] = std::move(rec);
      }
      it = pending.erase(it);
    }
    if (!any) pause_briefly();
  }

  for (const auto& [digest, members] : by_digest) {
    auto rec = records.find(digest);
    if (rec == records.end()) {
      for (const Reported* m : members)
        res.missing.push_back({m->rank, m->host, "its record did not arrive or was unreadable"});
      continue;
    }
    ConfigGroup g;
    g.record = rec->second;
    g.digest = digest;
    for (const Reported* m : members) {
      g.ranks.push_back(m->rank);
      g.hosts.push_back(m->host);
    }
    res.groups.push_back(std::move(g));
  }
  normalize_groups(&res.groups);
  std::sort(res.missing.begin(), res.missing.end(),
            [](const MissingRank& a, const MissingRank& b) { return a.rank < b.rank; });
  return res;
}

int MpiJob::agree_exit_code(int code, double deadline, std::string* note) {
  if (rank_ == 0) {
    std::vector<MPI_Request> reqs;
    for (int r : reported_) {
      if (r == 0) continue;
      reqs.emplace_back();
      MPI_Isend(&code, 1, MPI_INT, r, kTagVerdict, MPI_COMM_WORLD, &reqs.back());
    }
    int all = 0;
    while (!all && monotonic_seconds() < deadline + kRecordGrace) {
      MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &all, MPI_STATUSES_IGNORE);
      if (!all) pause_briefly();
    }
    return code;
  }
  if (wait_for_tag(0, {kTagVerdict}, deadline) == kTagVerdict) {
    int v = 1;
    MPI_Recv(&v, 1, MPI_INT, 0, kTagVerdict, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return v;
  }
  *note = fmt::format("rank {}: rank 0 sent no verdict before the deadline; exiting 1", rank_);
  return 1;
}

void MpiJob::finish(int code, bool ranks_missing) {
  if (rank_ == 0 && ranks_missing) {
    // A missing rank may be stuck in a library constructor: MPI_Finalize would wait for it
    // forever. Leaving without it makes the launcher end the job (it kills the remaining ranks
    // and exits non-zero). MPI_Abort would do the same, but Open MPI 4.1.4's mpirun crashes
    // (SIGSEGV in PMIx_server_finalize) printing the abort notice.
    std::fflush(nullptr);
    ::_exit(code);
  }
  MPI_Finalize();
}

}  // namespace denpex
