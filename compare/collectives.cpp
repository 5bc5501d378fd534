#include "compare/collectives.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/evidence_cut.h"
#include "compare/fold.h"
#include "compare/vote.h"

namespace denpex {

namespace {

// By CollKind; also the first of OpName's common spellings (op_name.cpp). Literals: to_string
// hands out their data() as C strings.
constexpr std::string_view kKindNames[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",  "Send",
                                           "Recv",      "AlltoAll",  "Gather",        "Scatter",   "unknown"};
constexpr const char* kDatatypeNames[] = {"int8",    "uint8",   "int32",    "uint32",
                                          "int64",   "uint64",  "float16",  "float32",
                                          "float64", "bfloat16", "float8e4m3", "float8e5m2"};
constexpr const char* kRedopNames[] = {"sum", "prod", "max", "min", "avg"};

const char* kFixCollective =
    "make every rank issue the same collectives in the same order on this communicator: look for a "
    "rank-dependent branch, a skipped backward or unused parameter, uneven batches or data-dependent "
    "routing before this step";

bool is_p2p(CollKind k) { return k == CollKind::send || k == CollKind::recv; }
bool has_redop(CollKind k) {
  return k == CollKind::all_reduce || k == CollKind::reduce || k == CollKind::reduce_scatter;
}
bool has_root(CollKind k) {
  return k == CollKind::broadcast || k == CollKind::reduce || k == CollKind::gather || k == CollKind::scatter;
}

// Equality of what must agree across ranks; buffers and streams are process-local.
bool same_call(const CollectiveCall* a, const CollectiveCall* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->kind != b->kind) return false;
  if (a->kind == CollKind::unknown && a->op_name != b->op_name) return false;
  if (a->count != b->count || a->datatype != b->datatype) return false;
  if (has_redop(a->kind) && a->redop != b->redop) return false;
  if (has_root(a->kind) && a->root != b->root) return false;
  return true;
}

std::string describe_or_none(const CollectiveCall* c) { return c ? describe(*c) : std::string("none"); }

// Which arguments differ, for the message ("count 1024 vs 512").
std::string argument_difference(const CollectiveCall& mine, const CollectiveCall& theirs) {
  std::vector<std::string> parts;
  if (mine.count != theirs.count) parts.push_back(fmt::format("count {} vs {}", mine.count, theirs.count));
  if (mine.datatype != theirs.datatype)
    parts.push_back(fmt::format("datatype {} vs {}", datatype_name(mine.datatype), datatype_name(theirs.datatype)));
  if (has_redop(mine.kind) && mine.redop != theirs.redop)
    parts.push_back(fmt::format("op {} vs {}", redop_name(mine.redop), redop_name(theirs.redop)));
  if (has_root(mine.kind) && mine.root != theirs.root)
    parts.push_back(fmt::format("root {} vs {}", mine.root, theirs.root));
  return fmt::format("{}", fmt::join(parts, ", "));
}

int blame_rank(const CommSequence& s) { return s.global_rank >= 0 ? s.global_rank : s.rank; }

struct Group {
  const CollectiveCall* call = nullptr;
  std::vector<const CommSequence*> members;
  std::vector<size_t> member_index;
};

void fill_blame(Finding* f, const std::vector<const CommSequence*>& members) {
  std::set<int> ranks;
  std::set<std::string> hosts;
  for (const auto* m : members) {
    ranks.insert(blame_rank(*m));
    if (!m->host.empty()) hosts.insert(m->host);
  }
  f->ranks.assign(ranks.begin(), ranks.end());
  f->hosts.assign(hosts.begin(), hosts.end());
}

// Index of the strict majority group, or -1 (compare/vote.h).
int majority_of(const std::vector<Group>& groups) {
  std::vector<size_t> weights;
  for (const auto& g : groups) weights.push_back(g.members.size());
  return strict_majority(weights);
}

using CallList = std::vector<const CollectiveCall*>;

// True when `mine` from position i on looks like `theirs` from i+1 on: the rank skipped one call.
bool skipped_one(const CallList& mine, const CallList& theirs, size_t i) {
  if (i >= mine.size() || i + 1 >= theirs.size()) return false;
  size_t window = std::min<size_t>({4, mine.size() - i, theirs.size() - i - 1});
  for (size_t k = 0; k < window; ++k)
    if (!same_call(mine[i + k], theirs[i + 1 + k])) return false;
  return true;
}

// `pos` is the step reported, `at` its index in `lists`.
void divergence_findings(const std::string& comm, size_t pos, size_t at, const std::vector<Group>& groups,
                         const std::vector<CallList>& lists, std::vector<Finding>* out) {
  int maj = majority_of(groups);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (static_cast<int>(g) == maj) continue;
    const Group& grp = groups[g];
    // Ranks whose sequence ends because they are blocked inside their last call did not skip
    // anything: rank-stuck (analyse_in_flight) says where they are.
    if (grp.call == nullptr && std::all_of(grp.members.begin(), grp.members.end(), [](const CommSequence* m) {
          return !m->calls.empty() && m->calls.back().state == CallState::in_flight;
        }))
      continue;
    Finding f;
    f.comm = comm;
    f.seq = static_cast<long long>(pos);
    f.fix = kFixCollective;
    fill_blame(&f, grp.members);
    f.found = describe_or_none(grp.call);
    std::string who = rank_subject(f.ranks);
    size_t others = 0;
    std::vector<std::string> other_calls;
    for (size_t o = 0; o < groups.size(); ++o) {
      if (o == g) continue;
      others += groups[o].members.size();
      other_calls.push_back(describe_or_none(groups[o].call));
    }
    // Without a majority the call is classified against another group's: same collective with
    // other arguments is still an args mismatch.
    const CollectiveCall* ref = groups[judged_against(maj, g)].call;
    f.expected = maj >= 0 ? describe_or_none(ref) : fmt::format("{}", fmt::join(other_calls, " or "));
    const char* ranks_word = others == 1 ? "rank" : "ranks";
    std::string theirs =
        maj >= 0 ? fmt::format("the other {} {} called {}", others, ranks_word, f.expected)
                 : fmt::format("no majority: the other {} {} called {}", others, ranks_word,
                               f.expected);
    if (grp.call == nullptr) {
      f.code = FindingCode::collective_missing;
      f.message = fmt::format("{} made no call at step {} of communicator {} (sequence ends after {} collectives); {}",
                              who, pos, comm, pos, theirs);
    } else if (maj >= 0 && ref != nullptr && skipped_one(lists[grp.member_index.front()], lists[groups[maj].member_index.front()], at)) {
      f.code = FindingCode::collective_missing;
      f.found = fmt::format("skipped; called {} next", describe(*grp.call));
      f.message = fmt::format("{} skipped step {} of communicator {}: {}, and {} called {} next",
                              who, pos, comm, theirs, who, describe(*grp.call));
    } else if (ref != nullptr && ref->kind == grp.call->kind &&
               !(ref->kind == CollKind::unknown && ref->op_name != grp.call->op_name)) {
      f.code = FindingCode::collective_args_mismatch;
      f.message = fmt::format("{} called {} at step {} of communicator {}; {} ({})", who, f.found, pos, comm,
                              theirs, argument_difference(*grp.call, *ref));
    } else {
      f.code = FindingCode::collective_mismatch;
      f.message = fmt::format("{} called {} at step {} of communicator {}; {}", who, f.found, pos, comm, theirs);
    }
    out->push_back(std::move(f));
  }
}

