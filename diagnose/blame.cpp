#include "diagnose/blame.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/fold.h"

namespace denpex::diag {

namespace {

constexpr size_t kEvidencePerParty = 3;

bool own(Failure::Kind k) {
  return k == Failure::Kind::oom || k == Failure::Kind::own_error || k == Failure::Kind::nccl_warn;
}

// Lower is more specific: an OOM or a library error explains more than a generic exception.
int specificity(const Failure& f) {
  switch (f.kind) {
    case Failure::Kind::oom: return 0;
    case Failure::Kind::own_error: return 1;
    case Failure::Kind::nccl_warn: return 2;
    default: return 3;
  }
}

void add_to(Party* p, const Who& w, const Evidence& ev) {
  if (w.rank >= 0) p->ranks.push_back(w.rank);
  else if (!w.proc.empty()) p->procs.push_back(w.proc);
  if (!w.host.empty()) p->hosts.push_back(w.host);
  if (p->evidence.size() < kEvidencePerParty) p->evidence.push_back(ev);
}

void normalize(Party* p) {
  auto uniq = [](auto* v) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  };
  uniq(&p->ranks);
  uniq(&p->hosts);
  uniq(&p->procs);
}

bool same_party(const Party& p, const Who& w) {
  if (w.rank >= 0) return std::binary_search(p.ranks.begin(), p.ranks.end(), w.rank);
  return std::find(p.procs.begin(), p.procs.end(), w.proc) != p.procs.end();
}

// The time a failure happened: its own stamp, else the time the launcher saw that rank fail.
When time_of(const Failure& f, const std::vector<LauncherEntry>& launcher) {
  if (f.when.known()) return f.when;
  if (f.who.rank >= 0)
    for (const auto& e : launcher)
      if (e.rank == f.who.rank && e.when.known()) return e.when;
  return f.when;
}

// Groups collateral by how the ranks failed: "watchdog timeout in ALLREDUCE (SeqNum 1201)".
std::string collateral_key(const Failure& f) {
  switch (f.kind) {
    case Failure::Kind::timeout: return f.seq >= 0 ? fmt::format("timeout@{}", f.seq) : f.what;
    case Failure::Kind::aborted: return "aborted after a peer failed: " + f.what.substr(0, 80);
    case Failure::Kind::killed: return "stopped by the launcher";
    default: return f.what.substr(0, 80);
  }
}

}  // namespace

std::string party_subject(const Party& p) {
  std::vector<std::string> parts;
  if (!p.ranks.empty()) parts.push_back(rank_phrase(p.ranks, p.hosts));
  if (!p.procs.empty()) {
    std::string list = fmt::format("{}", fmt::join(p.procs.begin(), p.procs.begin() + std::min<size_t>(p.procs.size(), 4), ", "));
    if (p.procs.size() > 4) list += fmt::format(" and {} more", p.procs.size() - 4);
    parts.push_back(fmt::format("{} {}", p.procs.size() == 1 ? "process" : "processes", list));
  }
  if (parts.empty()) return p.hosts.empty() ? "an unknown rank" : fmt::format("a rank on {}", fold_hosts(p.hosts));
  return fmt::format("{}", fmt::join(parts, " and "));
}

