#include "compare/fr_judge.h"

#include <algorithm>

#include <fmt/format.h>

#include "compare/finding_codes.h"
#include "compare/fold.h"
#include "compare/vote.h"

namespace denpex {

uint32_t FrStrings::id(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  uint32_t n = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(s);
  ids_.emplace(texts_.back(), n);
  return n;
}

namespace {

const char* state_text(const FrCall& c) {
  switch (c.state) {
    case FrCallState::completed: return "completed";
    case FrCallState::started: return c.retired ? "started, retired" : "in flight (started)";
    case FrCallState::scheduled: return c.retired ? "scheduled, retired" : "in flight (scheduled)";
    case FrCallState::unknown: break;
  }
  return c.retired ? "retired" : "state unknown";
}

std::string group_label(const FrGroup& g) {
  return g.desc.empty() || g.desc == g.name ? fmt::format("process group {}", g.name)
                                            : fmt::format("process group {} ({})", g.name, g.desc);
}

FrEvidence evidence_of(const FrStrings& s, const FrRankCalls& r, const FrCall& c, bool p2p) {
  std::string stack = s.text(c.stack);
  return FrEvidence{r.source, c.record_id,
                    fmt::format("rank {} {} #{}: {} {} {}, {}{}{}", r.rank, p2p ? "p2p" : "collective",
                                c.seq, s.text(c.op), s.text(c.shapes), s.text(c.dtypes),
                                state_text(c), stack.empty() ? "" : ", at ", stack)};
}

// The calls of one seq across the ranks of a group: (rank index, call).
using Column = std::vector<std::pair<size_t, const FrCall*>>;

// A vote over one attribute of a column: blames the minority (every value on a tie).
struct Split {
  bool differs = false;
  std::vector<int> blamed;
  std::string expected, found;
  std::vector<std::pair<size_t, const FrCall*>> blamed_calls;
};

template <typename Key>
Split split_column(const FrGroup& g, const FrStrings& s, const Column& col, Key key) {
  Split out;
  std::vector<uint32_t> values;
  std::vector<std::size_t> weights;
  for (const auto& [ri, c] : col) {
    uint32_t v = key(*c);
    auto it = std::find(values.begin(), values.end(), v);
    if (it == values.end()) {
      values.push_back(v);
      weights.push_back(1);
    } else {
      ++weights[static_cast<size_t>(it - values.begin())];
    }
  }
  if (values.size() < 2) return out;
  out.differs = true;
  int ref = strict_majority(weights);
  std::vector<std::string> found;
  for (const auto& [ri, c] : col) {
    uint32_t v = key(*c);
    if (ref >= 0 && v == values[static_cast<size_t>(ref)]) continue;
    out.blamed.push_back(g.ranks[ri].rank);
    if (out.blamed_calls.size() < 3) out.blamed_calls.emplace_back(ri, c);
    if (std::find(found.begin(), found.end(), s.text(v)) == found.end()) found.push_back(s.text(v));
  }
  out.expected = ref >= 0 ? s.text(values[static_cast<size_t>(ref)]) : "no majority";
  for (const std::string& f : found) out.found += (out.found.empty() ? "" : " / ") + f;
  return out;
}

}  // namespace
}  // namespace denpex

