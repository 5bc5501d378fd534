#include "diagnose/diagnosis.h"
#include "diagnose/input_cuts.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compare/collectives.h"
#include "compare/fold.h"
#include "compare/judge.h"
#include "diagnose/facts_judge.h"
#include "evidence/matcher.h"
#include "evidence/signal_table.h"

namespace denpex::diag {

namespace {

using nlohmann::json;

// Fix and verify text comes from the signal table entry that read the evidence.
const evidence::Signal* signal_named(const std::string& id) {
  int i = evidence::builtin_matcher().index_of(id);
  return i < 0 ? nullptr : &evidence::builtin_signals().signals[static_cast<size_t>(i)];
}
const evidence::Signal* signal_of(const std::vector<Evidence>& ev) {
  for (const auto& e : ev)
    if (const evidence::Signal* s = signal_named(e.signal)) return s;
  return nullptr;
}
ShellCommand diagnose_stdin() { return command_or({"denpex-probe", "diagnose", "-"}, "denpex-probe diagnose -"); }
ShellCommand verify_of(const char* id) {
  const evidence::Signal* s = signal_named(id);
  return s ? evidence::verify_command(s->verify) : diagnose_stdin();
}
// Asked for when a finding needs it: a value at namespace scope would compile the whole signal
// library when the program starts, in every mode (each gate rank included), not only diagnose.
// The job run again with `settings`, each process's NCCL log in its own file: the launch command
// is the user's, a variable set on the line before it; the folder must exist before NCCL opens
// files in it.
void rerun_with_logs(DxFinding* x, std::vector<std::string> settings) {
  settings.push_back("NCCL_DEBUG_FILE=nccl-logs/nccl.%h.%p.log");
  for (const char* w : {"sh", "-c", "$LAUNCH"}) settings.push_back(w);
  make_command_with({{"LAUNCH", "torchrun ... train.py"}}, settings, &x->verify);
  x->verify_note = "set LAUNCH to the job's own launch command and create the folder nccl-logs (mkdir nccl-logs); "
                   "after the run: denpex-probe diagnose nccl-logs";
}
ShellCommand collective_verify() { return verify_of("nccl.coll"); }
const char* kCollectiveFix =
    "make every rank issue the same collectives in the same order with the same sizes on this process group: look "
    "for a rank-dependent branch, a skipped backward or unused parameter, uneven batches or data-dependent shapes "
    "before this step";

}  // namespace

// The gate on the hosts the finding names (mpirun; the srun form works the same way).
std::vector<DxFinding> judge_saved_records(const std::vector<ConfigGroup>& groups, const std::vector<std::string>& paths) {
  std::vector<std::string> known;
  std::unordered_set<std::string> seen;
  for (const auto& g : groups)
    for (const auto& h : g.hosts)
      if (seen.insert(h).second) known.push_back(h);
  std::vector<DxFinding> out;
  for (auto& f : judge(groups, {}, JudgeOptions{})) {
    DxFinding x;
    // The records judged again once written anew where the fix was made: it fails on these and
    // passes on the new ones (a warning fails only under --strict); the gate is the other way.
    std::vector<std::string> argv = {"denpex-probe", "compare"};
    if (f.severity != Severity::error) argv.push_back("--strict");
    for (const auto& p : paths) argv.push_back(!p.empty() && p[0] == '-' ? "./" + p : p);
    x.verify = command_or(argv, "denpex-probe compare on the records named above (a name cannot be put in a command)");
    x.verify_or = gate_verify(f.hosts, known).verify;
    x.verify_note = "after the fix, write the records again as they were written (denpex-probe --rank-report FILE on "
                    "each node), then run this";
    for (const auto& p : paths)
      if (x.evidence.size() < 4) x.evidence.push_back(Evidence{p, 1, "saved rank record"});
    x.f = std::move(f);
    out.push_back(std::move(x));
  }
  return out;
}

void set_gate_verify(DxFinding* x, const std::vector<std::string>& hosts, const std::vector<std::string>& known) {
  GateVerify g = gate_verify(hosts, known);
  x->verify = std::move(g.verify);
  x->verify_or = std::move(g.verify_or);
}

namespace {

// A host's name up to its first dot: "gpu-a17" and "gpu-a17.cluster.local" are one machine.
std::string short_host(const std::string& h) { return h.substr(0, h.find('.')); }

// The first host of `known` that is none of `odd` (by short name), or "". Linear: a tie of two
// versions over a hundred thousand hosts names every host as odd.
std::string agreeing_host(const std::vector<std::string>& odd, const std::vector<std::string>& known) {
  std::unordered_set<std::string> named;
  for (const auto& o : odd) named.insert(short_host(o));
  for (const auto& k : known)
    if (!named.count(short_host(k))) return k;
  return "";
}

// More hosts than this are not listed in a command: the gate then runs on the job's allocation.
constexpr size_t kGateHostsListed = 64;

}  // namespace

GateVerify gate_verify(const std::vector<std::string>& hosts, const std::vector<std::string>& known) {
  GateVerify g;
  std::string reference = agreeing_host(hosts, known);
  // Two or more hosts named with none agreeing (the sides of a tie) are compared with each other:
  // the gate on them alone fails while they differ.
  if (hosts.empty() || (reference.empty() && hosts.size() < 2) || hosts.size() >= kGateHostsListed) {
    // No host is named, one and none that agreed, or too many to list: the same check on the
    // job's own nodes, inside its allocation, where the odd nodes meet the others.
    g.verify = command_or({"srun", "--mpi=pmix", "--ntasks-per-node=1", "denpex-probe"}, "");
    g.verify_or = command_or({"mpirun", "--map-by", "ppr:1:node", "denpex-probe"}, "");
    return g;
  }
  // Host names come from the input (a log line, a saved rank record): they are words of the
  // command, quoted by the one renderer; a name that cannot be quoted safely gives no command.
  std::vector<std::string> on = hosts;
  if (!reference.empty()) on.push_back(reference);
  std::string list = fmt::format("{}", fmt::join(on, ","));
  const std::string unsafe = "the gate on the hosts named above (a host name holds characters that cannot be put in a command)";
  g.verify = command_or({"mpirun", "-np", std::to_string(on.size()), "-H", list, "--map-by", "ppr:1:node", "denpex-probe"},
                        unsafe);
  if (!g.verify.argv.empty())
    g.verify_or = command_or({"srun", "--mpi=pmix", "-w", list, "--ntasks-per-node=1", "denpex-probe"}, "");
  return g;
}

namespace {

void replace_all(std::string* s, const std::string& from, const std::string& to) {
  size_t at = 0;
  while ((at = s->find(from, at)) != std::string::npos) {
    s->replace(at, from.size(), to);
    at += to.size();
  }
}

// ---- collective calls from COLL lines ------------------------------------------------------

void coll_findings(const LogReader& r, std::vector<DxFinding>* out, std::vector<Divergence>* div) {
  const CollResult& c = r.coll;
  if (c.sequences.empty()) return;
  std::vector<Finding> found = analyse_sequences(c.sequences);
  // Stand-in ranks -> process names, per communicator.
  std::map<std::string, std::vector<std::pair<int, std::string>>> names;
  std::map<std::pair<std::string, int>, const CommSequence*> by_rank;
  for (const auto& s : c.sequences) {
    by_rank[{s.comm, s.global_rank >= 0 ? s.global_rank : s.rank}] = &s;
    if (s.rank >= kSyntheticRank && s.global_rank < 0)
      names[s.comm].emplace_back(s.rank, s.pid >= 0 ? fmt::format("{}:{}", s.host, s.pid) : s.host);
  }
  for (auto& f : found) {
    bool synthetic = c.synthetic.count(f.comm) > 0;
    if (f.code == FindingCode::collective_ranks_absent && synthetic) continue;  // ranks unknown: said by the note below
    // The analyser counts positions among what it was given; the communicator's own position
    // (NCCL's opCount) is what a person finds in the log.
    auto pm = c.positions.find(f.comm);
    long long idx = f.seq;
    if (pm != c.positions.end() && idx >= 0 && static_cast<size_t>(idx) < pm->second.size() && f.code != FindingCode::collective_ranks_absent) {
      long long pos = pm->second[static_cast<size_t>(idx)];
      replace_all(&f.message, fmt::format("step {} of", idx), fmt::format("opCount {:x} (position {}) of", pos, pos));
      replace_all(&f.message, fmt::format("sequence ends after {} collectives", idx), "its calls end before it");
      f.seq = pos;
    }
    DxFinding d;
    // Evidence: the blamed ranks' call lines at that position, then one of the others'.
    auto add_call = [&](const CommSequence* s) {
      if (s == nullptr || d.evidence.size() >= 3) return;
      std::vector<const CollectiveCall*> coll;
      for (const auto& call : s->calls)
        if (call.kind != CollKind::send && call.kind != CollKind::recv) coll.push_back(&call);
      const CollectiveCall* at = static_cast<size_t>(idx) < coll.size() ? coll[static_cast<size_t>(idx)] : (coll.empty() ? nullptr : coll.back());
      if (at == nullptr || at->trace_seq < 0) return;
      int fi = evidence::decoded_file(at->trace_seq);
      d.evidence.push_back(Evidence{static_cast<size_t>(fi) < r.files.size() ? r.files[static_cast<size_t>(fi)] : "", evidence::decoded_line(at->trace_seq), ""});
    };
    for (int rk : f.ranks) add_call(by_rank.count({f.comm, rk}) ? by_rank[{f.comm, rk}] : nullptr);
    for (const auto& kv : by_rank)
      if (kv.first.first == f.comm && std::find(f.ranks.begin(), f.ranks.end(), kv.first.second) == f.ranks.end()) {
        add_call(kv.second);
        break;
      }
    if (names.count(f.comm)) name_synthetic(&f, names[f.comm]);
    d.verify = collective_verify();
    if (f.severity == Severity::error && (!f.ranks.empty() || !f.hosts.empty()))
      div->push_back(Divergence{f.ranks, f.hosts, {}, f.message, d.evidence});
    d.f = std::move(f);
    out->push_back(std::move(d));
  }
}

// ---- PyTorch watchdog records and DETAIL fingerprints ---------------------------------------

struct WatchSummary {
  std::string inconclusive;  // set when records exist but cannot be compared
  std::string agree;         // set when every rank shown reports the same work
};

// One rank's view of one process group, as the watchdog records show it.
struct WatchKey {
  std::string group;
  int rank;
  bool operator<(const WatchKey& o) const { return std::tie(group, rank) < std::tie(o.group, o.rank); }
};

const char* const kNoGroup = "(no process group printed)";

struct WatchStates {
  std::map<WatchKey, WatchdogState> states;
  std::map<WatchKey, const WatchRecord*> first_record;
  std::map<int, std::set<long long>> ungrouped_seqs;  // rank -> SeqNums, old format
  // Ranks whose lines name no process group, taken to be in `adopted_into` (adopt_ungrouped).
  std::vector<int> adopted;
  std::string adopted_into;
};

// Folds one record into its rank's state: the lowest work a rank is stuck at is the one that matters.
void merge_watch_record(const WatchRecord& w, int rank, WatchdogState* s) {
  s->rank = w.group_rank >= 0 ? w.group_rank : rank;
  s->global_rank = w.who.rank;
  s->host = w.who.host;
  s->source = w.evidence.file;
  if (w.seq >= 0 && (s->seq < 0 || w.seq < s->seq)) {
    s->seq = w.seq;
    s->text = w.quote;
    if (!w.op.empty()) s->op_type = w.op;
    s->numel_in = w.numel_in;
    s->numel_out = w.numel_out;
  } else if (w.seq == s->seq && s->op_type.empty()) {
    s->op_type = w.op;
    if (s->text.empty()) s->text = w.quote;
    if (s->numel_in < 0) s->numel_in = w.numel_in, s->numel_out = w.numel_out;
  }
  if (w.last_enqueued >= 0) s->last_enqueued = w.last_enqueued;
  if (w.last_completed >= 0) s->last_completed = w.last_completed;
}

WatchStates collect_watch_states(const LogReader& r) {
  WatchStates ws;
  // A record without a group takes the group of the same process's record for the same work
  // ("[Rank 0] Watchdog caught ... SeqNum=1580" and "[PG 1 Rank 0] ... at work: 1580").
  std::map<std::pair<std::string, long long>, std::string> group_of;
  for (const auto& w : r.watch)
    if (!w.group.empty() && !w.fingerprint) group_of[{w.who.proc, w.seq}] = w.group;
  for (const auto& w : r.watch) {
    std::string g = w.group;
    if (g.empty()) {
      auto it = group_of.find({w.who.proc, w.seq});
      if (it != group_of.end()) g = it->second;
    }
    int rank = w.who.rank >= 0 ? w.who.rank : w.group_rank;
    if (g.empty()) {
      if (w.seq >= 0) ws.ungrouped_seqs[rank].insert(w.seq);
      g = kNoGroup;
    }
    if (w.fingerprint) g = fmt::format("{} SequenceNumber {}", w.group, w.seq);
    WatchKey k{g, rank};
    WatchdogState& s = ws.states[k];
    if (!ws.first_record.count(k)) ws.first_record[k] = &w;
    s.group = g;
    merge_watch_record(w, rank, &s);
  }
  return ws;
}

// Old-format records of one rank at several SeqNums, or ranks at different SeqNums with no
// group to tell whether they share one: nothing can be compared. Empty when comparable.
std::string ungrouped_inconclusive(const std::map<int, std::set<long long>>& ungrouped_seqs) {
  bool several = false;
  std::set<long long> all_seqs;
  for (const auto& kv : ungrouped_seqs) {
    if (kv.second.size() > 1) several = true;
    all_seqs.insert(kv.second.begin(), kv.second.end());
  }
  if (ungrouped_seqs.empty() || (!several && all_seqs.size() <= 1)) return "";
  std::vector<std::string> parts;
  for (const auto& kv : ungrouped_seqs) parts.push_back(fmt::format("rank {}: {}", kv.first, fmt::join(kv.second, ", ")));
  return fmt::format(
      "the watchdog lines carry no process group and report different SeqNums ({}), which belong to different "
      "process groups and cannot be compared: rerun with PyTorch 2.2 or later (process group in every line) or with "
      "TORCH_DISTRIBUTED_DEBUG=DETAIL, and pass every rank's log",
      fmt::join(parts, "; "));
}

bool default_group(const std::string& g) {
  return g == "PG 0" || g.find("default_pg") != std::string::npos || g.rfind("PG 0(", 0) == 0 || g.rfind("PG 0 (", 0) == 0;
}

// A rank whose lines name no process group (a release that printed none, or a paste that kept
// only its timeout line) is compared with the ranks of the default group, or of the one group
// the others name: an assumption each finding about that group states. Without it, a rank that
// printed its group and one that did not could never be compared. A rank already seen in that
// group keeps its ungrouped record apart.
void adopt_ungrouped(WatchStates* ws) {
  std::set<std::string> named;
  std::string target;
  for (const auto& kv : ws->states) {
    const std::string& g = kv.first.group;
    if (g == kNoGroup || g.find("TORCH_DISTRIBUTED_DEBUG") != std::string::npos) continue;
    named.insert(g);
    if (default_group(g)) target = g;
  }
  if (target.empty() && named.size() == 1) target = *named.begin();
  if (target.empty()) return;
  for (auto it = ws->states.begin(); it != ws->states.end();) {
    WatchKey k{target, it->first.rank};
    if (it->first.group != kNoGroup || ws->states.count(k)) {
      ++it;
      continue;
    }
    WatchdogState st = it->second;
    st.group = target;
    ws->states[k] = st;
    ws->first_record[k] = ws->first_record[it->first];
    ws->first_record.erase(it->first);
    ws->adopted.push_back(st.global_rank >= 0 ? st.global_rank : st.rank);
    it = ws->states.erase(it);
  }
  std::sort(ws->adopted.begin(), ws->adopted.end());
  if (!ws->adopted.empty()) ws->adopted_into = target;
}

// Compare only what every rank of a group printed: a rank known from its "last enqueued" line
// alone has no OpType or size, which is not a different OpType or size.
void clear_partial_groups(std::map<WatchKey, WatchdogState>* states) {
  std::set<std::string> partial;
  for (const auto& kv : *states)
    if (kv.second.op_type.empty() || kv.second.numel_in < 0) partial.insert(kv.first.group);
  for (auto& kv : *states)
    if (partial.count(kv.first.group)) {
      kv.second.op_type.clear();
      kv.second.numel_in = kv.second.numel_out = -1;
    }
}

// The groups whose findings name every rank the input shows in them: no rank agreed with a
// majority (two ranks compared, or every side different), so no side is shown to be the odd one.
std::set<std::string> groups_without_majority(const WatchStates& ws, const std::vector<Finding>& found) {
  std::map<std::string, std::set<int>> named, shown;
  for (const auto& f : found)
    if (f.severity == Severity::error) named[f.comm].insert(f.ranks.begin(), f.ranks.end());
  for (const auto& kv : ws.states) {
    const WatchdogState& st = kv.second;
    shown[kv.first.group].insert(st.global_rank >= 0 ? st.global_rank : kv.first.rank);
  }
  std::set<std::string> out;
  for (const auto& kv : named)
    if (kv.second.size() > 1 && kv.second == shown[kv.first]) out.insert(kv.first);
  return out;
}

// Turns the analyser's watchdog findings into diagnosis findings; returns how many it found.
size_t watch_divergences(const WatchStates& ws, std::vector<Finding> found, std::vector<DxFinding>* out,
                         std::vector<Divergence>* div) {
  size_t n = found.size();
  // A tie names every side in its own finding; as a candidate initiator they are one party.
  std::map<std::pair<std::string, long long>, Divergence> tied;
  const std::set<std::string> no_majority = groups_without_majority(ws, found);
  for (auto& f : found) {
    const bool tie = no_majority.count(f.comm) > 0;
    DxFinding d;
    for (const auto& kv : ws.first_record)
      if (kv.first.group == f.comm && d.evidence.size() < 4) d.evidence.push_back(kv.second->evidence);
    bool fp = f.comm.find("TORCH_DISTRIBUTED_DEBUG") != std::string::npos;
    if (fp) {
      f.message = fmt::format("TORCH_DISTRIBUTED_DEBUG=DETAIL caught ranks calling different collectives at "
                              "SequenceNumber {}: {}",
                              f.seq, f.message);
      f.comm = "TORCH_DISTRIBUTED_DEBUG=DETAIL";
    }
    if (!ws.adopted.empty() && f.comm == ws.adopted_into)
      f.message += fmt::format(" ({} printed no process group: taken to be in {}, the group the other ranks name)",
                               rank_subject(ws.adopted), ws.adopted_into);
    f.fix = kCollectiveFix;
    d.verify = collective_verify();
    if (f.severity == Severity::error) {
      // Sides with no majority are one disagreement, whatever position each side is at.
      Divergence& dv = tied[{f.comm, tie ? -1 : f.seq}];
      dv.ranks.insert(dv.ranks.end(), f.ranks.begin(), f.ranks.end());
      dv.hosts.insert(dv.hosts.end(), f.hosts.begin(), f.hosts.end());
      if (dv.what.empty()) dv.what = f.message;
      if (dv.evidence.empty()) dv.evidence = d.evidence;
      dv.tie = tie;
    }
    d.f = std::move(f);
    out->push_back(std::move(d));
  }
  for (auto& kv : tied) div->push_back(std::move(kv.second));
  return n;
}

// With nothing found: either each rank is alone in its group (inconclusive), or all ranks shown
// agree on the work they wait for.
void summarise_agreement(const LogReader& r, const WatchStates& ws, const std::map<std::string, std::vector<int>>& members,
                         WatchSummary* sum) {
  bool singletons = members.size() > 1;
  for (const auto& kv : members)
    if (kv.second.size() > 1 || kv.first.find("TORCH_DISTRIBUTED_DEBUG") != std::string::npos) singletons = false;
  if (singletons) {
    std::vector<std::string> parts;
    for (const auto& kv : ws.states)
      parts.push_back(fmt::format("rank {} in {} at work {}", kv.second.global_rank >= 0 ? kv.second.global_rank : kv.first.rank,
                                  kv.first.group, kv.second.seq));
    sum->inconclusive = fmt::format(
        "each rank in the input is in a different process group ({}), so no two ranks of one group can be "
        "compared: add the logs of the other ranks of these groups, or rerun with TORCH_NCCL_DESYNC_DEBUG=1 "
        "TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (Flight Recorder)",
        fmt::join(parts, "; "));
    return;
  }
  std::vector<int> ranks;
  std::string what;
  for (const auto& kv : ws.states) {
    if (kv.first.group.find("TORCH_DISTRIBUTED_DEBUG") != std::string::npos) continue;
    ranks.push_back(kv.second.global_rank >= 0 ? kv.second.global_rank : kv.first.rank);
  }
  for (const auto& w : r.watch)
    if (!w.fingerprint && what.empty() && w.seq >= 0 && !w.op.empty()) what = fmt::format("{} (SeqNum {})", w.op, w.seq);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.size() == 1) sum->agree = fmt::format("rank {} waits in {}", ranks[0], what.empty() ? "its last work" : what);
  else if (!ranks.empty())
    sum->agree = fmt::format("ranks {} all wait in {} and agree", rank_ranges(ranks), what.empty() ? "the same work" : what);
}

WatchSummary watch_findings(const LogReader& r, std::vector<DxFinding>* out, std::vector<Divergence>* div) {
  WatchSummary sum;
  WatchStates ws = collect_watch_states(r);
  if (ws.states.empty()) return sum;
  sum.inconclusive = ungrouped_inconclusive(ws.ungrouped_seqs);
  if (sum.inconclusive.empty()) adopt_ungrouped(&ws);
  clear_partial_groups(&ws.states);
  std::vector<WatchdogState> list;
  std::map<std::string, std::vector<int>> members;
  for (const auto& kv : ws.states) {
    if (kv.first.group == kNoGroup && !sum.inconclusive.empty()) continue;
    list.push_back(kv.second);
    members[kv.first.group].push_back(kv.first.rank);
  }
  size_t found = watch_divergences(ws, analyse_watchdog(list), out, div);
  // Several groups, one rank each: no same-group comparison is possible.
  if (sum.inconclusive.empty() && found == 0) summarise_agreement(r, ws, members, &sum);
  return sum;
}

// ---- verdicts printed by other analysers ----------------------------------------------------

using NcclReports = std::map<Reported::Kind, std::vector<const Reported*>>;

void fill_fr_missing(const Reported& rep, Finding* f) {
  f->code = FindingCode::collective_missing;
  f->ranks = rep.ranks;
  f->expected = fmt::format("all {} ranks in {}", rep.world > 0 ? std::to_string(rep.world) : std::string("expected"), rep.op);
  f->found = fmt::format("ranks {} absent", rank_ranges(rep.ranks));
  f->message = fmt::format("ranks {} did not join {} sequence number {} of process group {}{} (Flight Recorder analysis); "
                           "the other ranks waited for them",
                           rank_ranges(rep.ranks), rep.op.empty() ? "the collective" : rep.op, rep.seq,
                           rep.group.empty() ? "?" : rep.group, rep.world > 0 ? fmt::format(", world size {}", rep.world) : "");
  f->fix = "find why these ranks did not reach this collective: a rank-dependent branch, an exception or a hang on "
           "those ranks before it (their stack traces in the Flight Recorder dump show where they were)";
}

void fill_fr_errors(const Reported& rep, Finding* f) {
  bool size = rep.detail.find("SIZE") != std::string::npos || rep.detail.find("size") != std::string::npos;
  f->code = size ? FindingCode::collective_args_mismatch : FindingCode::collective_mismatch;
  f->ranks = rep.ranks;
  f->expected = rep.detail;
  f->found = rep.ranks.empty() ? "culprit ranks not in the input" : fmt::format("ranks {}", rank_ranges(rep.ranks));
  f->message = fmt::format("the Flight Recorder analysis reports errors at collective {} ({}, process group {}{}{}){}",
                           rep.seq, rep.op.empty() ? "?" : rep.op, rep.group.empty() ? "?" : rep.group,
                           rep.world > 0 ? fmt::format(", world size {}", rep.world) : "",
                           rep.detail.empty() ? "" : ", expected " + rep.detail,
                           rep.ranks.empty() ? "; the lines naming the culprit ranks (\"Culprit rank R; Error type: ...\") are not in the input"
                                             : fmt::format("; culprit ranks {}", rank_ranges(rep.ranks)));
  f->fix = kCollectiveFix;
}

// NCCL's own count of the operations each rank launched: the ranks it lists one by one are the
// outliers; those behind the others never launched what the others wait in. Returns true when
// *d is an error finding to emit; false when the report was queued in *nccl or emitted as a warning.
bool fill_ras_counts(const Reported& rep, DxFinding* d, std::vector<DxFinding>* out, NcclReports* nccl,
                     std::string* warn_note) {
  Finding& f = d->f;
  std::vector<int> behind, ahead;
  for (size_t i = 0; i < rep.ranks.size(); ++i) {
    bool below = rep.majority_count >= 0 ? rep.counts[i] < rep.majority_count : false;
    (below ? behind : ahead).push_back(rep.ranks[i]);
  }
  if (rep.ranks.empty()) {
    (*nccl)[rep.kind].push_back(&rep);
    return false;
  }
  if (behind.empty()) {
    // Only ranks ahead of the majority are listed: the majority lags, and RAS does not name
    // its ranks one by one. The listed ranks are not the stragglers: nobody is blamed.
    f.code = FindingCode::nccl_ras_mismatch;
    f.severity = Severity::warning;
    f.comm = rep.op;
    f.message = fmt::format("NCCL RAS reports different {} operation counts: ranks {} launched up to operation {}, "
                            "ahead of the {} ranks at operation {}; the lagging ranks are those {} others, which the "
                            "report does not list one by one",
                            rep.op, rank_ranges(ahead), rep.counts.empty() ? -1 : rep.counts.front(),
                            rep.majority_ranks, rep.majority_count, rep.majority_ranks);
    f.fix = "look at the ranks that stopped launching operations (all but the listed ones): their own errors or stacks";
    d->verify = verify_of("nccl.ras.counts");
    out->push_back(std::move(*d));
    *warn_note = fmt::format("NCCL RAS lists only the ranks ahead ({}); the {} lagging ranks are not named one by one: "
                             "pass those ranks' logs or run the RAS client with verbose output",
                             rank_ranges(ahead), rep.majority_ranks);
    return false;
  }
  f.code = FindingCode::collective_missing;
  f.ranks = behind;
  f.seq = rep.majority_count;
  f.comm = rep.op;
  f.expected = rep.majority_count >= 0 ? fmt::format("{} operations launched ({} ranks)", rep.majority_count, rep.majority_ranks) : "";
  f.found = fmt::format("ranks {}", rank_ranges(f.ranks));
  f.message = fmt::format("NCCL RAS reports different {} operation counts: ranks {} are behind the {} ranks that launched up to "
                          "operation {}",
                          rep.op, rank_ranges(f.ranks), rep.majority_ranks, rep.majority_count);
  f.fix = kCollectiveFix;
  return true;
}

// NCCL's check that no two ranks of a communicator share a GPU: both ranks' device assignment is
// wrong (the same device chosen for both), neither rank started anything. Both ranks print the
// pair, each in its own order: false for the second, already named.
bool fill_device_shared(const Reported& rep, const std::vector<DxFinding>& before, DxFinding* d) {
  Finding& f = d->f;
  f.code = FindingCode::gpu_shared_by_ranks;
  f.ranks = rep.ranks;
  std::sort(f.ranks.begin(), f.ranks.end());
  f.ranks.erase(std::unique(f.ranks.begin(), f.ranks.end()), f.ranks.end());
  for (const auto& o : before)
    if (o.f.code == f.code && o.f.ranks == f.ranks) return false;
  f.found = rep.detail;
  f.message = fmt::format("ranks {} of one communicator are on the same GPU ({}): the device is chosen wrongly for both, "
                          "neither started the failure",
                          rank_ranges(f.ranks), rep.detail);
  if (rep.who.host.size()) f.hosts = {rep.who.host};
  if (const evidence::Signal* s = signal_of(d->evidence)) f.fix = s->fix;
  return true;
}

// Horovod repeats its stall report while the stall lasts: a later report of the same process in
// the same file is the state that stayed, and the earlier one only a moment of it.
bool superseded(const std::vector<Reported>& reported, size_t i) {
  const Reported& a = reported[i];
  if (a.kind != Reported::Kind::missing_ranks) return false;
  for (size_t j = i + 1; j < reported.size(); ++j) {
    const Reported& b = reported[j];
    if (b.kind == a.kind && b.evidence.file == a.evidence.file && b.who.proc == a.who.proc && b.who.rank == a.who.rank)
      return true;
  }
  return false;
}

// Two ranks compared, or Horovod's shape and stall checks.
void fill_compared_or_stalled(const Reported& rep, Finding* f) {
  if (rep.kind == Reported::Kind::pair_mismatch) {
    f->code = FindingCode::collective_args_mismatch;
    f->ranks = rep.ranks;
    f->found = rep.detail;
    if (rep.ranks.size() == 1) {
      // One side reported its own collective: the other side is not named, and either may be wrong.
      f->message = rep.detail;
      f->fix = fmt::format("find the rank whose collective differs from rank {}'s here (rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL "
                           "on PyTorch 2.1 or later, which names both sides and the SequenceNumber) and make every rank issue "
                           "the same collective (a rank-dependent branch, an uneven batch, a buffer only some ranks have)",
                           rep.ranks[0]);
    } else {
      // Two ranks compared: both are named, neither is the culprit.
      f->message = fmt::format("ranks {} disagree: {}", rank_ranges(rep.ranks), rep.detail);
      f->fix = "make both ranks build and call the same thing; with two ranks there is no majority to tell which one is wrong";
    }
  } else if (rep.kind == Reported::Kind::shape_mismatch) {
    f->code = FindingCode::collective_args_mismatch;
    f->found = rep.detail;
    f->message = fmt::format("Horovod reports tensors of one name submitted with different shapes or types: {}", rep.detail);
    f->fix = "make every rank submit the same tensors in the same shapes (an uneven last batch, a rank-dependent model part)";
  } else {
    f->code = FindingCode::collective_missing;
    f->ranks = rep.ranks;
    f->comm = "horovod";
    f->expected = rep.world > 0 ? fmt::format("all of ranks 0-{} ready", rep.world - 1) : "every rank ready";
    f->found = fmt::format("ranks {} not ready", rank_ranges(rep.ranks));
    if (rep.sides) {
      f->message = fmt::format("Horovod's stall check: ranks {} each miss other tensors ({}): they wait in different "
                               "collectives, so they took different paths and none is shown to be the odd one",
                               rank_ranges(rep.ranks), rep.detail);
      f->fix = "make every rank take the same path to its collectives (a check whose answer differs by rank, such as a "
               "file's existence, must be decided on one rank and broadcast)";
      return;
    }
    f->message = fmt::format("Horovod's stall check: ranks {} did not submit {}{}; the other ranks waited for them", rank_ranges(rep.ranks),
                             rep.op.empty() ? "the tensors" : rep.op,
                             rep.detail.find("ready list") != std::string::npos
                                 ? fmt::format(" ({}; world size at least {})", rep.detail, rep.world)
                                 : "");
    f->fix = "look at what these ranks were doing instead: they never reached this reduction or broadcast";
  }
}

Failure truncated_failure(const Reported& rep) {
  Failure fl;
  fl.kind = Failure::Kind::nccl_warn;
  fl.who = rep.who;
  fl.what = "NCCL WARN " + rep.detail;
  fl.evidence = rep.evidence;
  return fl;
}

// NCCL's own mismatch reports, one warning per kind: where NCCL noticed, not who is to blame.
void nccl_warning_findings(const NcclReports& nccl, std::vector<DxFinding>* out, std::string* warn_note) {
  for (const auto& [kind, reps] : nccl) {
    DxFinding d;
    Finding& f = d.f;
    f.severity = Severity::warning;
    std::set<int> ranks;
    std::set<std::string> hosts;
    for (const auto* rep : reps) {
      ranks.insert(rep->ranks.begin(), rep->ranks.end());
      if (!rep->who.host.empty()) hosts.insert(rep->who.host);
      if (d.evidence.size() < 4) d.evidence.push_back(rep->evidence);
    }
    f.ranks.assign(ranks.begin(), ranks.end());
    f.hosts.assign(hosts.begin(), hosts.end());
    if (kind == Reported::Kind::nccl_mismatch) {
      f.code = FindingCode::nccl_reported_mismatch;
      f.message = fmt::format("NCCL itself reports a mismatched collective \"at and around\" ranks {} ({} WARN lines); NCCL "
                              "raises this also when a transport error corrupts a message, so it is not proof that the "
                              "application's calls differ",
                              rank_ranges(f.ranks), reps.size());
      f.fix = "compare the calls: rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL and diagnose every rank's log; if "
              "the calls agree, check the network path (GPU Direct RDMA, nv_peer_mem, NIC settings)";
      f.ranks.clear();  // "around" ranks are where NCCL noticed, not who is to blame
      *warn_note = fmt::format(
          "NCCL reports mismatched collectives around ranks {} but the input holds no COLL lines to compare: "
          "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL and pass every rank's log",
          rank_ranges(std::vector<int>(ranks.begin(), ranks.end())));
    } else if (kind == Reported::Kind::ras_counts) {
      f.code = FindingCode::nccl_ras_mismatch;
      f.message = fmt::format("NCCL RAS reports ranks with different collective operation counts{}",
                              f.ranks.empty() ? "" : ": ranks " + rank_ranges(f.ranks));
      f.fix = kCollectiveFix;
    } else {
      f.code = FindingCode::nccl_net_mismatch;
      // Its words name the peer and both sizes: the two sides that disagree, neither the culprit.
      f.message = fmt::format("NCCL's network transport reports a collective mismatch error (NET/IB){}: {}",
                              f.hosts.empty() ? "" : " on " + fmt::format("{}", fmt::join(f.hosts, ", ")),
                              reps.front()->detail);
      f.fix = "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL to compare the calls; if they agree, check the network";
    }
    d.verify = verify_of("nccl.warn.mismatched_collective");
    out->push_back(std::move(d));
  }
}

void reported_findings(const LogReader& r, std::vector<DxFinding>* out, std::vector<Divergence>* div,
                       std::vector<Failure>* failures, std::string* warn_note) {
  NcclReports nccl;
  for (size_t i = 0; i < r.reported.size(); ++i) {
    const Reported& rep = r.reported[i];
    if (superseded(r.reported, i)) continue;
    DxFinding d;
    Finding& f = d.f;
    d.evidence.push_back(rep.evidence);
    f.comm = rep.group;
    f.seq = rep.seq;
    bool error = true;
    switch (rep.kind) {
      case Reported::Kind::fr_missing_ranks:
        fill_fr_missing(rep, &f);
        break;
      case Reported::Kind::fr_errors:
        fill_fr_errors(rep, &f);
        break;
      case Reported::Kind::ras_counts:
        error = fill_ras_counts(rep, &d, out, &nccl, warn_note);
        break;
      case Reported::Kind::nccl_mismatch:
      case Reported::Kind::net_mismatch:
        nccl[rep.kind].push_back(&rep);
        error = false;
        break;
      case Reported::Kind::nccl_version:
        error = false;  // its two versions are facts, judged with the others
        break;
      case Reported::Kind::device_shared:
        error = fill_device_shared(rep, *out, &d);
        break;
      case Reported::Kind::pair_mismatch:
      case Reported::Kind::shape_mismatch:
      case Reported::Kind::missing_ranks:
        fill_compared_or_stalled(rep, &f);
        break;
      case Reported::Kind::truncated:
        failures->push_back(truncated_failure(rep));
        error = false;
        break;
    }
    if (!error) continue;
    f.severity = Severity::error;
    d.verify = rep.kind == Reported::Kind::device_shared ? verify_of(rep.evidence.signal.c_str()) : collective_verify();
    // PyTorch's comparison of two ranks (or one rank's report of its own differing collective)
    // names sides, never the odd one.
    bool tie = rep.kind == Reported::Kind::pair_mismatch || rep.kind == Reported::Kind::device_shared || rep.sides;
    if (!f.ranks.empty()) div->push_back(Divergence{f.ranks, {}, {}, f.message, d.evidence, tie});
    out->push_back(std::move(d));
  }
  nccl_warning_findings(nccl, out, warn_note);
}

// ---- the initiating failure -----------------------------------------------------------------

// "2024-12-03 10:00:01", or "12-03 10:00:01 (year unknown)" when no line of its file dates it.
std::string when_text(const When& w) {
  return w.year > 0 ? fmt::format("{:04}-{}", w.year, w.text()) : w.text() + " (year unknown)";
}

// "rank 6 on node02 failed first (2024-12-03 10:00:01): ...", before anything a finding adds.
std::string initiating_message(const Party& p) {
  return fmt::format("{} failed first{}: {}", party_subject(p), p.when.known() ? " (" + when_text(p.when) + ")" : "", p.what);
}

// The values the input shows for the settings a fix names ("NCCL_SOCKET_IFNAME"): a fix that
// says which setting to check is the more useful for saying what it was set to.
std::string settings_shown(const std::string& fix, const std::vector<Fact>& facts) {
  std::vector<std::string> shown;
  for (const auto& f : facts) {
    if (f.kind != Fact::Kind::nccl_env || f.a.empty() || fix.find(f.a) == std::string::npos) continue;
    std::string s = fmt::format("{}={}{}", f.a, f.b, f.who.host.empty() ? "" : " on " + f.who.host);
    if (std::find(shown.begin(), shown.end(), s) == shown.end() && shown.size() < 3) shown.push_back(s);
  }
  return shown.empty() ? "" : fmt::format(" (the input sets {})", fmt::join(shown, ", "));
}

DxFinding initiating_finding(const BlameResult& b, const std::vector<Fact>& facts,
                             const std::vector<std::string>& known_hosts) {
  DxFinding d;
  Finding& f = d.f;
  const Party& p = b.initiating;
  f.code = FindingCode::initiating_failure;
  f.severity = Severity::error;
  f.ranks = p.ranks;
  f.hosts = p.hosts;
  f.found = p.what;
  f.message = initiating_message(p);
  d.evidence = p.evidence;
  switch (p.kind) {
    case Failure::Kind::oom: {
      std::string setting = p.hint.empty() ? "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" : p.hint;
      f.fix = fmt::format("set {} as the PyTorch message suggests (fragmentation), or lower the memory use of {} "
                          "(batch size, sequence length, activation checkpointing); the other ranks only waited for it",
                          setting, party_subject(p));
      d.verify = diagnose_stdin();
      break;
    }
    case Failure::Kind::nccl_warn:
      f.fix = "the NCCL error on this rank came first: check that every rank runs the same NCCL (the gate), then the "
              "network between the hosts; the other ranks failed because this one did";
      set_gate_verify(&d, p.hosts, known_hosts);
      break;
    default:
      f.fix = fmt::format("fix the error raised on {} (the evidence lines); the other ranks failed only because it did",
                          party_subject(p));
      d.verify = diagnose_stdin();
      break;
  }
  if (const evidence::Signal* s = signal_of(p.evidence)) {
    std::string hint = p.kind == Failure::Kind::oom && !p.hint.empty() ? fmt::format(" (the message suggests {})", p.hint) : "";
    f.fix = fmt::format("{}: {}{}{}; the other ranks failed only because it did", party_subject(p), s->fix,
                        settings_shown(s->fix, facts), hint);
    d.verify = evidence::verify_command(s->verify);
    // A fault of the node or fabric is named as one: the error text alone ("Cuda failure 1
    // 'invalid argument'") does not say it was the NVLS or IB transport.
    if (s->role == "fault") f.message += "; " + s->summary;
  }
  if (!b.skew_note.empty()) f.message += "; " + b.skew_note;
  return d;
}

// A fault of the node or fabric that several processes met alike: named, nobody blamed.
DxFinding alike_finding(const BlameResult& b, const std::vector<Fact>& facts, const std::vector<std::string>& known_hosts) {
  DxFinding d;
  Finding& f = d.f;
  const Party& p = b.alike;
  f.code = FindingCode::initiating_failure;
  f.severity = Severity::error;
  f.hosts = p.hosts;
  f.found = p.what;
  const evidence::Signal* s = signal_of(p.evidence);
  if (s != nullptr && s->role == "build")
    f.message = fmt::format("{} met a property of the library's build ({}), which every process loading it meets alike, so "
                            "no rank is blamed; {}",
                            party_subject(p), p.what, s->summary);
  else if (s != nullptr && s->role == "fabric")
    f.message = fmt::format("{} met a timeout of the fabric ({}): the far end or the path to it stopped answering, and no "
                            "process's own error comes before it, so no rank is blamed; {}",
                            party_subject(p), p.what, s->summary);
  else if (s == nullptr || s->role == "fault")
    f.message = fmt::format("{} all met the same fault ({}), none of them first by its own lines: a fault of the nodes or "
                            "the fabric between them, not one rank's error, so no rank is blamed{}",
                            party_subject(p), p.what, s ? "; " + s->summary : std::string());
  else
    f.message = fmt::format("{} all failed alike ({}) and their launcher saw each end with the same exit code; the lines "
                            "do not say which of them printed the error or failed first, so no rank is blamed",
                            party_subject(p), p.what);
  d.evidence = p.evidence;
  f.fix = s ? s->fix + settings_shown(s->fix, facts) : "check the network fabric between these hosts";
  if (s) d.verify = evidence::verify_command(s->verify);
  else set_gate_verify(&d, p.hosts, known_hosts);
  return d;
}

}  // namespace