void align_collectives(const std::string& comm, const std::vector<const CommSequence*>& members,
                       std::vector<Finding>* out) {
  std::vector<CallList> lists(members.size());
  size_t longest = 0;
  for (size_t m = 0; m < members.size(); ++m)
    for (const auto& c : members[m]->calls)
      if (!is_p2p(c.kind)) lists[m].push_back(&c);
  // Recorder rings keep the last N calls of each process, so their first calls differ: align by
  // the recorder's collective number from the latest first call (a rank whose ring ends before
  // it has nothing there, which is what it is: behind).
  bool numbered = true;
  long long start = 0;
  for (const auto& l : lists)
    for (const auto* c : l) {
      numbered = numbered && c->coll_seq >= 0;
      if (c == l.front()) start = std::max(start, c->coll_seq);
    }
  if (!numbered) start = 0;
  for (auto& l : lists) {
    if (numbered)
      l.erase(l.begin(), std::find_if(l.begin(), l.end(), [&](const CollectiveCall* c) { return c->coll_seq >= start; }));
    longest = std::max(longest, l.size());
  }
  for (size_t i = 0; i < longest; ++i) {
    size_t pos = static_cast<size_t>(start) + i;
    std::vector<Group> groups;
    for (size_t m = 0; m < members.size(); ++m) {
      const CollectiveCall* c = i < lists[m].size() ? lists[m][i] : nullptr;
      // A sequence whose input was cut ends where reading stopped: past it, it says nothing.
      if (c == nullptr && members[m]->cut) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return same_call(g.call, c); });
      if (it == groups.end()) it = groups.insert(groups.end(), Group{c, {}, {}});
      it->members.push_back(members[m]);
      it->member_index.push_back(m);
    }
    if (groups.size() > 1) {
      divergence_findings(comm, pos, i, groups, lists, out);
      return;  // after the first divergence positions no longer correspond
    }
  }
}

