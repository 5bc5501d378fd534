#include "collect/store_job.h"

#include <algorithm>
#include <cstdlib>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "probe/monotonic_clock.h"

namespace denpex {

namespace {

// A record is a few KiB; the bound only keeps a hostile store from making rank 0 allocate.
constexpr size_t kMaxRecordBytes = 16u << 20;

std::string hex(uint64_t digest) { return fmt::format("{:016x}", digest); }

}  // namespace

std::string store_key_prefix(const TorchrunWorker& w) {
  // Outside torchelastic (a hand-made env:// world) the master's address names the job.
  const std::string job = w.run_id.empty()
                              ? fmt::format("env-{}-{}", w.master_addr, w.master_port)
                              : w.run_id;
  return fmt::format("denpex/v1/{}/{}/", job, w.restart_count);
}

std::string StoreJob::where() const {
  return fmt::format("torchrun's store at {}:{} (MASTER_ADDR:MASTER_PORT)", host_, port_);
}

StoreReply StoreJob::start(const TorchrunWorker& w, double deadline) {
  host_ = w.master_addr;
  port_ = w.master_port;
  prefix_ = store_key_prefix(w);
  rank_ = w.rank;
  size_ = w.world_size;
  return client_.connect(host_, port_, prefix_ + "hello", deadline);
}

bool StoreJob::reconnect(double deadline, std::string* error) {
  earlier_bytes_ += client_.bytes_received();
  client_.close();
  StoreReply s = client_.connect(host_, port_, prefix_ + "hello", deadline);
  if (!s.ok()) *error = fmt::format("rank {}: {}: {}", rank_, where(), s.error);
  return s.ok();
}

bool StoreJob::claim_probe(const std::string& host, const std::string& key, double deadline) {
  probe_prefix_ = prefix_ + "probe/" + host + "/" + key + "/";
  int64_t claim = 0;
  return client_.add(probe_prefix_ + "claim", 1, &claim, deadline).ok() && claim == 1;
}

void StoreJob::share_probe(const RankRecord* mine, double deadline) {
  // "-": no record; the ranks waiting for one then probe themselves.
  const std::string json =
      mine ? nlohmann::json(*mine).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
           : "-";
  client_.set(probe_prefix_ + "rec", json, deadline);
}

bool StoreJob::take_probe(double until, RankRecord* out) {
  const std::string key = probe_prefix_ + "rec";
  StoreReply s = client_.wait({key}, until);
  if (s.status == StoreStatus::timed_out) {
    // The server still holds the timed-out wait: the rest of the job needs a fresh connection.
    std::string error;
    reconnect(monotonic_seconds() + 5.0, &error);
    return false;
  }
  std::string json;
  if (s.ok()) s = client_.get(key, kMaxRecordBytes, &json, monotonic_seconds() + 5.0);
  if (!s.ok() || json == "-") return false;
  auto j = nlohmann::json::parse(json, nullptr, false);
  std::string error;
  return !j.is_discarded() && record_from_json(j, out, &error);
}

bool StoreJob::put_mine(const RankRecord* mine, uint64_t digest, const std::string& host,
                        const std::string& failure, double deadline, std::string* error) {
  StoreReply s;
  if (mine) {
    int64_t claim = 0;
    s = client_.add(prefix_ + "claim/" + hex(digest), 1, &claim, deadline);
    // The first rank of a configuration uploads its record; rank 0 keeps its own.
    if (s.ok() && claim == 1 && rank_ != 0) {
      // Non-UTF-8 bytes become U+FFFD rather than an exception (see configuration_json).
      const std::string json =
          nlohmann::json(*mine).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      s = client_.set(prefix_ + "rec/" + hex(digest), json, deadline);
    }
  }
  if (s.ok() && rank_ != 0) {
    s = client_.set(prefix_ + "d/" + std::to_string(rank_), digest_message(digest, host, failure),
                    deadline);
    int64_t n = 0;
    if (s.ok()) s = client_.add(prefix_ + "n", 1, &n, deadline);
    if (s.ok() && n == size_ - 1) s = client_.set(prefix_ + "all", "1", deadline);
  }
  if (!s.ok()) *error = fmt::format("rank {}: {}: {}", rank_, where(), s.error);
  return s.ok();
}

bool StoreJob::fetch_present(const std::vector<std::string>& keys, const std::string& ready_key,
                             size_t max_bytes, double deadline, std::vector<bool>* present,
                             std::vector<std::string>* values, std::string* error) {
  std::vector<std::string> waited = ready_key.empty() ? keys : std::vector<std::string>{ready_key};
  StoreReply s = keys.empty() ? StoreReply{} : client_.wait(waited, deadline);
  if (s.ok()) {
    present->assign(keys.size(), true);
  } else if (s.status == StoreStatus::timed_out) {
    // The server still holds the timed-out wait: a fresh connection, then key by key.
    if (!reconnect(monotonic_seconds() + 5.0, error)) return false;
    s = client_.check_each(keys, present, monotonic_seconds() + 5.0);
  }
  std::vector<std::string> there;
  for (size_t i = 0; s.ok() && i < keys.size(); ++i)
    if ((*present)[i]) there.push_back(keys[i]);
  std::vector<std::string> got;
  if (s.ok()) s = client_.get_each(there, max_bytes, &got, std::max(deadline, monotonic_seconds()) + 5.0);
  if (!s.ok()) {
    *error = fmt::format("rank {}: {}: {}", rank_, where(), s.error);
    return false;
  }
  values->assign(keys.size(), std::string());
  for (size_t i = 0, j = 0; i < keys.size(); ++i)
    if ((*present)[i]) (*values)[i] = std::move(got[j++]);
  return true;
}

bool StoreJob::gather_digests(uint64_t my_digest, const std::string& my_host,
                              const std::string& failure, double deadline, CollectResult* res) {
  const double started = monotonic_seconds();
  reported_.clear();
  reported_.push_back({0, hosts_.intern(my_host), my_digest});
  if (my_digest == 0) failures_[0] = failure;
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(std::max(0, size_ - 1)));
  for (int r = 1; r < size_; ++r) keys.push_back(prefix_ + "d/" + std::to_string(r));
  std::vector<bool> present;
  std::vector<std::string> values;
  if (!fetch_present(keys, prefix_ + "all", kMaxDigestMessage, deadline, &present, &values,
                     &res->error))
    return false;
  const std::string waited = fmt::format("rank 0 waited {:.1f} s (--timeout)", deadline - started);
  for (int r = 1; r < size_; ++r) {
    const auto i = static_cast<size_t>(r - 1);
    if (!present[i]) {
      res->missing.push_back({r, "", waited});
      continue;
    }
    DigestMessage m = parse_digest_message(values[i]);
    ReportedRank rr{r, hosts_.intern(m.malformed ? std::string_view() : m.host), m.digest};
    if (m.malformed) failures_[r] = "sent a malformed message";
    else if (m.digest == 0) failures_[r] = m.failure;
    reported_.push_back(rr);
  }
  return true;
}