std::vector<std::string> input_hosts(const LogReader& r) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& h) {
    if (!h.empty() && seen.insert(h).second) out.push_back(h);
  };
  for (const auto& f : r.facts) add(f.who.host);
  for (const auto& f : r.failures) add(f.who.host);
  for (const auto& w : r.watch) add(w.who.host);
  for (const auto& x : r.reported) add(x.who.host);
  for (const auto& e : r.launcher) add(e.host);
  for (const auto& s : r.coll.sequences) add(s.host);
  return out;
}

namespace {

void count_identities(const LogReader& r, int* nranks, int* nhosts) {
  std::set<std::string> ids, hosts;
  std::set<std::string> files_only;
  auto who = [&](const Who& w) {
    if (w.rank >= 0) ids.insert(fmt::format("r{}", w.rank));
    else if (w.proc.rfind("file ", 0) == 0) files_only.insert(w.proc);
    else if (!w.proc.empty()) ids.insert(w.proc);
    if (!w.host.empty()) hosts.insert(w.host);
  };
  for (const auto& f : r.facts) who(f.who);
  for (const auto& f : r.failures) who(f.who);
  for (const auto& w : r.watch) who(w.who);
  for (const auto& x : r.reported) {
    who(x.who);
    for (int rk : x.ranks) ids.insert(fmt::format("r{}", rk));
  }
  for (const auto& e : r.launcher) {
    if (e.rank >= 0) ids.insert(fmt::format("r{}", e.rank));
    if (!e.host.empty()) hosts.insert(e.host);
  }
  for (const auto& s : r.coll.sequences) {
    ids.insert(s.global_rank >= 0 ? fmt::format("r{}", s.global_rank) : fmt::format("{}:{}", s.host, s.pid));
    if (!s.host.empty()) hosts.insert(s.host);
  }
  // Lines no process can be named for (a bare "NCCL version" line) count only when nothing else does.
  if (ids.empty()) ids = files_only;
  *nranks = static_cast<int>(ids.size());
  *nhosts = static_cast<int>(hosts.size());
}

// The environment facts judged across ranks; returns their error divergences.
std::vector<Divergence> environment_findings(const LogReader& r, std::vector<DxFinding>* out) {
  std::vector<Divergence> environment;
  const std::vector<std::string> known = input_hosts(r);
  for (auto& jf : judge_facts(r.facts)) {
    DxFinding x;
    x.f = std::move(jf.finding);
    x.evidence = std::move(jf.evidence);
    set_gate_verify(&x, x.f.hosts, known);
    if (x.f.severity == Severity::error)
      // compare/judge's tie: every side is named, none is the odd one.
      environment.push_back(Divergence{x.f.ranks, x.f.hosts, jf.processes, x.f.message, x.evidence,
                                       x.f.tied});
    out->push_back(std::move(x));
  }
  return environment;
}

// NCCL RAS's text report, judged by the same rules as its JSON form (evidence/read_ras.h), and the
// findings of its diagnostics lines (evidence/read_diag.h).
void ras_text_findings(const LogReader& r, std::vector<DxFinding>* out) {
  for (const auto& rf : r.ras_text) {
    DxFinding x;
    x.f = rf.finding;
    x.evidence = rf.evidence;
    // The entry that read the finding's line knows how to check it (a driver on every node is
    // checked by the gate, not by diagnose).
    bool own = !rf.evidence.empty() && signal_named(rf.evidence.front().signal) != nullptr;
    x.verify = verify_of(own ? rf.evidence.front().signal.c_str() : "nccl.ras.counts");
    out->push_back(std::move(x));
  }
}

void blame_findings(Diagnosis* d, const std::vector<Divergence>& divergences, const std::vector<Divergence>& environment,
                    const LogReader& r) {
  const BlameResult& b = d->blame;
  const std::vector<Fact>& facts = r.facts;
  if (b.found && b.initiating.kind != Failure::Kind::never_joined && environment.empty())
    d->findings.push_back(initiating_finding(b, facts, input_hosts(r)));
  if (!b.found && b.have_alike && environment.empty()) d->findings.push_back(alike_finding(b, facts, input_hosts(r)));
  if (b.found && b.initiating.kind == Failure::Kind::never_joined && divergences.empty()) {
    // A desync report naming who never joined is a verdict of its own.
    DxFinding x;
    x.f.code = FindingCode::collective_missing;
    x.f.severity = Severity::error;
    x.f.ranks = b.initiating.ranks;
    x.f.hosts = b.initiating.hosts;
    x.f.message = fmt::format("{}: {}", party_subject(b.initiating), b.initiating.what);
    x.f.found = b.initiating.what;
    x.f.fix = kCollectiveFix;
    x.evidence = b.initiating.evidence;
    x.verify = collective_verify();
    d->findings.push_back(std::move(x));
  }
}

// What was read but not used: unreadable lines, and call lines lost from the sequences.
void unused_input_findings(const LogReader& r, std::vector<DxFinding>* out) {
  if (r.unreadable.count > 0) {
    DxFinding x;
    x.f.code = FindingCode::diagnose_unreadable_lines;
    x.f.severity = Severity::warning;
    x.f.found = fmt::format("{} unreadable lines", r.unreadable.count);
    x.f.message = fmt::format("{} input line{} look like NCCL or PyTorch records but could not be read (cut, wrapped without "
                              "their continuation, or holding impossible numbers); the diagnosis ignores them",
                              r.unreadable.count, r.unreadable.count == 1 ? "" : "s");
    x.f.fix = "pass the logs as the processes wrote them (NCCL_DEBUG_FILE=/path/nccl.%h.%p.log gives one unwrapped file "
              "per process) rather than a terminal copy";
    x.evidence = r.unreadable.samples;
    rerun_with_logs(&x, {"NCCL_DEBUG=INFO"});
    out->push_back(std::move(x));
  }
  for (const auto& st : r.coll.stats) {
    long long lost = 0;
    std::vector<std::string> who;
    for (const auto& [name, n] : st.lost) {
      lost += n;
      if (who.size() < 4) who.push_back(fmt::format("{} ({})", name, n));
    }
    if (lost == 0) continue;
    DxFinding x;
    x.f.code = FindingCode::diagnose_lines_lost;
    x.f.severity = Severity::warning;
    x.f.comm = st.comm;
    x.f.found = fmt::format("{} lines lost", lost);
    x.f.message = fmt::format("communicator {}: {} call line{} missing inside the sequences of {} (opCount gaps); a gap is a "
                              "line lost from the log, not a skipped collective, so these ranks are not blamed for it",
                              st.comm, lost, lost == 1 ? "" : "s", fmt::join(who, ", "));
    x.f.fix = "write each process's log to its own file (NCCL_DEBUG_FILE=/path/nccl.%h.%p.log) so no line is lost";
    for (const auto& [fi, line] : st.lost_after)
      x.evidence.push_back(Evidence{static_cast<size_t>(fi) < r.files.size() ? r.files[static_cast<size_t>(fi)] : "", line, ""});
    rerun_with_logs(&x, {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=COLL"});
    out->push_back(std::move(x));
  }
}

// Why nothing could be decided, and what to add: the first reason that applies.
// A worker killed with SIGKILL (-9, 137) that nobody's line explains: said even when no rank can
// be blamed, since the host's out-of-memory killer is the usual sender and the kernel log says.
std::string killed_note(const LogReader& r) {
  for (const auto& e : r.launcher) {
    bool killed = e.signal == "SIGKILL" || e.exitcode == "-9" || e.exitcode == "137";
    if (!killed) continue;
    return fmt::format("a worker{} was killed with SIGKILL (exit {}), most often by the host's out-of-memory (OOM) killer, "
                       "and nothing in the input says which worker or shows another failure: check the kernel log on the "
                       "job's hosts (dmesg -T | grep -i 'killed process') and add each worker's log",
                       e.pid >= 0 ? fmt::format(" (pid {})", e.pid) : "", e.exitcode.empty() ? "-9" : e.exitcode);
  }
  return "";
}

std::string inconclusive_reason(const LogReader& r, const Diagnosis& d, const WatchSummary& ws,
                                const std::string& nccl_warn_note) {
  bool coll_agree = !r.coll.sequences.empty();
  int coll_members = 0, coll_nranks = -1;
  for (const auto& st : r.coll.stats) {
    coll_members = std::max(coll_members, st.members);
    coll_nranks = std::max(coll_nranks, st.nranks);
  }
  if (!d.blame.withheld.empty()) return d.blame.withheld;
  if (r.records == 0)
    return fmt::format("no NCCL, PyTorch or launcher records in the input ({} lines read): add the job's logs, with "
                       "NCCL_DEBUG=INFO and the launcher's output",
                       r.lines);
  // A worker killed from outside says more than anything below: nobody else's line explains it.
  if (std::string killed = killed_note(r); !killed.empty()) return killed;
  if (!ws.inconclusive.empty()) return ws.inconclusive;
  if (d.nranks <= 1) {
    std::string who = "one process";
    if (!r.coll.sequences.empty()) {
      const auto& s0 = r.coll.sequences.front();
      who = s0.global_rank >= 0 ? fmt::format("rank {}", s0.global_rank) : fmt::format("process {}:{}", s0.host, s0.pid);
    }
    for (const auto& w : r.watch)
      if (w.who.rank >= 0) who = fmt::format("rank {}", w.who.rank);
    return fmt::format("the input holds {} only{}: add the other ranks' logs, or rerun with TORCH_DISTRIBUTED_DEBUG=DETAIL",
                       who, coll_nranks > 1 ? fmt::format(" of a {}-rank communicator", coll_nranks) : "");
  }
  if (!ws.agree.empty())
    return fmt::format("{}, so the rank that never arrived is not in the input: add the other ranks' logs, or "
                       "rerun with TORCH_NCCL_DESYNC_DEBUG=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 (Flight Recorder)",
                       ws.agree);
  if (!nccl_warn_note.empty()) return nccl_warn_note;
  if (coll_agree)
    return fmt::format("the {} ranks in the input{} made the same collective calls and nothing in it failed: add the other "
                       "ranks' logs and the error output",
                       coll_members, coll_nranks > coll_members ? fmt::format(" (of {})", coll_nranks) : "");
  return "nothing in the input shows a failure or a difference between ranks: add the failing ranks' logs and tracebacks";
}

// PyTorch's general report of an NCCL error ("invalid usage", "unhandled cuda error") from the
// one process in the input, with no NCCL WARN, launcher or other rank: NCCL's own text of the
// error is not there, and neither is anything to rank this process before another (the error may
// as well be every rank's, a build or version problem). The sentence saying what to add, or ""
// when the input supports the blame.
std::string lone_general_error(const LogReader& r, const BlameResult& b) {
  if (!b.found || b.initiating.evidence.empty() || !r.launcher.empty() || !r.watch.empty() || !r.reported.empty())
    return "";
  for (const auto& e : b.initiating.evidence)
    if (e.signal != "torch.nccl_error") return "";
  for (const auto& f : r.failures)
    if (f.who.proc != r.failures.front().who.proc || f.who.rank != r.failures.front().who.rank) return "";
  return fmt::format("the input holds one process's general NCCL error ({}) and no NCCL WARN line of its own: nothing shows "
                     "that this process started the failure or that others followed it (a build or version problem "
                     "fails every rank alike): rerun with NCCL_DEBUG=WARN (or INFO) and add every rank's log and the "
                     "launcher's output",
                     b.initiating.what);
}

// Reject on any error; otherwise never PASS: say what is missing.
void set_verdict(Diagnosis* d, const LogReader& r, const WatchSummary& ws, const std::string& nccl_warn_note) {
  bool error = std::any_of(d->findings.begin(), d->findings.end(), [](const DxFinding& x) { return x.f.severity == Severity::error; });
  if (error) {
    d->verdict = "reject";
    d->exit_code = 1;
    return;
  }
  d->verdict = "inconclusive";
  d->exit_code = 2;
  std::string why = inconclusive_reason(r, *d, ws, nccl_warn_note);
  d->inconclusive = why;
  DxFinding x;
  x.f.code = FindingCode::diagnose_inconclusive;
  x.f.severity = Severity::warning;
  x.f.message = why;
  x.f.fix = why.substr(why.rfind(": ") == std::string::npos ? 0 : why.rfind(": ") + 2);
  // "-" stands for the inputs read (verify_lines.h); what to add is a folder only the user knows.
  make_command_with({{"MORE_LOGS", "folder-with-the-other-ranks-logs-and-the-launchers-output"}},
                    {"denpex-probe", "diagnose", "-", "$MORE_LOGS"}, &x.verify);
  x.verify_note = "set MORE_LOGS to a folder holding what the line above says to add, then run this";
  d->findings.push_back(std::move(x));
}

}  // namespace

Diagnosis diagnose(const LogReader& r) {
  Diagnosis d;
  std::vector<Divergence> divergences;
  std::vector<Failure> failures = r.failures;
  std::string nccl_warn_note;

  std::vector<Divergence> environment = environment_findings(r, &d.findings);
  coll_findings(r, &d.findings, &divergences);
  WatchSummary ws = watch_findings(r, &d.findings, &divergences);
  reported_findings(r, &d.findings, &divergences, &failures, &nccl_warn_note);
  ras_text_findings(r, &d.findings);

  d.blame = assign_blame(failures, r.launcher, divergences, environment);
  std::string unsupported = blame_past_cut(r, d.blame);
  if (unsupported.empty()) unsupported = lone_general_error(r, d.blame);
  if (!unsupported.empty()) {
    d.blame.found = false;
    d.blame.initiating = Party{};
    d.blame.withheld = unsupported;
  }
  blame_findings(&d, divergences, environment, r);
  unused_input_findings(r, &d.findings);
  cut_findings(r, d.blame.withheld, &d.findings);

  count_identities(r, &d.nranks, &d.nhosts);
  set_verdict(&d, r, ws, nccl_warn_note);
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const DxFinding& a, const DxFinding& b2) {
    return static_cast<int>(a.f.severity) > static_cast<int>(b2.f.severity);
  });
  return d;
}

