#include "compare/collectives.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace denpex {

namespace {

constexpr const char* kKindNames[] = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                      "Reduce",    "Send",      "Recv",          "unknown"};
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
bool has_root(CollKind k) { return k == CollKind::broadcast || k == CollKind::reduce; }

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

// "rank 2", "ranks 0-3,5".
std::string rank_list(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<std::string> parts;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    parts.push_back(j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", fmt::join(parts, ","));
}

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

// Index of the strict majority group, or -1.
int majority_of(const std::vector<Group>& groups) {
  int best = -1;
  bool tie = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (best < 0 || groups[g].members.size() > groups[best].members.size()) {
      best = static_cast<int>(g);
      tie = false;
    } else if (groups[g].members.size() == groups[best].members.size()) {
      tie = true;
    }
  }
  return tie ? -1 : best;
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

void divergence_findings(const std::string& comm, size_t pos, const std::vector<Group>& groups,
                         const std::vector<CallList>& lists, std::vector<Finding>* out) {
  int maj = majority_of(groups);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (static_cast<int>(g) == maj) continue;
    const Group& grp = groups[g];
    Finding f;
    f.comm = comm;
    f.seq = static_cast<long long>(pos);
    f.fix = kFixCollective;
    fill_blame(&f, grp.members);
    f.found = describe_or_none(grp.call);
    std::string who = rank_list(f.ranks);
    size_t others = 0;
    std::vector<std::string> other_calls;
    for (size_t o = 0; o < groups.size(); ++o) {
      if (o == g) continue;
      others += groups[o].members.size();
      other_calls.push_back(describe_or_none(groups[o].call));
    }
    // Without a majority the call is classified against another group's: same collective with
    // other arguments is still an args mismatch.
    const CollectiveCall* ref = maj >= 0 ? groups[maj].call : groups[g == 0 ? 1 : 0].call;
    f.expected = maj >= 0 ? describe_or_none(ref) : fmt::format("{}", fmt::join(other_calls, " or "));
    const char* ranks_word = others == 1 ? "rank" : "ranks";
    std::string theirs =
        maj >= 0 ? fmt::format("the other {} {} called {}", others, ranks_word, f.expected)
                 : fmt::format("no majority: the other {} {} called {}", others, ranks_word,
                               f.expected);
    if (grp.call == nullptr) {
      f.code = "collective-missing";
      f.message = fmt::format("{} made no call at step {} of communicator {} (sequence ends after {} collectives); {}",
                              who, pos, comm, pos, theirs);
    } else if (maj >= 0 && ref != nullptr && skipped_one(lists[grp.member_index.front()], lists[groups[maj].member_index.front()], pos)) {
      f.code = "collective-missing";
      f.found = fmt::format("skipped; called {} next", describe(*grp.call));
      f.message = fmt::format("{} skipped step {} of communicator {}: {}, and {} called {} next",
                              who, pos, comm, theirs, who, describe(*grp.call));
    } else if (ref != nullptr && ref->kind == grp.call->kind &&
               !(ref->kind == CollKind::unknown && ref->op_name != grp.call->op_name)) {
      f.code = "collective-args-mismatch";
      f.message = fmt::format("{} called {} at step {} of communicator {}; {} ({})", who, f.found, pos, comm,
                              theirs, argument_difference(*grp.call, *ref));
    } else {
      f.code = "collective-mismatch";
      f.message = fmt::format("{} called {} at step {} of communicator {}; {}", who, f.found, pos, comm, theirs);
    }
    out->push_back(std::move(f));
  }
}

void align_collectives(const std::string& comm, const std::vector<const CommSequence*>& members,
                       std::vector<Finding>* out) {
  std::vector<CallList> lists(members.size());
  size_t longest = 0;
  for (size_t m = 0; m < members.size(); ++m) {
    for (const auto& c : members[m]->calls)
      if (!is_p2p(c.kind)) lists[m].push_back(&c);
    longest = std::max(longest, lists[m].size());
  }
  for (size_t pos = 0; pos < longest; ++pos) {
    std::vector<Group> groups;
    for (size_t m = 0; m < members.size(); ++m) {
      const CollectiveCall* c = pos < lists[m].size() ? lists[m][pos] : nullptr;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return same_call(g.call, c); });
      if (it == groups.end()) it = groups.insert(groups.end(), Group{c, {}, {}});
      it->members.push_back(members[m]);
      it->member_index.push_back(m);
    }
    if (groups.size() > 1) {
      divergence_findings(comm, pos, groups, lists, out);
      return;  // after the first divergence positions no longer correspond
    }
  }
}

