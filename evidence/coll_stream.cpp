#include "evidence/coll_stream.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace denpex::evidence {

namespace {

// A member with nothing buffered while another holds this many unsettled calls has ended (for
// now): the others settle without it, and it is compared with the references if it goes on.
constexpr size_t kStallAfter = 4096;
// After a divergence the analyser needs only the first differing position and a short window
// after it (to tell a skipped call from a different one).
constexpr size_t kKeepAfterDivergence = 64;
// References kept for ranks that show up late; the oldest beyond this are dropped.
constexpr size_t kMaxReferences = 1 << 20;
constexpr size_t kMaxP2p = 1 << 16;
constexpr size_t kLostKept = 8;
// Calls a member must have shared with others before "its sequence ends here" is believed.
constexpr long long kMinComparedToJudgeEnd = 8;
// Positions per member handed to the analyser from where it must start: it reports the first
// divergence only, so a window after it is all it reads.
constexpr size_t kAnalyserWindow = 4 * kKeepAfterDivergence;

bool is_p2p(CollKind k) { return k == CollKind::send || k == CollKind::recv; }
bool has_redop(CollKind k) {
  return k == CollKind::all_reduce || k == CollKind::reduce || k == CollKind::reduce_scatter;
}
bool has_root(CollKind k) { return k == CollKind::broadcast || k == CollKind::reduce; }


}  // namespace

CollectiveCall to_collective_call(const CollCall& c, long long trace_seq) {
  CollectiveCall out;
  out.kind = c.kind;
  out.op_name = OpName(c.kind);
  out.count = c.count;
  out.datatype = c.datatype;
  out.redop = has_redop(c.kind) ? c.redop : -1;
  out.root = has_root(c.kind) ? c.root : -1;
  out.peer = is_p2p(c.kind) ? c.peer : -1;
  out.trace_seq = trace_seq;
  return out;
}

bool same_call(const CollCall& a, const CollCall& b) {
  if (a.kind != b.kind || a.count != b.count || a.datatype != b.datatype) return false;
  if (has_redop(a.kind) && a.redop != b.redop) return false;
  if (has_root(a.kind) && a.root != b.root) return false;
  return true;
}

int CollStream::comm(const std::string& id, int nranks) {
  auto it = comm_index_.find(id);
  if (it != comm_index_.end()) {
    if (nranks > comms_[it->second].nranks) comms_[it->second].nranks = nranks;
    return it->second;
  }
  int idx = static_cast<int>(comms_.size());
  comms_.emplace_back();
  comms_.back().id = id;
  comms_.back().nranks = nranks;
  comm_index_.emplace(id, idx);
  return idx;
}

int CollStream::member(int ci, int proc, int rank_in_comm) {
  Comm& c = comms_[static_cast<size_t>(ci)];
  auto it = c.by_proc.find(proc);
  if (it != c.by_proc.end()) {
    Member& m = c.members[static_cast<size_t>(it->second)];
    if (rank_in_comm >= 0) m.rank_in_comm = rank_in_comm;
    return it->second;
  }
  int idx = static_cast<int>(c.members.size());
  c.members.emplace_back();
  Member& m = c.members.back();
  m.proc = proc;
  m.rank_in_comm = rank_in_comm;
  // A member that shows up after positions were settled is compared with their references.
  m.stalled = c.frontier > 0;
  if (!m.stalled) ++c.empty_active;
  c.by_proc.emplace(proc, idx);
  return idx;
}

const CollCall* CollStream::ref_at(const Comm& c, long long pos) const {
  auto it = std::lower_bound(c.ref.begin(), c.ref.end(), pos,
                             [](const CollCall& r, long long p) { return r.pos < p; });
  return it != c.ref.end() && it->pos == pos ? &*it : nullptr;
}