// The ranks in [0, nranks) that `present` (sorted) lacks, as inclusive ranges: linear in the
// ranks present, whatever nranks says.
std::vector<std::pair<int, int>> missing_ranges(int nranks, const std::set<int>& present) {
  std::vector<std::pair<int, int>> out;
  int next = 0;
  for (int r : present) {
    if (r >= nranks) break;
    if (r > next) out.emplace_back(next, r - 1);
    next = std::max(next, r + 1);
  }
  if (next < nranks) out.emplace_back(next, nranks - 1);
  return out;
}

void absent_ranks(const std::string& comm, const std::vector<const CommSequence*>& members,
                  std::vector<Finding>* out) {
  int nranks = -1;
  std::set<int> present;
  for (const auto* m : members) {
    nranks = std::max(nranks, m->nranks);
    present.insert(m->rank);
  }
  std::vector<std::pair<int, int>> ranges = missing_ranges(nranks, present);
  if (ranges.empty()) return;
  long long total = 0;
  for (const auto& r : ranges) total += static_cast<long long>(r.second) - r.first + 1;
  Finding f;
  f.code = FindingCode::collective_ranks_absent;
  f.severity = Severity::warning;
  f.comm = comm;
  f.seq = 0;
  for (size_t i = 0; i < ranges.size() && f.ranks.size() < static_cast<size_t>(kListedRanks); ++i)
    for (long long r = ranges[i].first; r <= ranges[i].second && f.ranks.size() < static_cast<size_t>(kListedRanks); ++r)
      f.ranks.push_back(static_cast<int>(r));
  std::string subject = rank_subject(f.ranks);
  if (total > kListedRanks) {
    f.ranks_total = total;
    bool more = ranges.size() > static_cast<size_t>(kListedRanges);
    if (more) ranges.resize(kListedRanges);
    f.rank_ranges = ranges;
    subject = ranges_subject(ranges, total, more);
  }
  f.expected = fmt::format("{} ranks", nranks);
  f.found = fmt::format("{} ranks", present.size());
  f.message = fmt::format("communicator {} has {} ranks but the input holds no calls of {} (rank in the communicator)",
                          comm, nranks, subject);
  f.fix = "pass the traces or logs of every rank (a rank killed with SIGKILL leaves no trace)";
  out->push_back(std::move(f));
}

void match_p2p(const std::string& comm, const std::vector<const CommSequence*>& members,
               std::vector<Finding>* out) {
  // (from, to) -> calls in order; keyed by ranks inside the communicator.
  std::map<std::pair<int, int>, std::vector<const CollectiveCall*>> sends, recvs;
  std::map<int, const CommSequence*> by_rank;
  // The k-th Send and the k-th Recv are only known when every ring holds all of them.
  for (const auto* m : members)
    if (m->truncated) return;
  for (const auto* m : members) {
    by_rank[m->rank] = m;
    for (const auto& c : m->calls) {
      if (c.kind == CollKind::send) sends[{m->rank, c.peer}].push_back(&c);
      if (c.kind == CollKind::recv) recvs[{c.peer, m->rank}].push_back(&c);
    }
  }
  std::set<std::pair<int, int>> pairs;
  for (const auto& kv : sends) pairs.insert(kv.first);
  for (const auto& kv : recvs) pairs.insert(kv.first);
  for (const auto& pr : pairs) {
    int from = pr.first, to = pr.second;
    // Only judge a pair whose both ends are in the input.
    if (by_rank.count(from) == 0 || by_rank.count(to) == 0) continue;
    const auto& s = sends[pr];
    const auto& r = recvs[pr];
    size_t n = std::min(s.size(), r.size());
    for (size_t k = 0; k <= n; ++k) {
      Finding f;
      f.comm = comm;
      f.seq = static_cast<long long>(k);
      f.fix = "make every Send have a matching Recv with the same count and datatype on the peer";
      if (k < n) {
        if (s[k]->count == r[k]->count && s[k]->datatype == r[k]->datatype) continue;
        f.code = FindingCode::collective_args_mismatch;
        fill_blame(&f, {by_rank[from], by_rank[to]});
        f.expected = describe(*s[k]);
        f.found = describe(*r[k]);
        f.message = fmt::format("message {} from rank {} to rank {} on communicator {}: rank {} sends {}, rank {} receives {}",
                                k, from, to, comm, from, f.expected, to, f.found);
      } else {
        if (s.size() == r.size()) break;
        bool recv_short = r.size() < s.size();
        const CommSequence* culprit = recv_short ? by_rank[to] : by_rank[from];
        f.code = FindingCode::collective_missing;
        fill_blame(&f, {culprit});
        f.expected = recv_short ? describe(*s[k]) : describe(*r[k]);
        f.found = "none";
        f.message = recv_short
            ? fmt::format("rank {} posts {} Recv from rank {} on communicator {}, rank {} sends {}: message {} ({}) is never received",
                          to, r.size(), from, comm, from, s.size(), k, f.expected)
            : fmt::format("rank {} posts {} Send to rank {} on communicator {}, rank {} receives {}: receive {} ({}) is never sent",
                          from, s.size(), to, comm, to, r.size(), k, f.expected);
      }
      out->push_back(std::move(f));
      break;  // first problem per pair; later messages are shifted by it
    }
  }
}