void add_findings(Diagnosis* d, std::vector<DxFinding> more) {
  for (auto& x : more) d->findings.push_back(std::move(x));
  bool error = std::any_of(d->findings.begin(), d->findings.end(),
                           [](const DxFinding& x) { return x.f.severity == Severity::error; });
  if (error && d->exit_code == 2) {
    d->exit_code = 1;
    d->verdict = "reject";
    d->inconclusive.clear();
    d->findings.erase(std::remove_if(d->findings.begin(), d->findings.end(),
                                     [](const DxFinding& x) { return x.f.code == FindingCode::diagnose_inconclusive; }),
                      d->findings.end());
  }
  std::stable_sort(d->findings.begin(), d->findings.end(), [](const DxFinding& a, const DxFinding& b) {
    return static_cast<int>(a.f.severity) > static_cast<int>(b.f.severity);
  });
}

namespace {

json evidence_json(const std::vector<Evidence>& ev) {
  json a = json::array();
  for (const auto& e : ev) a.push_back({{"file", e.file}, {"line", e.line}, {"text", e.text}});
  return a;
}

json party_json(const Party& p) {
  json j = {{"ranks", p.ranks}, {"hosts", p.hosts}, {"what", p.what}};
  if (!p.procs.empty()) j["processes"] = p.procs;
  if (p.peer) j["peer"] = true;
  if (p.when.known()) {
    j["when"] = p.when.iso();
    j["year_known"] = p.when.year > 0;
  }
  if (!p.failed_at.empty()) {
    json at = json::object();
    for (const auto& [who, when] : p.failed_at) at[who] = when.iso();
    j["failed_at"] = at;
  }
  j["evidence"] = evidence_json(p.evidence);
  return j;
}

}  // namespace