void CollStream::add(int ci, int mi, const CollCall& in) {
  Comm& c = comms_[static_cast<size_t>(ci)];
  Member& m = c.members[static_cast<size_t>(mi)];
  m.last_file = in.file;
  CollCall call = in;
  if (is_p2p(call.kind)) {
    if (m.p2p.size() < kMaxP2p) m.p2p.push_back(call);
    else ++c.dropped;
    return;
  }
  if (call.pos < 0) call.pos = m.next_pos;
  if (!m.queue.empty() && call.pos <= m.queue.back().pos) {
    // Positions going backwards in one process: a second communicator with the same identity
    // (ambiguous matching) or a restarted job. Kept in order of arrival.
    call.pos = m.queue.back().pos + 1;
  }
  m.next_pos = call.pos + 1;
  if (m.first_pos < 0) m.first_pos = call.pos;
  if (call.pos < c.frontier && !c.frozen) {
    // Behind the frontier: a member that showed up late or went on after stalling, compared
    // with what the others did there.
    const CollCall* ref = ref_at(c, call.pos);
    if (ref == nullptr || same_call(*ref, call)) {
      // (no reference: nobody logged that position, or it was trimmed; nothing to compare)
      m.done_upto = std::max(m.done_upto, call.pos + 1);
      if (ref != nullptr) ++m.compared;
      return;
    }
    if (!c.frozen || call.pos < c.frozen_at) c.frozen_at = call.pos;
    c.frozen = true;
    m.done_upto = std::min(m.done_upto, call.pos);
  }
  if (c.frozen && m.queue.size() >= kKeepAfterDivergence && call.pos > c.frozen_at + static_cast<long long>(kKeepAfterDivergence)) {
    ++c.dropped;
    return;
  }
  bool was_empty = m.queue.empty();
  m.queue.push_back(call);
  ++buffered_;
  if (m.stalled && call.pos >= c.frontier) m.stalled = false;
  else if (was_empty && !m.stalled) --c.empty_active;
  // Settling can only move when the last waiting member got a call, or when a member runs so far
  // ahead that the empty ones count as stopped.
  // Until every rank of the communicator has shown up (its first lines interleave), nothing is
  // settled: a rank seen late is still compared, but only with the references.
  bool complete = c.nranks <= 0 || static_cast<int>(c.members.size()) >= c.nranks;
  if (!c.frozen && ((c.empty_active == 0 && complete) || m.queue.size() % kStallAfter == 0)) settle(c);
}

void CollStream::settle(Comm& c) {
  for (;;) {
    bool complete = c.nranks <= 0 || static_cast<int>(c.members.size()) >= c.nranks;
    if (c.empty_active > 0 || !complete) {
      size_t most = 0;
      for (const auto& m : c.members)
        if (!m.stalled) most = std::max(most, m.queue.size());
      if (most < kStallAfter) return;
      for (auto& m : c.members)
        if (!m.stalled && m.queue.empty()) {
          m.stalled = true;
          --c.empty_active;
        }
    }
    long long p = c.frontier;
    long long lowest = -1;
    const CollCall* first = nullptr;
    bool agree = true, any_active = false;
    for (const auto& m : c.members) {
      if (m.stalled) continue;
      any_active = true;
      long long h = m.queue.front().pos;
      if (lowest < 0 || h < lowest) lowest = h;
      if (h != p) continue;
      if (first == nullptr) first = &m.queue.front();
      else if (!same_call(*first, m.queue.front())) agree = false;
    }
    if (!any_active) return;
    if (first == nullptr) {  // nobody logged position p: skip to the lowest logged one
      c.frontier = lowest;
      for (auto& m : c.members)
        if (!m.stalled) m.done_upto = std::max(m.done_upto, lowest);
      continue;
    }
    if (!agree) {
      c.frozen = true;
      c.frozen_at = p;
      return;
    }
    c.ref.push_back(*first);
    if (c.ref.size() > kMaxReferences) {
      c.ref.pop_front();
      c.ref_trimmed = true;
    }
    int logged = 0;
    for (const auto& m : c.members)
      if (!m.stalled && m.queue.front().pos == p) ++logged;
    for (auto& m : c.members) {
      if (m.stalled) continue;
      if (m.queue.front().pos == p) {
        m.queue.pop_front();
        --buffered_;
        if (m.queue.empty()) ++c.empty_active;
        if (logged > 1) ++m.compared;
      } else if (m.first_pos >= 0 && m.first_pos < p) {
        // Inside this member's own sequence: a lost line. (Before its first call the member's
        // log simply starts later.)
        if (m.lost.size() < kLostKept) {
          m.lost.push_back(p);
          m.lost_after.emplace_back(m.queue.front().file, m.queue.front().line);
        }
        ++m.lost_count;
      }
      m.done_upto = p + 1;
    }
    ++c.settled;
    c.frontier = p + 1;
  }
}

CommStats CollStream::comm_stats(const Comm& c, const std::function<MemberIdentity(int proc)>& identity,
                                 std::vector<MemberIdentity>* ids) {
  CommStats st;
  st.comm = c.id;
  st.nranks = c.nranks;
  st.members = static_cast<int>(c.members.size());
  st.settled = c.settled;
  st.dropped = c.dropped;
  st.ref_trimmed = c.ref_trimmed;
  for (const auto& m : c.members) {
    ids->push_back(identity(m.proc));
    if (ids->back().global_rank >= 0) ids->back().name = fmt::format("rank {}", ids->back().global_rank);
    if (m.lost_count > 0) st.lost[ids->back().name] += m.lost_count;
    for (const auto& la : m.lost_after)
      if (st.lost_after.size() < 4) st.lost_after.push_back(la);
  }
  return st;
}

// Where the analyser must start: the first divergence, or where a member stopped.
long long CollStream::analysis_start(const Comm& c) {
  long long start = c.frozen ? std::min(c.frozen_at, c.frontier) : c.frontier;
  for (const auto& m : c.members) start = std::min(start, m.done_upto);
  if (!c.ref.empty() && start < c.ref.front().pos && c.ref_trimmed) start = c.ref.front().pos;
  return start;
}