// --- calls in flight (recorder v2) -------------------------------------------------------------

const char* kFixStuck =
    "look at what the stuck rank is doing (py-spy dump / gdb -p on it, its NCCL_DEBUG=INFO log); the "
    "others are waiting for it, so restarting without fixing it hangs again";

std::string call_name(const CollectiveCall& c) {
  return c.kind == CollKind::unknown ? c.op_name.str() : std::string(to_string(c.kind));
}

// "AllReduce #50", "Send to peer 3 (call 12 on the communicator)", "CommInitRank".
std::string where(const CollectiveCall& c) {
  std::string s;
  if (c.coll_seq >= 0) s = fmt::format("{} #{}", call_name(c), c.coll_seq);
  else if (is_p2p(c.kind)) s = fmt::format("{} {} peer {} (call {} on the communicator)", call_name(c),
                                           c.kind == CollKind::send ? "to" : "from", c.peer, c.trace_seq);
  else s = call_name(c);
  if (c.in_group && c.state == CallState::in_flight) s += " (grouped: its ncclGroupEnd has not returned)";
  return s;
}

// Where one rank of a communicator is, by the calls it entered.
struct Position {
  const CommSequence* m = nullptr;
  bool has_state = false;
  const CollectiveCall* in_flight = nullptr;    // the call it waits in (the first of a group)
  const CollectiveCall* last = nullptr;         // the last collective or point-to-point call entered
  const CollectiveCall* last_coll = nullptr;    // the last collective entered
  long long entered = 0;                        // collectives entered
  // Ordering key: 2k while in collective k; 2E-1 between collectives (in a Send/Recv, or returned
  // from all E collectives it entered).
  long long key() const {
    if (in_flight != nullptr && in_flight->coll_seq >= 0) return 2 * in_flight->coll_seq;
    return 2 * entered - 1;
  }
};

Position position_of(const CommSequence& m) {
  Position p;
  p.m = &m;
  auto consider = [&p](const CollectiveCall& c) {
    if (c.state == CallState::unknown) return;
    p.has_state = true;
    if (c.state == CallState::in_flight &&
        (p.in_flight == nullptr || (c.entered_ns >= 0 && c.entered_ns < p.in_flight->entered_ns)))
      p.in_flight = &c;
  };
  for (const auto& c : m.calls) {
    consider(c);
    p.last = &c;
    if (c.coll_seq >= 0) {
      p.entered = std::max(p.entered, c.coll_seq + 1);
      p.last_coll = &c;
    }
  }
  for (const auto& c : m.comm_calls) consider(c);
  return p;
}