namespace denpex {
namespace {

Finding group_finding(const FrGroup& g, FindingCode code, Severity sev, int64_t seq) {
  Finding f;
  f.code = code;
  f.severity = sev;
  f.comm = g.name;
  f.seq = seq;
  return f;
}

std::vector<int> sorted_unique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// One finding from a split of a column (a type, shape or dtype disagreement at `seq`).
FrFinding split_finding(const FrJobDumps& job, const FrGroup& g, int64_t seq, const Split& sp,
                        FindingCode code, const char* what) {
  FrFinding ff;
  ff.finding = group_finding(g, code, Severity::error, seq);
  ff.finding.ranks = sorted_unique(sp.blamed);
  ff.finding.expected = sp.expected;
  ff.finding.found = sp.found;
  ff.finding.message = fmt::format(
      "{} recorded {} {} for collective #{} of {}{}", rank_subject(ff.finding.ranks), what,
      sp.found, seq, group_label(g),
      sp.expected == "no majority" ? " (no majority: every group of ranks is named)"
                                   : fmt::format(", the other ranks {}", sp.expected));
  ff.finding.fix = "make every rank issue the same collectives in the same order with the same "
                   "tensors (the stacks in the evidence show where each rank called it)";
  for (const auto& [ri, c] : sp.blamed_calls)
    ff.evidence.push_back(evidence_of(job.strings, g.ranks[ri], *c, false));
  return ff;
}

struct GroupState {
  bool type = false, shape = false, dtype = false, stuck = false;
};

// The checks of one aligned column (every rank's call with collective_seq_id `seq`).
void judge_column(const FrJobDumps& job, const FrGroup& g, int64_t seq, const Column& col,
                  GroupState* st, FrJudgement* out) {
  const FrStrings& s = job.strings;
  Split type = split_column(g, s, col, [](const FrCall& c) { return c.op; });
  if (type.differs) {
    if (!st->type) out->findings.push_back(split_finding(job, g, seq, type, FindingCode::collective_mismatch, "the call"));
    st->type = true;
    return;  // shapes and dtypes of different calls are not comparable
  }
  Split shape = split_column(g, s, col, [](const FrCall& c) { return c.shapes; });
  if (shape.differs && !st->shape) {
    out->findings.push_back(split_finding(job, g, seq, shape, FindingCode::collective_args_mismatch, "sizes"));
    st->shape = true;
  }
  Split dtype = split_column(g, s, col, [](const FrCall& c) { return c.dtypes; });
  if (dtype.differs && !st->dtype) {
    out->findings.push_back(split_finding(job, g, seq, dtype, FindingCode::collective_args_mismatch, "dtypes"));
    st->dtype = true;
  }
  if (st->stuck) return;
  std::vector<int> waiting;
  bool someone_done = false;
  FrFinding ff;
  for (const auto& [ri, c] : col) {
    if (!c->in_flight()) {
      someone_done = someone_done || c->state == FrCallState::completed;
      continue;
    }
    waiting.push_back(g.ranks[ri].rank);
    if (ff.evidence.size() < 3) ff.evidence.push_back(evidence_of(s, g.ranks[ri], *c, false));
  }
  if (waiting.empty() || !someone_done) return;
  st->stuck = true;
  ff.finding = group_finding(g, FindingCode::rank_stuck, Severity::error, seq);
  ff.finding.ranks = sorted_unique(waiting);
  ff.finding.found = s.text(col.front().second->op);
  ff.finding.message = fmt::format("{} never completed collective #{} ({}) of {}, which other "
                                   "ranks completed", rank_subject(ff.finding.ranks), seq,
                                   ff.finding.found, group_label(g));
  ff.finding.fix = "look at what these ranks did instead (their stacks and logs): a rank that "
                   "stops inside a collective others finished is the one to debug";
  out->findings.push_back(std::move(ff));
}

}  // namespace
}  // namespace denpex

