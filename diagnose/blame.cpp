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

// The first time a process of the party failed, by its own line; the party's time is the earliest.
void note_time(Party* p, const Failure& f) {
  if (!f.when.known()) return;
  std::string who = f.who.rank >= 0 ? fmt::format("rank {}", f.who.rank) : f.who.proc;
  if (who.empty()) return;
  auto it = p->failed_at.find(who);
  if (it == p->failed_at.end()) p->failed_at.emplace(who, f.when);
  else if (When::compare(f.when, it->second) < 0) it->second = f.when;
  if (!p->when.known() || When::compare(f.when, p->when) < 0) p->when = f.when;
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

// Whose clock stamped a failure: its host, else its file (one node's log, as a rule).
std::string clock_of(const Failure& f) { return f.who.host.empty() ? "file " + f.evidence.file : f.who.host; }

}  // namespace

long long clock_skew_us(const std::vector<Failure>& failures) {
  // Per work, the earliest start each host's lines give for it.
  std::map<std::pair<std::string, long long>, std::map<std::string, long long>> starts;
  for (const auto& f : failures) {
    if (f.kind != Failure::Kind::timeout || f.seq < 0 || f.ran_ms < 0 || f.ran_ms > 1000000000LL || !f.when.known())
      continue;
    long long start = f.when.us - f.ran_ms * 1000;
    auto& by_clock = starts[{f.group, f.seq}];
    std::string clock = clock_of(f);
    auto it = by_clock.find(clock);
    if (it == by_clock.end() || start < it->second) by_clock[clock] = start;
  }
  long long skew = 0;
  for (const auto& kv : starts) {
    if (kv.second.size() < 2) continue;
    auto [lo, hi] = std::minmax_element(kv.second.begin(), kv.second.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    skew = std::max(skew, hi->second - lo->second);
  }
  return skew;
}

std::string party_subject(const Party& p) {
  if (p.peer && !p.procs.empty())
    return fmt::format("the peer{} at {}", p.procs.size() == 1 ? "" : "s",
                       fmt::join(p.procs.begin(), p.procs.begin() + std::min<size_t>(p.procs.size(), 4), ", "));
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

namespace {

// 0. An installation that differs: the first such finding's ranks.
bool environment_party(const std::vector<Divergence>& environment, Party* p) {
  for (const auto& e : environment) {
    if ((e.ranks.empty() && e.procs.empty()) || e.tie) continue;
    p->ranks = e.ranks;
    p->hosts = e.hosts;
    p->procs = e.procs;
    p->what = e.what;
    p->kind = Failure::Kind::own_error;
    p->evidence.assign(e.evidence.begin(), e.evidence.begin() + std::min<size_t>(e.evidence.size(), kEvidencePerParty));
    normalize(p);
    return true;
  }
  return false;
}

// How two failures' times compare: -1, 0 or 1 as When::compare, but stamps of different hosts
// closer than the clock skew are indistinguishable (0; *within_skew says so).
int compare_times(const Failure& a, When wa, const Failure& b, When wb, long long skew_us, bool* within_skew) {
  *within_skew = false;
  if (!wa.known() || !wb.known()) return 0;
  int c = When::compare(wa, wb);
  bool other_hosts = clock_of(a) != clock_of(b);
  long long gap = wa.us > wb.us ? wa.us - wb.us : wb.us - wa.us;
  if (c != 0 && other_hosts && skew_us > 0 && gap <= skew_us) {
    *within_skew = true;
    return 0;
  }
  return c;
}

std::string key_of(const Who& w) { return w.rank >= 0 ? fmt::format("r{}", w.rank) : w.proc; }

// Processes that also only waited for another: a timeout or an abort after a peer failed.
std::set<std::string> waiting_processes(const std::vector<Failure>& failures) {
  std::set<std::string> out;
  for (const auto& f : failures)
    if (f.kind == Failure::Kind::timeout || f.kind == Failure::Kind::aborted) out.insert(key_of(f.who));
  return out;
}

// A line that says the process's peer went away and names it.
bool peer_gone(const Failure& f) { return f.kind == Failure::Kind::aborted && !f.peer.empty(); }

// Whether `gone` came no later than `f` by what their lines show: their stamps, else their
// order in one file.
bool not_after(const Failure& gone, const Failure& f) {
  if (gone.when.known() && f.when.known()) return When::compare(gone.when, f.when) <= 0;
  return gone.evidence.file == f.evidence.file && gone.evidence.line <= f.evidence.line;
}

// The failures, where the errors a process raised after its line saying its peer went away are
// read as what they are, aborts that followed it (NCCL's proxy failing the connection it lost,
// the exception PyTorch raised then). An out-of-memory error does not follow from a lost peer:
// it stays the process's own.
std::vector<Failure> after_peer_gone(const std::vector<Failure>& failures) {
  std::map<std::string, std::vector<const Failure*>> gone;
  for (const auto& f : failures)
    if (peer_gone(f)) gone[key_of(f.who)].push_back(&f);
  std::vector<Failure> out = failures;
  if (gone.empty()) return out;
  for (auto& f : out) {
    if (f.kind != Failure::Kind::own_error && f.kind != Failure::Kind::nccl_warn) continue;
    auto it = gone.find(key_of(f.who));
    if (it == gone.end()) continue;
    for (const Failure* g : it->second)
      if (not_after(*g, f)) {
        f.kind = Failure::Kind::aborted;
        f.shared_fault = false;
        break;
      }
  }
  return out;
}

// Whether the peer a line names is the reporter's own host ("node3.cluster" from node3): its
// connection to a process beside it, NCCL's proxy, not the far end of the job.
bool own_host_peer(const Failure& f) {
  if (f.who.host.empty()) return false;
  std::string_view peer(f.peer);
  std::string_view host(f.who.host);
  return peer.substr(0, peer.find('.')) == host.substr(0, host.find('.'));
}

// 4. Nobody's own error, no report and no launcher's word: the peer that the lines saying it went
// away name, the earliest such line's first (peers on a reporter's own host only when no other
// is named). Empty when no line names a peer.
Party peer_party(const std::vector<Failure>& failures) {
  const Failure* first = nullptr;
  std::vector<const Failure*> gone;
  for (const auto& f : failures) {
    if (!peer_gone(f)) continue;
    gone.push_back(&f);
    if (first == nullptr || (f.when.known() && first->when.known() && When::compare(f.when, first->when) < 0)) first = &f;
  }
  Party p;
  if (first == nullptr) return p;
  std::vector<std::string> far, near;
  for (const Failure* g : gone) {
    auto& to = own_host_peer(*g) ? near : far;
    if (std::find(to.begin(), to.end(), g->peer) == to.end()) to.push_back(g->peer);
  }
  p.procs = far.empty() ? near : far;
  p.hosts = p.procs;
  p.peer = true;
  p.kind = Failure::Kind::aborted;
  p.when = first->when;
  Party reporter;
  add_to(&reporter, first->who, first->evidence);
  p.what = fmt::format("{} lost its connection to it first ({}); the peer's own error is not in the input",
                       party_subject(reporter), first->what);
  p.evidence.push_back(first->evidence);
  for (const Failure* g : gone)
    if (g != first && p.evidence.size() < kEvidencePerParty) p.evidence.push_back(g->evidence);
  normalize(&p);
  return p;
}

// At times that do not order them: 1 when f goes before first, -1 when after, 0 undecided. NCCL's
// own cause line or transport fault before its process's general error; a rank that did not wait before one that
// did; a rank's own error before a fault of the fabric another process met.
int tie_order(const Failure& f, const Failure& first, const std::set<std::string>& waited) {
  bool same = key_of(f.who) == key_of(first.who);
  // NCCL's own text of the fault (its cause line, a transport's fault) says more than the
  // general error its process then raised.
  bool fs = f.cause || f.shared_fault, ps = first.cause || first.shared_fault;
  if (same && fs != ps) return fs ? 1 : -1;
  if (same) return 0;
  bool fw = waited.count(key_of(f.who)) > 0, pw = waited.count(key_of(first.who)) > 0;
  if (fw != pw) return fw ? -1 : 1;
  if (f.shared_fault != first.shared_fault) return f.shared_fault ? -1 : 1;
  return 0;
}

// 1. The earliest own error: by time, then a stamped one before an unstamped one, then the most
// specific, then the first in the input. nullptr when no rank raised one.
const Failure* earliest_own(const std::vector<Failure>& failures, const std::vector<LauncherEntry>& launcher,
                            long long skew_us, When* first_when, bool* by_skew) {
  const Failure* first = nullptr;
  std::set<std::string> waited = waiting_processes(failures);
  for (const auto& f : failures) {
    if (!own(f.kind)) continue;
    When w = time_of(f, launcher);
    if (first == nullptr) {
      first = &f;
      *first_when = w;
      continue;
    }
    bool within_skew = false;
    int c = compare_times(f, w, *first, *first_when, skew_us, &within_skew);
    bool same_known = w.known() == first_when->known();
    int tie = c == 0 && same_known ? tie_order(f, *first, waited) : 0;
    // Then a line that names its rank before one that names none (a cgroup's OOM line, then the
    // launcher's line naming the task it killed).
    bool named_first = same_known && specificity(f) == specificity(*first) && f.who.rank >= 0 && first->who.rank < 0;
    bool before = c < 0 || (c == 0 && (tie > 0 || (w.known() && !first_when->known()) ||
                                       (tie == 0 && same_known && specificity(f) < specificity(*first)) ||
                                       (tie == 0 && named_first)));
    if (before) {
      // The skew reversed what the stamps say: causality decided.
      *by_skew = within_skew && When::compare(w, *first_when) > 0;
      first = &f;
      *first_when = w;
    } else if (within_skew && When::compare(w, *first_when) < 0) {
      *by_skew = true;
    }
  }
  return first;
}

// The processes besides `first` that met the same fault of the node or fabric at a time that
// does not put them after it, on more than one host: a fault nobody is distinguishably first in;
// or a timeout of the fabric (the far end stopped answering), whoever printed it.
Party alike_party(const Failure& first, When first_when, const std::vector<Failure>& failures,
                  const std::vector<LauncherEntry>& launcher, long long skew_us) {
  Party p;
  if (!first.shared_fault) return p;
  std::set<std::string> procs;
  for (const auto& f : failures) {
    if (!f.shared_fault || f.evidence.signal != first.evidence.signal || !own(f.kind)) continue;
    bool within_skew = false;
    When w = time_of(f, launcher);
    if (&f != &first && (w.known() != first_when.known() || compare_times(f, w, first, first_when, skew_us, &within_skew) != 0))
      continue;
    if (!procs.insert(key_of(f.who)).second) continue;
    add_to(&p, f.who, f.evidence);
  }
  normalize(&p);
  // Several processes of one host alike are that host's fault: it is blamed as usual. A timeout
  // of the fabric is the far end's or the path's, and a build's property the build's, whoever
  // printed it.
  if (!first.far_end && (procs.size() < 2 || p.hosts.size() < 2)) return Party{};
  if (p.evidence.empty()) p.evidence.push_back(first.evidence);
  p.kind = first.kind;
  p.what = first.what;
  p.when = first_when;
  return p;
}

Party own_party(const Failure& first, When first_when, const std::vector<Failure>& failures,
                const std::vector<LauncherEntry>& launcher) {
  Party p;
  p.kind = first.kind;
  p.what = first.what;
  p.when = first_when;
  p.hint = first.hint;
  add_to(&p, first.who, first.evidence);
  // Other ranks failing the same way at the same moment initiate with it (OOM on two ranks of
  // one node); a different error, or a later one, is judged as collateral.
  for (const auto& f : failures) {
    if (&f == &first || f.kind != first.kind) continue;
    When w = time_of(f, launcher);
    bool same_time = w.known() && first_when.known() && When::compare(w, first_when) == 0;
    bool same_text = f.what.substr(0, 40) == first.what.substr(0, 40);
    // One line naming several ranks ("tasks 1-3: Out Of Memory") names them all.
    bool same_line = f.evidence.file == first.evidence.file && f.evidence.line == first.evidence.line;
    if ((same_time && same_text) || same_line) add_to(&p, f.who, f.evidence);
  }
  normalize(&p);
  return p;
}

// Ranks that timed out beside ranks that said they finished: the smaller side is the odd one.
// Few timed out while most finished: the few waited for a collective the others never issued in
// that form. Most timed out while few finished: the few skipped it. Equal sides decide nothing.
Party odd_side(const std::vector<Failure>& failures) {
  std::set<int> timed_out, finished, failed;
  for (const auto& f : failures) {
    if (f.who.rank < 0) continue;
    if (f.kind == Failure::Kind::timeout) timed_out.insert(f.who.rank);
    if (f.kind == Failure::Kind::finished) finished.insert(f.who.rank);
    else failed.insert(f.who.rank);
  }
  for (int r : failed) finished.erase(r);  // "completed" printed after its own timeout
  Party p;
  if (timed_out.empty() || finished.empty() || timed_out.size() == finished.size()) return p;
  bool few_waited = timed_out.size() < finished.size();
  Failure::Kind side = few_waited ? Failure::Kind::timeout : Failure::Kind::finished;
  p.kind = Failure::Kind::never_joined;
  p.what = few_waited ? fmt::format("the only rank{} that timed out while {} other ranks finished: it waited for a collective "
                                    "they never issued in that form",
                                    timed_out.size() == 1 ? "" : "s", finished.size())
                      : fmt::format("finished while {} other ranks timed out waiting: it skipped a collective they issued",
                                    timed_out.size());
  for (const auto& f : failures)
    if (f.kind == side && f.who.rank >= 0 && (few_waited || finished.count(f.who.rank))) add_to(&p, f.who, f.evidence);
  normalize(&p);
  return p;
}

// 2. Nobody's own error: who never reached the collective (a report, a divergence, the odd side).
Party waiting_party(const std::vector<Failure>& failures, const std::vector<Divergence>& divergences) {
  Party p;
  // Ranks a report names as absent, else the rank another names only as the one to look at.
  for (Failure::Kind k : {Failure::Kind::never_joined, Failure::Kind::pointed_to}) {
    for (const auto& f : failures)
      if (f.kind == k) {
        if (p.what.empty()) p.what = f.what;
        p.kind = Failure::Kind::never_joined;
        add_to(&p, f.who, f.evidence);
      }
    if (!p.ranks.empty() || !p.procs.empty()) break;
  }
  if (p.ranks.empty() && p.procs.empty()) {
    for (const auto& d : divergences) {
      if (d.ranks.empty() || d.tie) continue;
      p.ranks.insert(p.ranks.end(), d.ranks.begin(), d.ranks.end());
      p.hosts.insert(p.hosts.end(), d.hosts.begin(), d.hosts.end());
      if (p.what.empty()) p.what = d.what;
      for (const auto& e : d.evidence)
        if (p.evidence.size() < kEvidencePerParty) p.evidence.push_back(e);
      p.kind = Failure::Kind::never_joined;
      break;  // the first divergence explains the rest
    }
  }
  if (p.ranks.empty() && p.procs.empty()) return odd_side(failures);
  normalize(&p);
  return p;
}

// The sides of the divergences with no majority, one party each.
std::vector<Party> disagreeing_sides(const std::vector<Divergence>& divergences) {
  std::vector<Party> out;
  for (const auto& d : divergences) {
    if (!d.tie || (d.ranks.empty() && d.procs.empty())) continue;
    Party p;
    p.ranks = d.ranks;
    p.procs = d.procs;
    p.hosts = d.hosts;
    p.what = d.what;
    p.kind = Failure::Kind::never_joined;
    p.evidence = d.evidence;
    normalize(&p);
    // The same sides reported again (both ranks print the pair) are one disagreement.
    bool again = std::any_of(out.begin(), out.end(), [&](const Party& q) { return q.ranks == p.ranks && q.procs == p.procs; });
    if (!again) out.push_back(std::move(p));
  }
  return out;
}

// What a launcher's exit code says about how the worker ended.
std::string exit_meaning(const LauncherEntry& e) {
  std::string sig = e.signal;
  if (sig.empty() && e.exitcode == "-6") sig = "SIGABRT";
  if (sig.empty() && e.exitcode == "-11") sig = "SIGSEGV";
  if (sig.empty() && e.exitcode == "-7") sig = "SIGBUS";
  if (sig == "SIGKILL") return "SIGKILL: killed from outside the process, most often by the kernel's OOM killer (host memory)";
  if (sig == "SIGABRT") return "SIGABRT: the process aborted (an uncaught C++ exception such as the NCCL watchdog's, or an assert)";
  if (sig == "SIGSEGV") return "SIGSEGV: a segmentation fault in native code";
  if (sig == "SIGBUS") return "SIGBUS: often shared memory (/dev/shm) too small";
  if (e.exitcode.empty() && sig.empty()) return "its exit code is not in the input: the summary names it as the first observed failure";
  return e.exitcode.empty() ? sig : fmt::format("exit code {}: its own error (its traceback is in its own output)", e.exitcode);
}

bool stopped_exit(const LauncherEntry& e) {
  return e.signal == "SIGTERM" || e.exitcode == "-15" || e.exitcode == "0" || e.exitcode == "143";
}

int to_exit(const std::string& code) {
  int v = 0;
  for (char c : code) {
    if (c < '0' || c > '9' || v > 100000) return -1;
    v = v * 10 + (c - '0');
  }
  return code.empty() ? -1 : v;
}

bool abort_exit(const LauncherEntry& e) { return e.signal == "SIGABRT" || e.exitcode == "-6" || e.exitcode == "134"; }

// The worker each launcher line is about, once: a pid names it across the agent's line and its
// summary; the entry that knows the global rank is kept.
std::vector<const LauncherEntry*> failed_workers(const std::vector<LauncherEntry>& launcher) {
  std::map<std::string, const LauncherEntry*> by;
  for (const auto& e : launcher) {
    if (stopped_exit(e) || (e.rank < 0 && e.pid < 0)) continue;
    std::string key = e.pid >= 0 ? fmt::format("p{}", e.pid) : fmt::format("{}{}@{}", e.local ? "l" : "r", e.rank, e.host);
    auto it = by.find(key);
    if (it == by.end()) by.emplace(key, &e);
    else if (it->second->local && !e.local && e.rank >= 0) it->second = &e;
  }
  std::vector<const LauncherEntry*> out;
  for (const auto& kv : by) out.push_back(kv.second);
  return out;
}

// The launcher's "first observed failure" among several workers it saw fail: the one it names,
// when no other worker ended earlier by the summary's own times and the others did not end alike
// with it (the same exit code at the same time, which the launcher cannot order). nullptr
// otherwise. A block cut after its rank line still names its worker and time.
const LauncherEntry* first_observed(const std::vector<const LauncherEntry*>& pick) {
  const LauncherEntry* root = nullptr;
  for (const auto* e : pick)
    if (e->root_cause) {
      if (root != nullptr) return nullptr;
      root = e;
    }
  if (root == nullptr || !root->when.known()) return nullptr;
  bool alike = true;
  for (const auto* e : pick) {
    if (e == root) continue;
    if (e->when.known() && When::compare(e->when, root->when) < 0) return nullptr;
    if (e->exitcode != root->exitcode || !e->when.known() || When::compare(e->when, root->when) != 0) alike = false;
  }
  return alike ? nullptr : root;
}

// 3. No rank's own line: the worker the launcher saw fail. A launcher reports the worker that
// failed and stops the others; one worker that failed differently from the rest is the one.
// Several alike (every rank exit 1, several SIGABRTs collected) name nobody: the launcher cannot
// tell which came first, and neither can these lines.
Party launcher_party(const std::vector<LauncherEntry>& launcher, const std::vector<Failure>& failures) {
  std::vector<const LauncherEntry*> pick = failed_workers(launcher);
  // PyTorch's watchdog aborts its own process after a collective timed out: where the input
  // holds timeouts, a worker the launcher saw abort (or stopped) may only have timed out too, so
  // its exit is no evidence that it failed first.
  // A worker whose own lines show it timing out ended because of that, whatever its exit code.
  std::set<int> timed_out;
  for (const auto& f : failures)
    if (f.kind == Failure::Kind::timeout && f.who.rank >= 0) timed_out.insert(f.who.rank);
  bool timeouts = std::any_of(failures.begin(), failures.end(), [](const Failure& f) { return f.kind == Failure::Kind::timeout; });
  pick.erase(std::remove_if(pick.begin(), pick.end(),
                            [&](const LauncherEntry* e) {
                              return (timeouts && abort_exit(*e)) || (!e->local && timed_out.count(e->rank) > 0);
                            }),
             pick.end());
  if (const LauncherEntry* root = pick.size() > 1 ? first_observed(pick) : nullptr) pick = {root};
  if (pick.size() > 1) {
    std::vector<const LauncherEntry*> hard;
    for (const auto* e : pick)
      if (!abort_exit(*e)) hard.push_back(e);
    if (hard.size() != 1) return Party{};
    pick = hard;
  }
  Party p;
  if (pick.empty()) return p;
  const LauncherEntry& e = *pick.front();
  p.kind = Failure::Kind::own_error;
  p.when = e.when;
  std::string who = e.local ? fmt::format("local rank {}", e.rank) : "";
  if (e.local || e.rank < 0) p.procs.push_back(e.rank >= 0 ? who : fmt::format("pid {}", e.pid));
  else p.ranks.push_back(e.rank);
  if (!e.host.empty()) p.hosts.push_back(e.host);
  p.what = fmt::format("the launcher reports it ended first ({})", exit_meaning(e));
  p.evidence.push_back(e.evidence);
  return p;
}

// A process known only by its file ("file train.log") that raised the first error, in a file
// where the launcher saw exactly one worker end with an error code of its own: that worker is
// the process (the others were stopped, or their output is not here).
void name_by_launcher(const std::vector<LauncherEntry>& launcher, Party* p) {
  if (!p->ranks.empty() || p->procs.size() != 1 || p->procs[0].rfind("file ", 0) != 0 || p->evidence.empty()) return;
  std::vector<const LauncherEntry*> failed = failed_workers(launcher);
  if (failed.size() != 1) return;
  const LauncherEntry& e = *failed.front();
  if (!e.local || e.rank < 0 || e.evidence.file != p->evidence.front().file || to_exit(e.exitcode) <= 0) return;
  p->procs[0] = fmt::format("local rank {}", e.rank);
  if (!e.host.empty() && p->hosts.empty()) p->hosts.push_back(e.host);
  p->evidence.push_back(e.evidence);
}

// A process known only by its file whose error came first, in a file where its launcher saw
// several workers end alike with an exit code of their own (srun's "task 1: Exited with exit
// code 1" for each task): the file's lines cannot say which worker printed them, and the workers
// failed alike, so nobody is blamed; they are named as met alike. Returns the file's process
// ("" when the rule does not apply).
std::string alike_workers(const std::vector<LauncherEntry>& launcher, BlameResult* out) {
  const Party& p = out->initiating;
  if (!out->found || !p.ranks.empty() || p.procs.size() != 1 || p.procs[0].rfind("file ", 0) != 0 || p.evidence.empty())
    return {};
  std::vector<const LauncherEntry*> same;
  for (const auto* e : failed_workers(launcher))
    if (e->evidence.file == p.evidence.front().file && e->rank >= 0) same.push_back(e);
  if (same.size() < 2) return {};
  for (const auto* e : same)
    if (to_exit(e->exitcode) <= 0 || e->exitcode != same.front()->exitcode || !e->signal.empty()) return {};
  Party a;
  a.kind = p.kind;
  a.what = p.what;
  a.when = p.when;
  a.evidence = p.evidence;
  for (const auto* e : same) {
    Who w{-1, e->local ? -1 : e->rank, e->host, e->local ? fmt::format("local rank {}", e->rank) : fmt::format("rank {}", e->rank)};
    add_to(&a, w, e->evidence);
  }
  normalize(&a);
  std::string absorbed = p.procs[0];
  out->alike = a;
  out->have_alike = true;
  out->found = false;
  out->initiating = Party{};
  return absorbed;
}

// 3. Collateral: everyone else who failed, grouped by how (`absorbed`: a process whose
// failures are the met-alike party's).
void collateral_groups(const std::vector<Failure>& failures, const std::string& absorbed, BlameResult* out,
                       std::map<std::string, Party>* groups, std::vector<std::string>* order) {
  // A rank a launcher stopped that failed otherwise too (it timed out first) is told by that.
  std::set<std::string> failed_otherwise;
  for (const auto& f : failures)
    if (f.kind != Failure::Kind::killed && f.kind != Failure::Kind::finished) failed_otherwise.insert(key_of(f.who));
  for (const auto& f : failures) {
    if (f.kind == Failure::Kind::finished || f.kind == Failure::Kind::pointed_to) continue;
    if (out->found && same_party(out->initiating, f.who)) continue;
    if (out->have_alike && same_party(out->alike, f.who) && f.shared_fault) continue;
    if (!absorbed.empty() && f.who.rank < 0 && f.who.proc == absorbed) continue;
    if (f.who.rank < 0 && f.who.proc.empty()) continue;
    if (f.kind == Failure::Kind::killed && failed_otherwise.count(key_of(f.who))) continue;
    std::string key = own(f.kind) ? "also failed: " + f.what.substr(0, 80) : collateral_key(f);
    if (!groups->count(key)) order->push_back(key);
    Party& g = (*groups)[key];
    if (g.what.empty() || (f.kind == Failure::Kind::timeout && f.what.find(" in ") != std::string::npos &&
                           g.what.find(" in ") == std::string::npos)) {
      g.what = own(f.kind) ? fmt::format("also failed, later: {}", f.what) : key.rfind("timeout@", 0) == 0 ? f.what : key;
      g.kind = f.kind;
    }
    add_to(&g, f.who, f.evidence);
    note_time(&g, f);
  }
}

// Launcher entries of ranks killed by a signal that no log line explains, then every group.
void stopped_and_collateral(const std::vector<LauncherEntry>& launcher, BlameResult* out,
                            std::map<std::string, Party>* groups, std::vector<std::string>* order) {
  std::set<int> named;
  for (auto& kv : *groups) {
    normalize(&kv.second);
    named.insert(kv.second.ranks.begin(), kv.second.ranks.end());
  }
  std::set<long long> global_pids;  // workers a summary names by their job-wide rank
  for (const auto& e : launcher)
    if (!e.local && e.rank >= 0 && e.pid >= 0) global_pids.insert(e.pid);
  Party stopped, exited;
  std::set<std::string> codes;
  for (const auto& e : launcher) {
    if (e.root_cause || e.rank < 0 || (e.local && global_pids.count(e.pid))) continue;
    if (out->found && std::binary_search(out->initiating.ranks.begin(), out->initiating.ranks.end(), e.rank)) continue;
    // A local rank is not the job's rank of that number: it is named as what it is.
    std::string local = e.local ? fmt::format("local rank {}", e.rank) : std::string();
    Who w{-1, e.local ? -1 : e.rank, e.host, e.local ? local : fmt::format("rank {}", e.rank)};
    if (out->found && e.local && same_party(out->initiating, w)) continue;
    if (out->have_alike && same_party(out->alike, w)) continue;
    if (!e.local && named.count(e.rank)) continue;
    // A worker that ended with an exit code of its own (srun's "Exited with exit code 1") failed
    // by itself; the launcher stopped only those it ended by a signal.
    bool own_exit = to_exit(e.exitcode) > 0 && e.signal.empty() && !stopped_exit(e);
    add_to(own_exit ? &exited : &stopped, w, e.evidence);
    if (own_exit) codes.insert(e.exitcode);
  }
  for (Party* g : {&stopped, &exited}) {
    if (g->ranks.empty() && g->procs.empty()) continue;
    normalize(g);
    bool own_exit = g == &exited;
    g->kind = own_exit ? Failure::Kind::own_error : Failure::Kind::killed;
    g->what = own_exit ? fmt::format("exited with an error code of its own (exit code {})", fmt::join(codes, ", "))
                       : "stopped by the launcher";
    std::string key = own_exit ? "~exited" : "~stopped";
    (*groups)[key] = *g;
    order->push_back(key);
  }
  for (const auto& k : *order) {
    Party& g = (*groups)[k];
    if (out->found && (g.kind == Failure::Kind::killed || k == "~exited"))
      g.what = fmt::format("{} after {} failed", g.what, party_subject(out->initiating));
    out->collateral.push_back(g);
  }
}

// How a launcher words its claim of the first failure.
std::string claim_words(const LauncherEntry& e) {
  if (e.launcher == "mpirun") return "mpirun 'The first process to do so was'";
  return "torchrun 'Root Cause (first observed failure)'";
}

// 4. The launcher's claim: every "Root Cause" block (one per node's torchrun), and mpirun's
// first process to exit non-zero.
void launcher_claim(const std::vector<LauncherEntry>& launcher, BlameResult* out) {
  std::vector<std::string> claims;
  std::string words;
  for (const auto& e : launcher) {
    if (!e.root_cause) continue;
    out->have_claim = true;
    if (words.empty()) words = claim_words(e);
    Party& c = out->claim;
    Who w{-1, e.rank, e.host, e.rank >= 0 ? fmt::format("rank {}", e.rank) : std::string()};
    add_to(&c, w, e.evidence);
    if (!c.when.known()) c.when = e.when;
    claims.push_back(fmt::format("rank {}{}{}", e.rank, e.host.empty() ? "" : " on " + e.host,
                                 e.exitcode.empty() ? "" : fmt::format(" (exitcode {}{})", e.exitcode, e.signal.empty() ? "" : ", " + e.signal)));
    if (!out->found || e.rank < 0 || out->initiating.ranks.empty() || out->claim_wrong ||
        std::binary_search(out->initiating.ranks.begin(), out->initiating.ranks.end(), e.rank))
      continue;
    out->claim_wrong = true;
    std::string how = "it failed only after the initiating rank";
    for (const auto& g : out->collateral)
      if (std::binary_search(g.ranks.begin(), g.ranks.end(), e.rank)) {
        how = g.what;
        break;
      }
    out->claim_note = fmt::format("{}{} names rank {} as the first observed failure, but {} failed first ({}); rank {} only followed: {}",
                                  e.launcher, e.host.empty() ? "" : " on " + e.host, e.rank, party_subject(out->initiating),
                                  out->initiating.what, e.rank, how);
  }
  if (out->have_claim) {
    normalize(&out->claim);
    out->claim.what = fmt::format("{}: {}", words, fmt::join(claims, "; "));
  }
}

}  // namespace

BlameResult assign_blame(const std::vector<Failure>& input, const std::vector<LauncherEntry>& launcher,
                         const std::vector<Divergence>& divergences, const std::vector<Divergence>& environment) {
  const std::vector<Failure> failures = after_peer_gone(input);
  BlameResult out;
  std::string absorbed;  // a file's process whose failures its launcher's workers met alike
  out.skew_us = clock_skew_us(failures);
  out.found = environment_party(environment, &out.initiating);
  if (!out.found) {
    When first_when;
    bool by_skew = false;
    if (const Failure* first = earliest_own(failures, launcher, out.skew_us, &first_when, &by_skew)) {
      out.alike = alike_party(*first, first_when, failures, launcher, out.skew_us);
      // A fault the printer only met stays nobody's even when the line names no process.
      out.have_alike = !out.alike.procs.empty() || !out.alike.ranks.empty() || (first->far_end && !out.alike.what.empty());
      if (!out.have_alike) {
        out.initiating = own_party(*first, first_when, failures, launcher);
        out.found = true;
        absorbed = alike_workers(launcher, &out);
      }
      if (by_skew && out.found)
        out.skew_note = fmt::format(
            "the hosts' clocks disagree by up to {:.1f} s (the same timed-out work starts that far apart in their "
            "logs), more than the stamps of the first errors differ: {} is the rank that did not only wait",
            static_cast<double>(out.skew_us) / 1e6, party_subject(out.initiating));
    } else {
      Party p = waiting_party(failures, divergences);
      if (p.ranks.empty() && p.procs.empty()) p = launcher_party(launcher, failures);
      if (p.ranks.empty() && p.procs.empty()) p = peer_party(failures);
      if (!p.ranks.empty() || !p.procs.empty()) {
        out.initiating = p;
        out.found = true;
      }
    }
  }
  if (!out.found && !out.have_alike) {
    out.disagreeing = disagreeing_sides(environment);
    for (auto& p : disagreeing_sides(divergences)) out.disagreeing.push_back(std::move(p));
  }
  std::map<std::string, Party> groups;
  std::vector<std::string> order;
  collateral_groups(failures, absorbed, &out, &groups, &order);
  // After the file's own failures were set apart as the initiator's, before the launcher's.
  if (out.found) name_by_launcher(launcher, &out.initiating);
  stopped_and_collateral(launcher, &out, &groups, &order);
  launcher_claim(launcher, &out);
  return out;
}

}  // namespace denpex::diag
