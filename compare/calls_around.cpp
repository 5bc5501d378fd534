#include "compare/calls_around.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "compare/finding_code.h"

namespace denpex {

using nlohmann::json;

namespace {

bool is_p2p(CollKind k) { return k == CollKind::send || k == CollKind::recv; }

// One rank's collectives and the position of the first.
struct Aligned {
  const CommSequence* seq = nullptr;
  std::vector<const CollectiveCall*> calls;
};

std::vector<Aligned> aligned(const std::vector<CommSequence>& sequences, const std::string& comm, long long* start) {
  std::vector<Aligned> out;
  bool numbered = true;
  *start = 0;
  for (const auto& s : sequences) {
    if (s.comm != comm) continue;
    Aligned a{&s, {}};
    for (const auto& c : s.calls)
      if (!is_p2p(c.kind)) a.calls.push_back(&c);
    for (const auto* c : a.calls) numbered = numbered && c->coll_seq >= 0;
    out.push_back(std::move(a));
  }
  if (!numbered) return out;
  for (const auto& a : out)
    if (!a.calls.empty()) *start = std::max(*start, a.calls.front()->coll_seq);
  for (auto& a : out)
    a.calls.erase(a.calls.begin(), std::find_if(a.calls.begin(), a.calls.end(),
                                                [&](const CollectiveCall* c) { return c->coll_seq >= *start; }));
  return out;
}

}  // namespace

CallsAround calls_around(const std::vector<CommSequence>& sequences, const std::string& comm, long long seq, int radius,
                         std::size_t max_rows) {
  CallsAround out;
  out.comm = comm;
  out.seq = seq;
  if (seq < 0) return out;
  long long start = 0;
  std::vector<Aligned> ranks = aligned(sequences, comm, &start);
  out.first = std::max(start, seq - radius);
  long long last = seq + radius;
  std::map<std::vector<std::string>, CallsAroundRow> rows;
  for (const auto& a : ranks) {
    std::vector<std::string> calls;
    for (long long p = out.first; p <= last; ++p) {
      long long i = p - start;
      calls.push_back(i >= 0 && i < static_cast<long long>(a.calls.size()) ? describe(*a.calls[static_cast<std::size_t>(i)]) : "");
    }
    CallsAroundRow& row = rows[calls];
    row.calls = calls;
    row.ranks.push_back(a.seq->global_rank >= 0 ? a.seq->global_rank : a.seq->rank);
    if (!a.seq->host.empty()) row.hosts.push_back(a.seq->host);
  }
  for (auto& kv : rows) {
    CallsAroundRow& r = kv.second;
    std::sort(r.ranks.begin(), r.ranks.end());
    r.ranks.erase(std::unique(r.ranks.begin(), r.ranks.end()), r.ranks.end());
    std::sort(r.hosts.begin(), r.hosts.end());
    r.hosts.erase(std::unique(r.hosts.begin(), r.hosts.end()), r.hosts.end());
    out.rows.push_back(std::move(r));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const CallsAroundRow& a, const CallsAroundRow& b) {
    if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
    return a.ranks < b.ranks;
  });
  if (out.rows.size() > max_rows) {
    out.rows_dropped = out.rows.size() - max_rows;
    out.rows.resize(max_rows);
  }
  return out;
}

json calls_around_json(const CallsAround& a) {
  json rows = json::array();
  for (const auto& r : a.rows) {
    json calls = json::array();
    for (const auto& c : r.calls) calls.push_back(c.empty() ? json(nullptr) : json(c));
    rows.push_back({{"ranks", r.ranks}, {"hosts", r.hosts}, {"calls", calls}});
  }
  json j = {{"comm", a.comm}, {"seq", a.seq}, {"first", a.first}, {"rows", rows}};
  if (a.rows_dropped > 0) j["rows_dropped"] = a.rows_dropped;
  return j;
}

void attach_calls_around(const std::vector<CommSequence>& sequences, json* report) {
  // The report is JSON (any mode's), so its codes are names here.
  const std::set<std::string> codes = {code_name(FindingCode::collective_mismatch),
                                       code_name(FindingCode::collective_args_mismatch),
                                       code_name(FindingCode::collective_missing)};
  if (!report->is_object() || !report->contains("findings") || !(*report)["findings"].is_array()) return;
  for (auto& f : (*report)["findings"]) {
    if (!f.is_object() || !f.contains("code") || !f["code"].is_string() || !codes.count(f["code"].get<std::string>())) continue;
    if (!f.contains("comm") || !f["comm"].is_string() || !f.contains("seq") || !f["seq"].is_number_integer()) continue;
    CallsAround a = calls_around(sequences, f["comm"].get<std::string>(), f["seq"].get<long long>());
    if (!a.rows.empty()) f["calls_around"] = calls_around_json(a);
  }
}

}  // namespace denpex