json diagnosis_json(const Diagnosis& d, const LogReader& r) {
  json findings = json::array();
  int errors = 0, warnings = 0;
  for (const auto& x : d.findings) {
    json f = x.f;
    f["evidence"] = evidence_json(x.evidence);
    f["verify"] = x.verify.text;
    f["verify_argv"] = command_json(x.verify)["argv"];
    if (!x.verify.vars.empty()) f["verify_vars"] = command_json(x.verify)["vars"];
    if (!x.verify_or.text.empty()) f["verify_or"] = command_json(x.verify_or);
    if (!x.verify_note.empty()) f["verify_note"] = x.verify_note;
    findings.push_back(f);
    (x.f.severity == Severity::error ? errors : warnings)++;
  }
  json diag = json::object();
  if (d.blame.found) diag["initiating"] = party_json(d.blame.initiating);
  else diag["initiating"] = nullptr;
  if (d.blame.have_alike) diag["met_alike"] = party_json(d.blame.alike);
  if (!d.blame.disagreeing.empty()) {
    json sides = json::array();
    for (const auto& p : d.blame.disagreeing) sides.push_back(party_json(p));
    diag["disagreeing"] = sides;
  }
  if (d.blame.skew_us > 0) diag["clock_skew_s"] = static_cast<double>(d.blame.skew_us) / 1e6;
  json coll = json::array();
  for (const auto& p : d.blame.collateral) coll.push_back(party_json(p));
  diag["collateral"] = coll;
  if (d.blame.have_claim) {
    json c = party_json(d.blame.claim);
    c["correct"] = !d.blame.claim_wrong;
    if (d.blame.claim_wrong) c["note"] = d.blame.claim_note;
    // With the start withheld (an input cut before it), or not decided, the claim is not judged.
    if (!d.blame.withheld.empty() || !d.blame.found) c["correct"] = nullptr;
    diag["launcher_claim"] = c;
  } else {
    diag["launcher_claim"] = nullptr;
  }
  if (!d.inconclusive.empty()) diag["inconclusive"] = d.inconclusive;
  json inputs = {{"files", r.files},
                 {"lines", r.lines},
                 {"records", r.records},
                 {"collective_calls", r.coll_calls},
                 {"unreadable", r.unreadable.count},
                 {"unreadable_samples", evidence_json(r.unreadable.samples)},
                 {"notes", r.notes}};
  if (r.events_dropped > 0) inputs["events_not_kept"] = r.events_dropped;
  if (!r.cuts.empty()) inputs["cut"] = cuts_json(r);
  return {{"schema", "denpex.report.v1"}, {"mode", "diagnose"}, {"verdict", d.verdict},
          {"nranks", d.nranks},           {"nhosts", d.nhosts},  {"errors", errors},
          {"warnings", warnings},         {"findings", findings}, {"diagnosis", diag},
          {"inputs", inputs}};
}

