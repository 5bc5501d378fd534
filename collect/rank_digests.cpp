#include "collect/rank_digests.h"

#include <cstring>

namespace denpex {

std::string digest_message(uint64_t digest, const std::string& host, const std::string& failure) {
  std::string m(8, '\0');
  std::memcpy(&m[0], &digest, 8);
  m += host.substr(0, 255);
  if (digest == 0) m += '\n' + failure.substr(0, kMaxDigestMessage - m.size() - 1);
  return m;
}

DigestMessage parse_digest_message(std::string_view message) {
  DigestMessage d;
  if (message.size() < 8) {
    d.malformed = true;
    return d;
  }
  std::memcpy(&d.digest, message.data(), 8);
  std::string_view rest = message.substr(8);
  size_t nl = rest.find('\n');
  d.host = rest.substr(0, nl);
  if (d.digest == 0 && nl != std::string_view::npos) d.failure = std::string(rest.substr(nl + 1));
  return d;
}

uint32_t HostNames::intern(std::string_view host) {
  auto it = ids_.find(host);
  if (it != ids_.end()) return it->second;
  names_.emplace_back(host);
  auto id = static_cast<uint32_t>(names_.size() - 1);
  ids_.emplace(names_.back(), id);
  return id;
}

std::map<uint64_t, int> representatives(const std::vector<ReportedRank>& reported) {
  std::map<uint64_t, int> rep;
  for (const ReportedRank& r : reported) {
    if (r.digest == 0) continue;
    auto it = rep.find(r.digest);
    if (it == rep.end() || r.rank < it->second) rep[r.digest] = r.rank;
  }
  return rep;
}

void group_reported(const std::vector<ReportedRank>& reported, const HostNames& hosts,
                    std::map<uint64_t, RankRecord>* records, std::vector<ConfigGroup>* groups,
                    std::vector<MissingRank>* missing) {
  std::map<uint64_t, size_t> group_of;
  for (auto& [digest, rec] : *records) {
    group_of[digest] = groups->size();
    ConfigGroup g;
    g.record = std::move(rec);
    g.digest = digest;
    groups->push_back(std::move(g));
  }
  for (const ReportedRank& r : reported) {
    if (r.digest == 0) continue;
    auto g = group_of.find(r.digest);
    if (g == group_of.end()) {
      missing->push_back({r.rank, hosts[r.host], "its record did not arrive or was unreadable"});
      continue;
    }
    ConfigGroup& group = (*groups)[g->second];
    group.ranks.push_back(r.rank);
    // Consecutive ranks usually share a host: keep one entry per run (normalize_groups dedups).
    if (group.hosts.empty() || group.hosts.back() != hosts[r.host])
      group.hosts.push_back(hosts[r.host]);
  }
}

}  // namespace denpex