BlameResult assign_blame(const std::vector<Failure>& failures, const std::vector<LauncherEntry>& launcher,
                         const std::vector<Divergence>& divergences, const std::vector<Divergence>& environment) {
  BlameResult out;
  // 0. An installation that differs: the first such finding's ranks.
  for (const auto& e : environment) {
    if (e.ranks.empty() && e.procs.empty()) continue;
    Party& p = out.initiating;
    p.ranks = e.ranks;
    p.hosts = e.hosts;
    p.procs = e.procs;
    p.what = e.what;
    p.kind = Failure::Kind::own_error;
    p.evidence.assign(e.evidence.begin(), e.evidence.begin() + std::min<size_t>(e.evidence.size(), kEvidencePerParty));
    normalize(&p);
    out.found = true;
    break;
  }
  // 1. Own errors, earliest first.
  const Failure* first = nullptr;
  When first_when;
  for (const auto& f : failures) {
    if (out.found || !own(f.kind)) continue;
    When w = time_of(f, launcher);
    if (first == nullptr) {
      first = &f;
      first_when = w;
      continue;
    }
    int c = (w.known() && first_when.known()) ? When::compare(w, first_when) : 0;
    if (c < 0 || (c == 0 && ((w.known() && !first_when.known()) ||
                             (w.known() == first_when.known() && specificity(f) < specificity(*first))))) {
      first = &f;
      first_when = w;
    }
  }
  bool environment_found = out.found;
  if (!environment_found && first != nullptr) {
    out.found = true;
    Party& p = out.initiating;
    p.kind = first->kind;
    p.what = first->what;
    p.when = first_when;
    p.hint = first->hint;
    add_to(&p, first->who, first->evidence);
    // Other ranks failing the same way at the same moment initiate with it (OOM on two ranks of
    // one node); a different error, or a later one, is judged below as collateral.
    for (const auto& f : failures) {
      if (&f == first || f.kind != first->kind) continue;
      When w = time_of(f, launcher);
      bool same_time = w.known() && first_when.known() && When::compare(w, first_when) == 0;
      bool same_text = f.what.substr(0, 40) == first->what.substr(0, 40);
      // One line naming several ranks ("tasks 1-3: Out Of Memory") names them all.
      bool same_line = f.evidence.file == first->evidence.file && f.evidence.line == first->evidence.line;
      if ((same_time && same_text) || same_line) add_to(&p, f.who, f.evidence);
    }
    normalize(&p);
  } else if (!environment_found) {
    // 2. Nobody's own error: who never reached the collective.
    Party p;
    for (const auto& f : failures)
      if (f.kind == Failure::Kind::never_joined) {
        if (p.what.empty()) p.what = f.what;
        p.kind = f.kind;
        add_to(&p, f.who, f.evidence);
      }
    if (p.ranks.empty() && p.procs.empty()) {
      for (const auto& d : divergences) {
        if (d.ranks.empty()) continue;
        p.ranks.insert(p.ranks.end(), d.ranks.begin(), d.ranks.end());
        p.hosts.insert(p.hosts.end(), d.hosts.begin(), d.hosts.end());
        if (p.what.empty()) p.what = d.what;
        for (const auto& e : d.evidence)
          if (p.evidence.size() < kEvidencePerParty) p.evidence.push_back(e);
        p.kind = Failure::Kind::never_joined;
        break;  // the first divergence explains the rest
      }
    }
    if (!p.ranks.empty() || !p.procs.empty()) {
      normalize(&p);
      out.initiating = p;
      out.found = true;
    }
  }

  // 3. Collateral: everyone else who failed, grouped by how.
  std::map<std::string, Party> groups;
  std::vector<std::string> order;
  // A rank a launcher stopped that failed otherwise too (it timed out first) is told by that.
  std::set<std::string> failed_otherwise;
  for (const auto& f : failures)
    if (f.kind != Failure::Kind::killed) failed_otherwise.insert(f.who.rank >= 0 ? fmt::format("r{}", f.who.rank) : f.who.proc);
  for (const auto& f : failures) {
    if (out.found && same_party(out.initiating, f.who)) continue;
    if (f.who.rank < 0 && f.who.proc.empty()) continue;
    if (f.kind == Failure::Kind::killed &&
        failed_otherwise.count(f.who.rank >= 0 ? fmt::format("r{}", f.who.rank) : f.who.proc))
      continue;
    std::string key = own(f.kind) ? "also failed: " + f.what.substr(0, 80) : collateral_key(f);
    if (!groups.count(key)) order.push_back(key);
    Party& g = groups[key];
    if (g.what.empty() || (f.kind == Failure::Kind::timeout && f.what.find(" in ") != std::string::npos &&
                           g.what.find(" in ") == std::string::npos)) {
      g.what = own(f.kind) ? fmt::format("also failed, later: {}", f.what) : key.rfind("timeout@", 0) == 0 ? f.what : key;
      g.kind = f.kind;
    }
    add_to(&g, f.who, f.evidence);
  }
  std::set<int> named;
  for (auto& kv : groups) {
    normalize(&kv.second);
    named.insert(kv.second.ranks.begin(), kv.second.ranks.end());
  }
  // Launcher entries of ranks killed by a signal that no log line explains.
  Party stopped;
  for (const auto& e : launcher) {
    if (e.root_cause || e.rank < 0) continue;
    if (out.found && std::binary_search(out.initiating.ranks.begin(), out.initiating.ranks.end(), e.rank)) continue;
    if (named.count(e.rank)) continue;
    Who w{-1, e.rank, e.host, fmt::format("rank {}", e.rank)};
    add_to(&stopped, w, e.evidence);
  }
  if (!stopped.ranks.empty()) {
    normalize(&stopped);
    stopped.kind = Failure::Kind::killed;
    stopped.what = out.found ? fmt::format("stopped by the launcher after {} failed", party_subject(out.initiating))
                             : "stopped by the launcher";
    groups["~stopped"] = stopped;
    order.push_back("~stopped");
  }
  for (const auto& k : order) {
    Party& g = groups[k];
    if (g.kind == Failure::Kind::killed && out.found)
      g.what = fmt::format("stopped by the launcher after {} failed", party_subject(out.initiating));
    out.collateral.push_back(g);
  }

  // 4. The launcher's claim: every "Root Cause" block (one per node's torchrun).
  std::vector<std::string> claims;
  for (const auto& e : launcher) {
    if (!e.root_cause) continue;
    out.have_claim = true;
    Party& c = out.claim;
    Who w{-1, e.rank, e.host, e.rank >= 0 ? fmt::format("rank {}", e.rank) : std::string()};
    add_to(&c, w, e.evidence);
    if (!c.when.known()) c.when = e.when;
    claims.push_back(fmt::format("rank {}{}{}", e.rank, e.host.empty() ? "" : " on " + e.host,
                                 e.exitcode.empty() ? "" : fmt::format(" (exitcode {}{})", e.exitcode, e.signal.empty() ? "" : ", " + e.signal)));
    if (out.found && e.rank >= 0 && !out.initiating.ranks.empty() && !out.claim_wrong &&
        !std::binary_search(out.initiating.ranks.begin(), out.initiating.ranks.end(), e.rank)) {
      out.claim_wrong = true;
      std::string how = "it failed only after the initiating rank";
      for (const auto& g : out.collateral)
        if (std::binary_search(g.ranks.begin(), g.ranks.end(), e.rank)) {
          how = g.what;
          break;
        }
      out.claim_note = fmt::format("torchrun{} names rank {} as the first observed failure, but {} failed first ({}); rank {} only followed: {}",
                                   e.host.empty() ? "" : " on " + e.host, e.rank, party_subject(out.initiating),
                                   out.initiating.what, e.rank, how);
    }
  }
  if (out.have_claim) {
    normalize(&out.claim);
    out.claim.what = fmt::format("torchrun 'Root Cause (first observed failure)': {}", fmt::join(claims, "; "));
  }
  return out;
}

}  // namespace denpex::diag