// What the ranks past a stuck rank are doing: "ranks 0-2 returned from #50 and are waiting in
// AllReduce #51", grouped by what they do.
// Ranks are grouped by what they do, not by when they started it: the group's time is its
// earliest (ranks reach a call seconds apart).
std::string describe_others(const std::vector<const Position*>& others, const CollectiveCall& stuck) {
  struct State {
    std::vector<int> ranks;
    long long since = -1;  // earliest entry into the call they wait in, -1 when not waiting
  };
  std::map<std::string, State> by_state;
  for (const auto* o : others) {
    std::string did;
    if (stuck.coll_seq >= 0 && o->entered > stuck.coll_seq) {
      bool returned = false;
      for (const auto& c : o->m->calls)
        if (c.coll_seq == stuck.coll_seq) returned = c.state == CallState::returned;
      did = returned ? fmt::format("returned from #{}", stuck.coll_seq) : fmt::format("entered #{}", stuck.coll_seq);
    } else {
      did = fmt::format("returned from {}", call_name(stuck));
    }
    std::string now = o->in_flight != nullptr ? fmt::format("are waiting in {}", where(*o->in_flight))
                      : o->last != nullptr ? fmt::format("are not in NCCL now (last call: {}, returned)", where(*o->last))
                                           : std::string("are not in NCCL now");
    State& st = by_state[did + " and " + now];
    st.ranks.push_back(blame_rank(*o->m));
    if (o->in_flight != nullptr && o->in_flight->entered_ns >= 0 &&
        (st.since < 0 || o->in_flight->entered_ns < st.since))
      st.since = o->in_flight->entered_ns;
  }
  std::vector<std::string> parts;
  for (const auto& kv : by_state) {
    std::string text = kv.first;
    if (kv.second.ranks.size() == 1) {  // "rank 0 ... is waiting"
      auto at = text.find(" are ");
      if (at != std::string::npos) text.replace(at, 5, " is ");
    }
    if (kv.second.since >= 0) text += " since " + utc_time(kv.second.since);
    parts.push_back(fmt::format("{} {}", rank_subject(kv.second.ranks), text));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

Finding stuck_finding(const std::string& comm, const std::vector<const Position*>& stuck,
                      const std::vector<const Position*>& ahead) {
  const CollectiveCall& c = *stuck.front()->in_flight;
  long long since = c.entered_ns;
  std::vector<const CommSequence*> members;
  for (const auto* p : stuck) {
    members.push_back(p->m);
    if (p->in_flight->entered_ns >= 0 && (since < 0 || p->in_flight->entered_ns < since)) since = p->in_flight->entered_ns;
  }
  Finding f;
  f.code = FindingCode::rank_stuck;
  f.comm = comm;
  f.seq = c.coll_seq >= 0 ? c.coll_seq : c.trace_seq;
  fill_blame(&f, members);
  f.found = fmt::format("in flight since {}: {}", utc_time(since),
                        c.kind == CollKind::unknown ? c.op_name.str() : describe(c));
  std::vector<int> others;
  for (const auto* a : ahead) others.push_back(blame_rank(*a->m));
  f.expected = fmt::format("returned, as {} did", rank_subject(others));
  f.message = fmt::format("{} {} stuck in {} on communicator {} since {} (entered, never returned); {}",
                          rank_subject(f.ranks), f.ranks.size() == 1 ? "is" : "are", where(c), comm, utc_time(since),
                          describe_others(ahead, c));
  f.fix = kFixStuck;
  return f;
}

// Ranks waiting in a call that some rank of the communicator has not entered: that rank is the
// one to look at; with nobody behind, everyone waits (for ranks not in the input, or for NCCL).
Finding waiting_finding(const std::string& comm, const std::vector<const Position*>& waiting,
                        const std::vector<const Position*>& behind, int nranks, size_t present) {
  const CollectiveCall& c = *waiting.front()->in_flight;
  long long since = c.entered_ns;
  std::vector<int> waiters;
  for (const auto* p : waiting) {
    waiters.push_back(blame_rank(*p->m));
    if (p->in_flight->entered_ns >= 0 && (since < 0 || p->in_flight->entered_ns < since)) since = p->in_flight->entered_ns;
  }
  Finding f;
  f.code = FindingCode::collective_in_flight;
  f.comm = comm;
  f.seq = c.coll_seq >= 0 ? c.coll_seq : c.trace_seq;
  f.found = fmt::format("in flight since {}: {}", utc_time(since), c.kind == CollKind::unknown ? c.op_name.str() : describe(c));
  std::string waits = fmt::format("{} {} waiting in {} on communicator {} since {}", rank_subject(waiters),
                                  waiters.size() == 1 ? "is" : "are", where(c), comm, utc_time(since));
  if (!behind.empty()) {
    std::vector<const CommSequence*> members;
    std::vector<std::string> parts;
    for (const auto* b : behind) {
      members.push_back(b->m);
      parts.push_back(b->last != nullptr
                          ? fmt::format("rank {} returned from {} and made no call on this communicator since",
                                        blame_rank(*b->m), where(*b->last))
                          : fmt::format("rank {} made no call on this communicator", blame_rank(*b->m)));
    }
    fill_blame(&f, members);
    f.expected = fmt::format("entered by {}", rank_subject(waiters));
    f.found = "not entered";
    f.message = fmt::format("{}; {} never entered it ({}): it is outside NCCL, stuck in its own code or dead",
                            waits, rank_subject(f.ranks), fmt::join(parts, "; "));
    f.fix = "look at what that rank is doing (py-spy dump / gdb -p, its log): the others wait for it in NCCL";
    return f;
  }
  f.severity = Severity::warning;
  std::vector<const CommSequence*> members;
  for (const auto* p : waiting) members.push_back(p->m);
  fill_blame(&f, members);
  f.expected = "returned";
  if (nranks > static_cast<int>(present)) {
    f.message = fmt::format("{}; no rank in the input is behind them, and {} of the {} ranks of the communicator are "
                            "not in the input: the call waits for one of those", waits, static_cast<size_t>(nranks) - present, nranks);
    f.fix = "add the traces (or NCCL_DEBUG=INFO logs) of the missing ranks; the one that never entered this call is the culprit";
  } else {
    f.message = fmt::format("{}; every rank of the communicator entered it and none returned: the collective itself "
                            "does not complete", waits);
    f.fix = "every rank is inside NCCL: look at the network and GPUs (NCCL_DEBUG=INFO logs, dmesg for Xid errors, "
            "NCCL_IB_* / NCCL_SOCKET_IFNAME settings)";
  }
  return f;
}

void analyse_in_flight(const std::string& comm, const std::vector<const CommSequence*>& members,
                       std::vector<Finding>* out) {
  std::vector<Position> pos;
  int nranks = -1;
  for (const auto* m : members) {
    pos.push_back(position_of(*m));
    nranks = std::max(nranks, m->nranks);
  }
  std::vector<const Position*> life, calls;
  for (const auto& p : pos) {
    if (!p.has_state || p.in_flight == nullptr) continue;
    if (p.in_flight->kind == CollKind::unknown && p.in_flight->coll_seq < 0) life.push_back(&p);
    else calls.push_back(&p);
  }
  // Life-cycle calls (init, split, destroy...): the ranks that returned from the same call are
  // past the stuck ones; the ranks that neither entered nor returned it are behind them.
  std::set<std::string> ops;
  for (const auto* p : life) ops.insert(p->in_flight->op_name.str());
  for (const auto& op : ops) {
    bool init_op = op.rfind("CommInit", 0) == 0 || op == "CommSplit" || op == "CommShrink";
    std::vector<const Position*> in_op, ahead, behind;
    for (const auto& p : pos) {
      if (!p.has_state) continue;
      bool waiting = p.in_flight != nullptr && p.in_flight->op_name == op;
      bool returned = false;
      for (const auto& c : p.m->comm_calls) returned = returned || (c.op_name == op && c.state == CallState::returned);
      if (waiting) in_op.push_back(&p);
      else if (returned || (init_op && !p.m->calls.empty())) ahead.push_back(&p);
      else if (p.in_flight == nullptr) behind.push_back(&p);
    }
    if (in_op.empty()) continue;
    if (!ahead.empty()) out->push_back(stuck_finding(comm, in_op, ahead));
    else out->push_back(waiting_finding(comm, in_op, behind, nranks, members.size()));
  }
  if (calls.empty()) return;
  long long kmin = calls.front()->key();
  for (const auto* p : calls) kmin = std::min(kmin, p->key());
  std::vector<const Position*> stuck, ahead, behind;
  for (const auto& p : pos) {
    if (!p.has_state || (p.in_flight != nullptr && p.in_flight->kind == CollKind::unknown && p.in_flight->coll_seq < 0))
      continue;
    long long k = p.key();
    if (p.in_flight != nullptr && k == kmin) stuck.push_back(&p);
    else if (k > kmin) ahead.push_back(&p);
    else if (p.in_flight == nullptr) behind.push_back(&p);  // k <= kmin: has not entered the call
  }
  if (!ahead.empty()) out->push_back(stuck_finding(comm, stuck, ahead));
  else out->push_back(waiting_finding(comm, stuck, behind, nranks, members.size()));
}

}  // namespace

const char* to_string(TracedProcess::End e) {
  switch (e) {
    case TracedProcess::End::exited: return "exited";
    case TracedProcess::End::signalled: return "signalled";
    case TracedProcess::End::killed_or_running: return "killed-or-running";
    case TracedProcess::End::unknown: break;
  }
  return "unknown";
}

const char* to_string(CollKind k) { return kKindNames[static_cast<int>(k)].data(); }

CollKind parse_coll_kind(std::string_view name) {
  for (int i = 0; i < static_cast<int>(CollKind::unknown); ++i)
    if (name == kKindNames[i]) return static_cast<CollKind>(i);
  return CollKind::unknown;
}

std::string datatype_name(int datatype) {
  if (datatype >= 0 && datatype < static_cast<int>(std::size(kDatatypeNames))) return kDatatypeNames[datatype];
  return fmt::format("datatype {}", datatype);
}

std::string redop_name(int op) {
  if (op >= 0 && op < static_cast<int>(std::size(kRedopNames))) return kRedopNames[op];
  return fmt::format("op {}", op);
}

std::string describe(const CollectiveCall& c) {
  std::string name = c.kind == CollKind::unknown ? c.op_name.str() : to_string(c.kind);
  std::string args = fmt::format("count={}, {}", c.count, datatype_name(c.datatype));
  if (has_redop(c.kind)) args += ", " + redop_name(c.redop);
  if (has_root(c.kind)) args += fmt::format(", root={}", c.root);
  if (is_p2p(c.kind)) args += fmt::format(", peer={}", c.peer);
  return fmt::format("{}({})", name, args);
}

std::vector<Finding> analyse_sequences(const std::vector<CommSequence>& sequences) {
  std::map<std::string, std::vector<const CommSequence*>> by_comm;
  for (const auto& s : sequences) by_comm[s.comm].push_back(&s);
  std::vector<Finding> out;
  for (auto& kv : by_comm) {
    auto& members = kv.second;
    std::sort(members.begin(), members.end(),
              [](const CommSequence* a, const CommSequence* b) { return a->rank < b->rank; });
    align_collectives(kv.first, members, &out);
    analyse_in_flight(kv.first, members, &out);
    match_p2p(kv.first, members, &out);
    absent_ranks(kv.first, members, &out);
  }
  return out;
}

namespace {

using WatchKey = std::tuple<long long, std::string, long long, long long>;
using WatchGroups = std::vector<std::pair<WatchKey, std::vector<const WatchdogState*>>>;

// About half a terminal line: a fingerprint's side keeps what the difference belongs to
// ("OpType=ALLREDUCE, TensorShape=[...]") and both sides fit the one line of a merged finding.
constexpr std::size_t kQuoteWidth = 110;

// How group `gi` is shown against group `other`: in the user's own text when every state of both
// groups has it (a DETAIL fingerprint), cut around where the two differ; else the fields read.
std::string show_group(const WatchGroups& list, std::size_t gi, std::size_t other, int pass) {
  const WatchKey& k = list[gi].first;
  if (pass == 1) return fmt::format("last enqueued work {}", std::get<0>(k));
  const std::string& mine = list[gi].second.front()->text;
  const std::string& theirs = list[other].second.front()->text;
  if (!mine.empty() && !theirs.empty()) return cut_around_difference(mine, theirs, kQuoteWidth);
  return fmt::format("WorkNCCL(SeqNum={}, OpType={}, NumelIn={}, NumelOut={})", std::get<0>(k), std::get<1>(k),
                     std::get<2>(k), std::get<3>(k));
}

// The finding for group `gi` of process group `comm`, against the majority `maj` (-1: none).
Finding watchdog_finding(const std::string& comm, const WatchGroups& list, std::size_t gi, int maj, int pass) {
  const bool tie = maj < 0;
  const auto& g = list[gi];
  const std::size_t ref = judged_against(maj, gi);
  Finding f;
  f.comm = comm;
  f.seq = std::get<0>(g.first);
  f.fix = kFixCollective;
  std::set<int> ranks;
  std::set<std::string> hosts;
  for (const auto* s : g.second) {
    ranks.insert(s->global_rank >= 0 ? s->global_rank : s->rank);
    if (!s->host.empty()) hosts.insert(s->host);
  }
  f.ranks.assign(ranks.begin(), ranks.end());
  f.hosts.assign(hosts.begin(), hosts.end());
  f.found = show_group(list, gi, ref, pass);
  std::vector<std::string> others;
  for (std::size_t oi = 0; oi < list.size(); ++oi)
    if (oi != gi && (tie || static_cast<int>(oi) == maj)) others.push_back(show_group(list, oi, gi, pass));
  f.expected = fmt::format("{}", fmt::join(others, " or "));
  const WatchKey& rk = list[ref].first;
  if (std::get<0>(g.first) != std::get<0>(rk)) f.code = FindingCode::collective_missing;
  else if (std::get<1>(g.first) != std::get<1>(rk)) f.code = FindingCode::collective_mismatch;
  else f.code = FindingCode::collective_args_mismatch;
  f.message = fmt::format("{} of process group {} reports {}; {}the others report {}", rank_subject(f.ranks), comm,
                          f.found, tie ? "no majority: " : "", f.expected);
  return f;
}

}  // namespace

std::vector<Finding> analyse_watchdog(const std::vector<WatchdogState>& states) {
  std::map<std::string, std::vector<const WatchdogState*>> by_group;
  for (const auto& s : states) by_group[s.group].push_back(&s);
  std::vector<Finding> out;
  for (const auto& kv : by_group) {
    // Two readings, most specific first: the timed-out work, then the last enqueued sequence number.
    for (int pass = 0; pass < 2; ++pass) {
      std::map<WatchKey, std::vector<const WatchdogState*>> groups;
      for (const auto* s : kv.second) {
        if (pass == 0 && s->seq >= 0) groups[WatchKey{s->seq, s->op_type, s->numel_in, s->numel_out}].push_back(s);
        if (pass == 1 && s->last_enqueued >= 0) groups[WatchKey{s->last_enqueued, "", -1, -1}].push_back(s);
      }
      if (groups.size() < 2) continue;
      const WatchGroups list(groups.begin(), groups.end());
      std::vector<size_t> weights;
      for (const auto& g : list) weights.push_back(g.second.size());
      const int maj = strict_majority(weights);
      for (size_t gi = 0; gi < list.size(); ++gi)
        if (static_cast<int>(gi) != maj) out.push_back(watchdog_finding(kv.first, list, gi, maj, pass));
      break;  // the more specific reading decided
    }
  }
  return out;
}

}  // namespace denpex