// Per member: position -> call, from the references it took part in, then its own calls.
void CollStream::call_table(const Comm& c, long long start, CallTable* table, std::set<long long>* positions) {
  table->assign(c.members.size(), {});
  for (size_t i = 0; i < c.members.size(); ++i) {
    const Member& m = c.members[i];
    std::set<long long> lost(m.lost.begin(), m.lost.end());
    size_t taken = 0;
    for (auto it = std::lower_bound(c.ref.begin(), c.ref.end(), start,
                                    [](const CollCall& r, long long p) { return r.pos < p; });
         it != c.ref.end() && it->pos < m.done_upto && taken < kAnalyserWindow; ++it, ++taken) {
      if (lost.count(it->pos)) continue;
      (*table)[i][it->pos] = &*it;
      positions->insert(it->pos);
    }
    for (const auto& q : m.queue)
      if (q.pos >= start && taken++ < kAnalyserWindow) {
        (*table)[i][q.pos] = &q;  // its own call, over a reference
        positions->insert(q.pos);
      }
  }
}

// A member whose log ends before the others' with too few calls compared to tell a rank that
// stopped calling from an excerpt that stops (a paste of a few lines) is left out.
std::vector<bool> CollStream::excerpts(const Comm& c, const std::set<long long>& positions, CallTable* table) {
  long long last_any = positions.empty() ? -1 : *positions.rbegin();
  std::vector<bool> excluded(c.members.size(), false);
  for (size_t i = 0; i < c.members.size(); ++i) {
    long long last = (*table)[i].empty() ? -1 : (*table)[i].rbegin()->first;
    if (last < last_any && c.members[i].compared < kMinComparedToJudgeEnd) {
      excluded[i] = true;
      (*table)[i].clear();
    }
  }
  return excluded;
}

// The positions every member can be compared at: a member without p that has a later call lost
// the line, so nobody is compared at p.
std::vector<long long> CollStream::comparable(const Comm& c, const CallTable& table,
                                              const std::set<long long>& positions,
                                              const std::vector<MemberIdentity>& ids, CommStats* st) {
  std::vector<long long> kept;
  for (long long p : positions) {
    bool lost_line = false;
    for (size_t i = 0; i < c.members.size() && !lost_line; ++i) {
      if (table[i].count(p)) continue;
      auto later = table[i].upper_bound(p);
      if (later != table[i].end()) {
        lost_line = true;
        bool inside = c.members[i].first_pos >= 0 && c.members[i].first_pos < p;
        if (inside) st->lost[ids[i].name] += 1;
      }
    }
    if (!lost_line) kept.push_back(p);
  }
  return kept;
}

// Member i's sequence for the analyser, over the kept positions.
CommSequence CollStream::member_sequence(const Comm& c, size_t i, const CallTable& table,
                                         const std::vector<long long>& kept, const MemberIdentity& id,
                                         const std::vector<std::string>& files, CollResult* out) {
  const Member& m = c.members[i];
  CommSequence s;
  s.comm = c.id;
  s.nranks = c.nranks;
  s.global_rank = id.global_rank;
  s.host = id.host;
  s.pid = id.pid;
  if (m.rank_in_comm >= 0) {
    s.rank = m.rank_in_comm;
  } else {
    // Unknown rank inside the communicator: a stand-in number (even, so that lists of them
    // never fold into ranges) that the caller replaces by the process's name.
    s.rank = 1000000000 + 2 * static_cast<int>(i);
    out->synthetic[c.id].push_back(s.rank);
  }
  if (!m.queue.empty() && static_cast<size_t>(m.queue.front().file) < files.size())
    s.source = files[static_cast<size_t>(m.queue.front().file)];
  for (long long p : kept) {
    auto it = table[i].find(p);
    if (it != table[i].end()) s.calls.push_back(to_collective_call(*it->second, encode_line(it->second->file, it->second->line)));
  }
  for (const auto& pc : m.p2p) s.calls.push_back(to_collective_call(pc, encode_line(pc.file, pc.line)));
  return s;
}

CollResult CollStream::finish(const std::function<MemberIdentity(int proc)>& identity,
                              const std::vector<std::string>& files) {
  CollResult out;
  for (auto& c : comms_) {
    std::vector<MemberIdentity> ids;
    CommStats st = comm_stats(c, identity, &ids);
    CallTable table;
    std::set<long long> positions;
    call_table(c, analysis_start(c), &table, &positions);
    std::vector<bool> excluded = excerpts(c, positions, &table);
    std::vector<long long> kept = comparable(c, table, positions, ids, &st);
    out.positions[c.id] = kept;
    for (size_t i = 0; i < c.members.size(); ++i) {
      if (excluded[i]) {
        ++st.excerpts;
        continue;
      }
      out.sequences.push_back(member_sequence(c, i, table, kept, ids[i], files, &out));
      out.sequences.back().cut = cut_files_.count(c.members[i].last_file) > 0;
    }
    out.stats.push_back(std::move(st));
  }
  return out;
}

}  // namespace denpex::evidence