void absent_ranks(const std::string& comm, const std::vector<const CommSequence*>& members,
                  std::vector<Finding>* out) {
  int nranks = -1;
  std::set<int> present;
  for (const auto* m : members) {
    nranks = std::max(nranks, m->nranks);
    present.insert(m->rank);
  }
  std::vector<int> missing;
  for (int r = 0; r < nranks; ++r)
    if (present.count(r) == 0) missing.push_back(r);
  if (missing.empty()) return;
  Finding f;
  f.code = "collective-ranks-absent";
  f.severity = Severity::warning;
  f.comm = comm;
  f.seq = 0;
  f.ranks = missing;
  f.expected = fmt::format("{} ranks", nranks);
  f.found = fmt::format("{} ranks", present.size());
  f.message = fmt::format("communicator {} has {} ranks but the input holds no calls of {} (rank in the communicator)",
                          comm, nranks, rank_list(missing));
  f.fix = "pass the traces or logs of every rank (a rank killed with SIGKILL leaves no trace)";
  out->push_back(std::move(f));
}

void match_p2p(const std::string& comm, const std::vector<const CommSequence*>& members,
               std::vector<Finding>* out) {
  // (from, to) -> calls in order; keyed by ranks inside the communicator.
  std::map<std::pair<int, int>, std::vector<const CollectiveCall*>> sends, recvs;
  std::map<int, const CommSequence*> by_rank;
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
        f.code = "collective-args-mismatch";
        fill_blame(&f, {by_rank[from], by_rank[to]});
        f.expected = describe(*s[k]);
        f.found = describe(*r[k]);
        f.message = fmt::format("message {} from rank {} to rank {} on communicator {}: rank {} sends {}, rank {} receives {}",
                                k, from, to, comm, from, f.expected, to, f.found);
      } else {
        if (s.size() == r.size()) break;
        bool recv_short = r.size() < s.size();
        const CommSequence* culprit = recv_short ? by_rank[to] : by_rank[from];
        f.code = "collective-missing";
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

}  // namespace

const char* to_string(CollKind k) { return kKindNames[static_cast<int>(k)]; }

CollKind parse_coll_kind(const std::string& name) {
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
  std::string name = c.kind == CollKind::unknown ? c.op_name : to_string(c.kind);
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
    match_p2p(kv.first, members, &out);
    absent_ranks(kv.first, members, &out);
  }
  return out;
}

std::vector<Finding> analyse_watchdog(const std::vector<WatchdogState>& states) {
  std::map<std::string, std::vector<const WatchdogState*>> by_group;
  for (const auto& s : states) by_group[s.group].push_back(&s);
  std::vector<Finding> out;
  for (const auto& kv : by_group) {
    // Two readings, most specific first: the timed-out work, then the last enqueued sequence number.
    for (int pass = 0; pass < 2; ++pass) {
      using Key = std::tuple<long long, std::string, long long, long long>;
      std::map<Key, std::vector<const WatchdogState*>> groups;
      for (const auto* s : kv.second) {
        if (pass == 0 && s->seq >= 0) groups[Key{s->seq, s->op_type, s->numel_in, s->numel_out}].push_back(s);
        if (pass == 1 && s->last_enqueued >= 0) groups[Key{s->last_enqueued, "", -1, -1}].push_back(s);
      }
      if (groups.size() < 2) continue;
      const Key* maj = nullptr;
      bool tie = false;
      for (const auto& g : groups) {
        if (maj == nullptr || g.second.size() > groups[*maj].size()) {
          maj = &g.first;
          tie = false;
        } else if (g.second.size() == groups[*maj].size()) {
          tie = true;
        }
      }
      auto show = [pass](const Key& k) {
        return pass == 0 ? fmt::format("WorkNCCL(SeqNum={}, OpType={}, NumelIn={}, NumelOut={})", std::get<0>(k),
                                       std::get<1>(k), std::get<2>(k), std::get<3>(k))
                         : fmt::format("last enqueued work {}", std::get<0>(k));
      };
      for (const auto& g : groups) {
        if (!tie && g.first == *maj) continue;
        Finding f;
        f.comm = kv.first;
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
        f.found = show(g.first);
        std::vector<std::string> others;
        for (const auto& o : groups)
          if (o.first != g.first && (tie || o.first == *maj)) others.push_back(show(o.first));
        f.expected = fmt::format("{}", fmt::join(others, " or "));
        const Key& ref = tie ? groups.begin()->first == g.first ? std::next(groups.begin())->first : groups.begin()->first
                             : *maj;
        if (std::get<0>(g.first) != std::get<0>(ref)) f.code = "collective-missing";
        else if (std::get<1>(g.first) != std::get<1>(ref)) f.code = "collective-mismatch";
        else f.code = "collective-args-mismatch";
        f.message = fmt::format("{} of process group {} reports {}; {}the others report {}", rank_list(f.ranks), kv.first,
                                f.found, tie ? "no majority: " : "", f.expected);
        out.push_back(std::move(f));
      }
      break;  // the more specific reading decided
    }
  }
  return out;
}

}  // namespace denpex