namespace denpex {
namespace {

// Ranks whose last collective is before the group's last: they did not join it. The ranks
// ahead are never blamed for it: they launched a call the others never reached.
void judge_laggards(const FrJobDumps& job, const FrGroup& g, FrJudgement* out) {
  int64_t hi = -1;
  for (const FrRankCalls& r : g.ranks)
    if (!r.collectives.empty()) hi = std::max(hi, r.collectives.back().seq);
  std::vector<int> behind, ahead;
  FrFinding ff;
  const FrCall* leader_call = nullptr;
  std::map<int64_t, std::vector<int>> by_last;
  for (const FrRankCalls& r : g.ranks) {
    int64_t last = r.collectives.empty() ? -1 : r.collectives.back().seq;
    if (last == hi) {
      ahead.push_back(r.rank);
      if (!leader_call) leader_call = &r.collectives.back();
      continue;
    }
    behind.push_back(r.rank);
    by_last[last].push_back(r.rank);
    if (ff.evidence.size() < 3 && !r.collectives.empty())
      ff.evidence.push_back(evidence_of(job.strings, r, r.collectives.back(), false));
  }
  if (behind.empty() || !leader_call) return;
  std::string lasts;
  for (const auto& [last, ranks] : by_last)
    lasts += fmt::format("{}{} at #{}", lasts.empty() ? "" : ", ", rank_subject(ranks), last);
  ff.finding = group_finding(g, FindingCode::collective_missing, Severity::error, hi);
  ff.finding.ranks = sorted_unique(behind);
  ff.finding.expected = fmt::format("#{} {}", hi, job.strings.text(leader_call->op));
  ff.finding.found = lasts;
  ff.finding.message = fmt::format(
      "{} never recorded collective #{} ({}) of {} that {} launched (last recorded: {}): the "
      "ranks behind are where to look, not the ones ahead",
      rank_subject(ff.finding.ranks), hi, job.strings.text(leader_call->op), group_label(g),
      rank_subject(ahead), lasts);
  ff.finding.fix = "find what stopped the ranks behind before this collective (their stacks, "
                   "logs and exceptions); the ranks ahead only waited for them";
  out->findings.push_back(std::move(ff));
}

// Every rank waits in the group's last collective and none is behind: nothing in the calls
// names a rank.
void judge_all_waiting(const FrJobDumps& job, const FrGroup& g, FrJudgement* out) {
  if (g.ranks.size() < 2) return;
  int64_t seq = -1;
  std::vector<int> ranks;
  FrFinding ff;
  for (const FrRankCalls& r : g.ranks) {
    if (r.collectives.empty() || !r.collectives.back().in_flight()) return;
    if (seq >= 0 && r.collectives.back().seq != seq) return;
    seq = r.collectives.back().seq;
    ranks.push_back(r.rank);
    if (ff.evidence.size() < 2) ff.evidence.push_back(evidence_of(job.strings, r, r.collectives.back(), false));
  }
  ff.finding = group_finding(g, FindingCode::collective_in_flight, Severity::warning, seq);
  ff.finding.ranks = sorted_unique(ranks);
  ff.finding.found = job.strings.text(g.ranks.front().collectives.back().op);
  ff.finding.message = fmt::format(
      "every dumped rank of {} waits in collective #{} ({}) and none is behind: the calls name "
      "no rank (a missing dump, the network or NCCL itself)", group_label(g), seq, ff.finding.found);
  ff.finding.fix = "read the NCCL and watchdog logs of the same time, and any rank whose dump is missing";
  out->findings.push_back(std::move(ff));
}

void group_positions(const FrJobDumps& job, const FrGroup& g, FrJudgement* out) {
  for (const FrRankCalls& r : g.ranks) {
    const FrCall* pick = nullptr;
    for (const auto* calls : {&r.collectives, &r.p2p}) {
      for (const FrCall& c : *calls)
        if (c.in_flight() && (!pick || !pick->in_flight() || c.time_ns < pick->time_ns)) {
          pick = &c;
          break;
        }
    }
    if (!pick && !r.collectives.empty()) pick = &r.collectives.back();
    if (!pick && !r.p2p.empty()) pick = &r.p2p.back();
    if (!pick) continue;
    out->positions.push_back(FrRankPosition{r.rank, g.name, pick->seq, job.strings.text(pick->op),
                                            state_text(*pick), job.strings.text(pick->stack),
                                            pick->in_flight()});
  }
}

void judge_group(const FrJobDumps& job, const FrGroup& g, FrJudgement* out) {
  std::vector<size_t> cursor(g.ranks.size(), 0);
  GroupState st;
  Column col;
  for (;;) {
    int64_t s = INT64_MAX;
    for (size_t i = 0; i < g.ranks.size(); ++i)
      if (cursor[i] < g.ranks[i].collectives.size()) s = std::min(s, g.ranks[i].collectives[cursor[i]].seq);
    if (s == INT64_MAX) break;
    col.clear();
    for (size_t i = 0; i < g.ranks.size(); ++i) {
      const auto& calls = g.ranks[i].collectives;
      if (cursor[i] < calls.size() && calls[cursor[i]].seq == s) col.emplace_back(i, &calls[cursor[i]++]);
      while (cursor[i] < calls.size() && calls[cursor[i]].seq == s) ++cursor[i];  // a repeated seq
    }
    if (col.size() >= 2) judge_column(job, g, s, col, &st, out);
  }
  judge_laggards(job, g, out);
  if (!st.stuck) judge_all_waiting(job, g, out);
  group_positions(job, g, out);
}

// Ranks pg_config names whose dump was not read: named, and the rest judged without them.
void judge_missing(const FrJobDumps& job, FrJudgement* out) {
  for (int r : job.world)
    if (!std::binary_search(job.dumped_ranks.begin(), job.dumped_ranks.end(), r))
      out->missing_ranks.push_back(r);
  if (out->missing_ranks.empty()) return;
  FrFinding ff;
  ff.finding.code = FindingCode::collective_ranks_absent;
  ff.finding.severity = Severity::warning;
  ff.finding.ranks = out->missing_ranks;
  ff.finding.message = fmt::format(
      "no Flight Recorder dump from {} of the {} ranks the dumps' process groups name: the "
      "other {} were judged without them", rank_subject(out->missing_ranks), job.world.size(),
      job.dumped_ranks.size());
  ff.finding.fix = "add the missing ranks' dumps (TORCH_NCCL_DEBUG_INFO_TEMP_FILE + rank on each "
                   "node); a rank that crashed writes none: read its log instead";
  out->findings.push_back(std::move(ff));
}

}  // namespace

FrJudgement judge_fr_dumps(const FrJobDumps& job) {
  FrJudgement out;
  judge_missing(job, &out);
  for (const FrGroup& g : job.groups) judge_group(job, g, &out);
  return out;
}

}  // namespace denpex