namespace denpex {

std::string utc_time(long long ns) {
  if (ns < 0) return "unknown time";
  std::time_t t = static_cast<std::time_t>(ns / 1000000000LL);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::vector<Finding> analyse_traced_processes(const std::vector<TracedProcess>& processes) {
  std::set<int> seen;  // launcher ranks with calls in some trace
  for (const auto& p : processes)
    if (p.calls > 0 && p.global_rank >= 0) seen.insert(p.global_rank);
  std::vector<Finding> out;
  for (const auto& p : processes) {
    std::string who = p.global_rank >= 0 ? fmt::format("rank {}", p.global_rank) : std::string("a process");
    std::string proc = fmt::format("pid {}{}", p.pid, p.host.empty() ? std::string() : " on " + p.host);
    if (p.calls == 0 && !p.nccl_mapped.empty() && p.global_rank >= 0 && seen.count(p.global_rank) == 0) {
      Finding f;
      f.code = FindingCode::collective_rank_unseen;
      f.severity = Severity::warning;
      f.ranks = {p.global_rank};
      if (!p.host.empty()) f.hosts = {p.host};
      f.found = "no NCCL call intercepted";
      f.expected = "NCCL calls through libdenpex-trace.so";
      f.message = fmt::format("the recorder could not see {} ({}): NCCL is mapped in it ({}) but no NCCL call went through "
                              "the recorder: NCCL is linked statically, or called through a private dlopen handle, or "
                              "the rank ended before its first call; where this rank is cannot be told from traces",
                              who, proc, p.nccl_mapped);
      f.fix = fmt::format("read {}'s own log: run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL and give that log "
                          "to denpex-probe collectives or diagnose; or use a PyTorch/NCCL that loads libnccl.so.2 "
                          "dynamically", who);
      out.push_back(std::move(f));
    }
    for (const auto& what : p.in_flight_unattributed) {
      Finding f;
      f.code = FindingCode::rank_stuck;
      if (p.global_rank >= 0) f.ranks = {p.global_rank};
      if (!p.host.empty()) f.hosts = {p.host};
      f.found = what;
      f.message = p.end == TracedProcess::End::signalled
                      ? fmt::format("{} ({}) was inside {} when signal {} ended it (entered, never returned)", who,
                                    proc, what, p.signal)
                      : fmt::format("{} ({}) is stuck in {} (entered, never returned), on a communicator the recorder "
                                    "could not identify across ranks", who, proc, what);
      f.fix = kFixStuck;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace denpex