namespace {

// Whether the Started by line carries this finding's message: the divergence it names, or the
// initiating failure itself (subject, time and error).
bool started_by_says(const BlameResult& b, const Finding& f) {
  if (!b.found || b.initiating.what.empty()) return false;
  // A message that adds to it (the transport a fault is of, the clock skew) is printed.
  return f.message == b.initiating.what || (f.code == FindingCode::initiating_failure && f.found == b.initiating.what &&
                                            f.message == initiating_message(b.initiating));
}

}  // namespace

namespace {

// Sides named only because NCCL found them on one GPU: a setting of both, not a disagreement of
// their calls, so the other ranks' logs would not tell an odd one.
bool shared_device(const std::vector<Party>& sides) {
  for (const auto& p : sides) {
    const evidence::Signal* s = signal_of(p.evidence);
    if (s == nullptr || s->finding != FindingCode::gpu_shared_by_ranks) return false;
  }
  return true;
}

}  // namespace

std::string render_diagnosis(const Diagnosis& d, const LogReader& r) {
  std::string out;
  const BlameResult& b = d.blame;
  if (b.found) {
    out += fmt::format("Started by: {}{}: {}\n", party_subject(b.initiating),
                       b.initiating.when.known() ? " at " + when_text(b.initiating.when) : "", b.initiating.what);
  } else if (b.have_alike) {
    bool one = b.alike.procs.size() + b.alike.ranks.size() <= 1;
    out += fmt::format(one ? "Started by: no rank: {} only met {}\n" : "Started by: no single rank: {} all met {}\n",
                       party_subject(b.alike), b.alike.what);
  } else if (!b.disagreeing.empty() && shared_device(b.disagreeing)) {
    std::vector<std::string> sides;
    for (const auto& p : b.disagreeing) sides.push_back(party_subject(p));
    out += fmt::format("Started by: no rank: {} are on one GPU, a device assignment wrong for both\n", fmt::join(sides, "; "));
  } else if (!b.disagreeing.empty()) {
    std::vector<std::string> sides;
    size_t named = 0;
    for (const auto& p : b.disagreeing) sides.push_back(party_subject(p)), named += p.ranks.size();
    out += fmt::format("Started by: not decided from this input: {} {}, and nothing shows which side went wrong first: "
                       "add the other ranks' logs (the side no other rank shares is the odd one)\n",
                       fmt::join(sides, "; "), named == 1 ? "differs from a rank the input does not name" : "disagree");
  } else {
    out += "Started by: not decided from this input\n";
  }
  // A ticket has no room for a line saying nothing followed: the JSON's empty collateral says it.
  if (!b.collateral.empty()) {
    std::vector<std::string> parts;
    for (const auto& p : b.collateral) parts.push_back(fmt::format("{} ({})", party_subject(p), p.what));
    out += fmt::format("Followed:   {}\n", fmt::join(parts, "; "));
  }
  if (b.have_claim)
    out += fmt::format("Launcher:   {}{}\n", b.claim.what,
                       !b.withheld.empty() ? " (not judged: who started it is not decided)"
                       : b.claim_wrong     ? " -- WRONG: " + b.claim_note
                       : !b.found          ? " (a claim only: nothing in the input shows that process failing first)"
                                           : " (agrees)");
  int errors = 0, warnings = 0;
  for (const auto& x : d.findings) (x.f.severity == Severity::error ? errors : warnings)++;
  // A log that names no host ("8 ranks, 0 hosts" read as if the ranks ran nowhere) says so.
  const std::string hosts = d.nhosts == 0 ? "no host named" : fmt::format("{} host{}", d.nhosts, d.nhosts == 1 ? "" : "s");
  out += fmt::format("denpex-probe diagnose: {} ({} error{}, {} warning{}; {} rank{}, {})\n",
                     d.exit_code == 1 ? "REJECT" : "INCONCLUSIVE", errors, errors == 1 ? "" : "s", warnings,
                     warnings == 1 ? "" : "s", d.nranks, d.nranks == 1 ? "" : "s", hosts);
  if (!d.inconclusive.empty()) out += fmt::format("could not decide: {}\n", d.inconclusive);
  size_t shown = 0;
  for (const auto& x : d.findings) {
    if (shown++ >= 20) {
      out += fmt::format("\n... {} more findings in --json\n", d.findings.size() - 20);
      break;
    }
    const Finding& f = x.f;
    out += fmt::format("\n{} {}{}\n", to_string(f.severity), code_name(f.code),
                       f.ranks_total >= 0 ? "  " + ranks_subject(f)
                       : f.ranks.empty()  ? ""
                                          : fmt::format("  ranks {}", rank_ranges(f.ranks)));
    // The message Started by already printed is not printed again.
    if (!started_by_says(b, f)) out += fmt::format("  {}\n", f.message);
    if (!f.expected.empty()) out += fmt::format("  expected: {}\n", f.expected);
    if (!f.found.empty()) out += fmt::format("  found:    {}\n", f.found);
    for (const auto& e : x.evidence)
      out += e.line > 0 ? fmt::format("  evidence: {}:{}: {}\n", e.file, e.line, e.text)
                        : fmt::format("  evidence: {}: {}\n", e.file, e.text);
    out += fmt::format("  fix:    {}\n", f.fix);
    if (!x.verify_note.empty()) out += fmt::format("  note:   {}\n", x.verify_note);
    // A command with variables set before it spans lines: each under the first.
    std::string verify = x.verify.text;
    replace_all(&verify, "\n", "\n          ");
    out += fmt::format("  verify: {}\n", verify);
    if (!x.verify_or.text.empty()) out += fmt::format("      or: {}\n", x.verify_or.text);
  }
  out += fmt::format("\ninput: {} file{}, {} lines, {} records, {} collective calls, {} unreadable\n", r.files.size(),
                     r.files.size() == 1 ? "" : "s", r.lines, r.records, r.coll_calls, r.unreadable.count);
  if (r.events_dropped > 0)
    out += fmt::format("not kept: {} events past {} of one kind from one process (or {} in all): counted, not judged\n",
                       r.events_dropped, evidence::kMaxEventsPerProcess, evidence::kMaxEvents);
  out += cuts_text(r);
  for (const auto& n : r.notes) out += fmt::format("note: {}\n", n);
  return out;
}

}  // namespace denpex::diag