bool StoreJob::fetch_records(const RankRecord* mine, uint64_t my_digest, double deadline,
                             CollectResult* res) {
  std::map<uint64_t, RankRecord> records;
  std::vector<std::string> keys;
  std::vector<uint64_t> digests;
  for (const auto& [digest, rank] : representatives(reported_)) {
    if (mine && digest == my_digest) {
      records[digest] = *mine;
      continue;
    }
    keys.push_back(prefix_ + "rec/" + hex(digest));
    digests.push_back(digest);
  }
  std::vector<bool> present;
  std::vector<std::string> values;
  // Those ranks have put their digests, so they are alive: a grace past the deadline.
  const double until = std::max(deadline, monotonic_seconds()) + kRecordGrace;
  if (!fetch_present(keys, "", kMaxRecordBytes, until, &present, &values, &res->error))
    return false;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!present[i]) continue;
    RankRecord rec;
    std::string err;
    auto parsed = nlohmann::json::parse(values[i], nullptr, false);
    if (!parsed.is_discarded() && record_from_json(parsed, &rec, &err))
      records[digests[i]] = std::move(rec);
  }
  group_reported(reported_, hosts_, &records, &res->groups, &res->missing);
  return true;
}

CollectResult StoreJob::collect(const RankRecord* mine, const std::string& host,
                                const std::string& failure, double deadline) {
  CollectResult res;
  res.nranks = size_;
  const uint64_t digest = mine ? configuration_digest(*mine) : 0;
  if (!put_mine(mine, digest, host, failure, deadline + kRecordGrace, &res.error)) return res;
  if (rank_ != 0) return res;
  if (!gather_digests(digest, host, failure, deadline, &res)) return res;
  for (const ReportedRank& r : reported_) {
    if (r.digest != 0) continue;
    const std::string& reason = failures_[r.rank];
    res.missing.push_back({r.rank, hosts_[r.host], reason.empty() ? "its probe failed" : reason});
  }
  if (!fetch_records(mine, digest, deadline, &res)) return res;
  normalize_groups(&res.groups);
  std::sort(res.missing.begin(), res.missing.end(),
            [](const MissingRank& a, const MissingRank& b) { return a.rank < b.rank; });
  res.bytes_at_root = earlier_bytes_ + client_.bytes_received();
  return res;
}

