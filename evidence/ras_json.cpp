#include "evidence/ras_json.h"

#include "compare/finding_codes.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/fold.h"
#include "compare/ras_counts.h"

namespace denpex::evidence {

namespace {

// The index of `op` in report.ops; report.ops.size() when absent.
uint32_t op_index(const RasReport& report, const std::string& op) {
  auto it = std::find(report.ops.begin(), report.ops.end(), op);
  return static_cast<uint32_t>(it - report.ops.begin());
}

RasCount* count_of(RasRank* r, uint32_t op) {
  for (RasCount& c : r->counts)
    if (c.op == op) return &c;
  return nullptr;
}

}  // namespace

void set_ras_count(RasReport* report, RasRank* r, const std::string& op, unsigned long long n) {
  uint32_t i = op_index(*report, op);
  if (i == report->ops.size()) report->ops.push_back(op);
  if (RasCount* c = count_of(r, i)) c->n = n;
  else r->counts.push_back(RasCount{i, n});
}

void erase_ras_count(const RasReport& report, RasRank* r, const std::string& op) {
  uint32_t i = op_index(report, op);
  r->counts.erase(std::remove_if(r->counts.begin(), r->counts.end(), [&](const RasCount& c) { return c.op == i; }),
                  r->counts.end());
}

bool ras_count(const RasReport& report, const RasRank& r, const std::string& op, unsigned long long* n) {
  uint32_t i = op_index(report, op);
  for (const RasCount& c : r.counts)
    if (c.op == i) {
      *n = c.n;
      return true;
    }
  return false;
}

namespace {

std::string comm_label(const RasCommunicator& c) { return c.hash.empty() ? std::string("(no hash)") : c.hash; }

// One operation at a time, in the order of their names: only one operation's counts are held.
void judge_counts(const RasReport& report, const RasCommunicator& c, std::vector<Finding>* out) {
  std::vector<uint32_t> ops(report.ops.size());
  for (uint32_t i = 0; i < ops.size(); ++i) ops[i] = i;
  std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) { return report.ops[a] < report.ops[b]; });
  std::vector<RasOpCount> counts;
  for (uint32_t op : ops) {
    counts.clear();
    for (const RasRank& r : c.ranks)
      for (const RasCount& k : r.counts)
        if (k.op == op) counts.push_back(RasOpCount{r.rank, k.n, r.host});
    Finding f;
    if (!counts.empty() && ras_count_finding(judge_ras_counts(counts), comm_label(c), report.ops[op], &f))
      out->push_back(std::move(f));
  }
}

void judge_missing(const RasCommunicator& c, std::vector<Finding>* out) {
  std::vector<int> dead, unreachable;
  std::vector<std::string> dead_hosts, unreachable_hosts;
  for (const RasMissingRank& m : c.missing) {
    (m.dead ? dead : unreachable).push_back(m.rank);
    if (!m.host.empty() && m.host != "unknown") (m.dead ? dead_hosts : unreachable_hosts).push_back(m.host);
  }
  auto finding = [&](FindingCode code, Severity sev, std::vector<int> ranks, std::vector<std::string> hosts,
                     const char* what, const char* fix) {
    std::sort(ranks.begin(), ranks.end());
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    Finding f;
    f.code = code;
    f.severity = sev;
    f.comm = comm_label(c);
    f.message = fmt::format("{} of communicator {} {}", rank_phrase(ranks, hosts), comm_label(c), what);
    f.ranks = std::move(ranks);
    f.hosts = std::move(hosts);
    f.fix = fix;
    out->push_back(std::move(f));
  };
  if (!dead.empty())
    finding(FindingCode::ras_rank_dead, Severity::error, dead, dead_hosts,
            "is considered dead by NCCL's RAS: its process is gone, and the others wait for it",
            "read that rank's own log for why its process ended (a crash, the OOM killer, a node failure)");
  if (!unreachable.empty())
    finding(FindingCode::collective_ranks_absent, Severity::warning, unreachable, unreachable_hosts,
            "could not be reached by NCCL's RAS: their state is unknown",
            "look at those ranks' nodes and logs; run ncclras again to see whether they are dead");
}

void judge_errors(const RasCommunicator& c, std::vector<Finding>* out) {
  for (const RasRank& r : c.ranks) {
    bool init_bad = r.init_state != 0 && r.init_state != 7;
    bool async_bad = r.async_error != 0 && r.async_error != 7;
    if (!init_bad && !async_bad) continue;
    Finding f;
    f.code = FindingCode::ras_rank_error;
    f.severity = Severity::error;
    f.comm = comm_label(c);
    f.ranks = {r.rank};
    if (!r.host.empty()) f.hosts = {r.host};
    f.found = fmt::format("init_state {}, async_error {}", r.init_state, r.async_error);
    f.message = fmt::format("{} of communicator {} reports an NCCL error ({}{}{})", rank_phrase(f.ranks, f.hosts),
                            comm_label(c), init_bad ? fmt::format("init state {}", r.init_state) : "",
                            init_bad && async_bad ? ", " : "",
                            async_bad ? fmt::format("async error {}", r.async_error) : "");
    f.fix = "read that rank's NCCL WARN lines (NCCL_DEBUG=WARN) for the error it hit first";
    out->push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> judge_ras(const RasReport& report) {
  std::vector<Finding> out;
  for (const RasCommunicator& c : report.communicators) {
    judge_counts(report, c, &out);
    judge_missing(c, &out);
    judge_errors(c, &out);
  }
  return out;
}

}  // namespace denpex::evidence