int StoreJob::agree_exit_code(int code, double until, std::string* note) {
  const std::string key = prefix_ + "verdict";
  if (rank_ == 0) {
    StoreReply s = client_.set(key, std::to_string(code), monotonic_seconds() + 5.0);
    if (!s.ok()) *note = fmt::format("rank 0: could not put the verdict in {}: {}", where(), s.error);
    return code;
  }
  StoreReply s = client_.wait({key}, until);
  std::string v;
  if (s.ok()) s = client_.get(key, 8, &v, monotonic_seconds() + 5.0);
  if (s.ok() && (v == "0" || v == "1" || v == "2")) {
    read_verdict_ = true;
    return v[0] - '0';
  }
  if (s.ok()) {
    *note = fmt::format("rank {}: {} holds a verdict this probe never puts ({} bytes); exiting 2",
                        rank_, where(), v.size());
    return 2;
  }
  if (s.status == StoreStatus::timed_out) {
    *note = fmt::format("rank {}: rank 0 put no verdict in {} before the deadline; exiting 1",
                        rank_, where());
    return 1;
  }
  *note = fmt::format("rank {}: {} went away while waiting for rank 0's verdict ({}); the "
                      "job cannot be judged, exiting 2",
                      rank_, where(), s.error);
  return 2;
}

void StoreJob::acknowledge_verdict(int code) {
  if (rank_ == 0 || !read_verdict_ || !verdict_needs_readers(code)) return;
  const double until = monotonic_seconds() + 2.0;
  int64_t n = 0;
  if (client_.add(prefix_ + "read", 1, &n, until).ok() && n == size_ - 1)
    client_.set(prefix_ + "allread", "1", until);
}

void StoreJob::wait_for_readers(double until) {
  const auto readers = static_cast<int64_t>(reported_.size()) - 1;
  if (readers <= 0) return;
  // Every rank reported: the last reader marks it, and one wait answers when it does.
  if (readers == size_ - 1) {
    client_.wait({prefix_ + "allread"}, until);
    return;
  }
  // Some never reported, so nobody sets "allread": count the readers there are.
  int64_t n = 0;
  while (monotonic_seconds() < until) {
    if (!client_.add(prefix_ + "read", 0, &n, until).ok() || n >= readers) return;
    ::usleep(2000);
  }
}

}  // namespace denpex
