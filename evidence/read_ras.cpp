// NCCL RAS's text report, line by line (the layout: evidence/read_ras.h). The reader of the
// signal entries nccl.ras.* opens the report; ras_line reads every line after it while the lines
// are RAS's, and end_block hands the finished report to ras_finish.
#include "evidence/read_ras.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/finding_codes.h"

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

long long count_after(std::string_view t, std::string_view key) {
  size_t k = t.find(key);
  return k == std::string_view::npos ? -1 : to_ll(t.substr(k + key.size()));
}

std::vector<std::string_view> words(std::string_view t) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < t.size() && out.size() < 16) {
    while (i < t.size() && t[i] == ' ') ++i;
    size_t b = i;
    while (i < t.size() && t[i] != ' ') ++i;
    if (i > b) out.push_back(t.substr(b, i - b));
  }
  return out;
}

bool all_digits(std::string_view w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return (c >= '0' && c <= '9') || c == '-'; });
}

// "fa93daea854b060b" (RAS text, %016lx) -> "0xfa93daea854b060b" (RAS JSON, 0x%lx).
std::string json_hash(std::string_view hex) {
  if (hex.empty()) return std::string();
  size_t k = 0;
  while (k + 1 < hex.size() && hex[k] == '0') ++k;
  return "0x" + std::string(hex.substr(k));
}

// Status names as RAS prints them (statusStr in client_support.cc).
int status_code(std::string_view s) {
  static const char* names[] = {"NOCOMM", "INIT", "RUNNING", "FINALIZE", "ABORT"};
  for (int i = 0; i < 5; ++i)
    if (starts(s, names[i])) return i;
  return -1;
}

// What a "Rank R ... -- GPU g managed by process p on node h" line names.
struct RankLine {
  int rank = -1;
  long long pid = -1;
  std::string host;
  std::string_view between;  // the text between "Rank R" and "--"
};

RankLine rank_line(std::string_view t) {
  RankLine out;
  long long r = to_ll(t.substr(5));
  if (r >= 0 && r < kMaxRank) out.rank = static_cast<int>(r);
  size_t dash = t.find(" -- ");
  size_t sp = t.find(' ', 5);
  if (sp != std::string_view::npos && dash != std::string_view::npos && dash >= sp) out.between = t.substr(sp + 1, dash - sp - 1);
  else if (sp != std::string_view::npos && dash == std::string_view::npos) out.between = t.substr(sp + 1);
  out.pid = count_after(t, "managed by process ");
  size_t node = t.find(" on node ");
  if (node != std::string_view::npos) out.host = std::string(trim(t.substr(node + 9)));
  return out;
}

RasTextComm& comm_for(RasTextReport& rep, std::string_view hash, int group) {
  std::string h = json_hash(hash);
  for (RasTextComm& c : rep.comms)
    if (c.hash == h) return c;
  rep.comms.emplace_back();
  rep.comms.back().hash = h;
  rep.comms.back().group = group;
  return rep.comms.back();
}

RasRank& rank_of(RasTextComm& c, const RankLine& l) {
  RasRank& r = c.ranks[l.rank];
  r.rank = l.rank;
  if (!l.host.empty()) r.host = l.host;
  if (l.pid >= 0) r.pid = l.pid;
  return r;
}

// A number of the report where an int goes (a group, a count of nodes, processes or GPUs, a
// status or error code): -1 when it is outside lo .. hi (or past 63 bits: to_ll gives -1), never
// wrapped, and the line is counted unreadable.
int fitting(long long v, long long lo, long long hi, Record& rec) {
  if (v >= lo && v <= hi) return static_cast<int>(v);
  rec.r.bad(rec.st, rec.text);
  return -1;
}

void keep_evidence(Record& rec, std::string_view t) {
  auto& ev = rec.st.ras.report.evidence;
  if (ev.size() < 8) {
    ev.push_back(rec.r.evidence(rec.st, t));
    ev.back().signal = "nccl.ras.report";
  }
}

}  // namespace

int ras_error_code(std::string_view text) {
  static const std::pair<const char*, int> codes[] = {
      {"Unhandled CUDA error", 1}, {"System error", 2},        {"Internal error", 3},
      {"Invalid argument", 4},     {"Invalid usage", 5},        {"Remote process error", 6},
      {"NCCL operation in progress", 7}};
  for (const auto& [name, code] : codes)
    if (starts(text, name)) return code;
  return -1;
}

namespace {

// The "Rank R ..." lines under a communicator's header, by the block they are in.
bool comm_rank_line(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  if (s.comm < 0 || !starts(t, "Rank ")) return false;
  RasTextComm& c = s.report.comms[static_cast<size_t>(s.comm)];
  RankLine l = rank_line(t);
  if (l.rank < 0) {
    // "Rank 4294967297 ...": a rank past kMaxRank (or past 63 bits) is refused, not wrapped.
    if (t.size() > 5 && t[5] >= '0' && t[5] <= '9') rec.r.bad(rec.st, t);
    return true;
  }
  if (s.sub == "comm-incomplete") {
    RasMissingRank& m = c.missing[l.rank];
    m.rank = l.rank;
    m.host = l.host;
    m.pid = l.pid;
    m.unresponsive = true;
  } else if (s.sub == "init" || s.sub == "async") {
    int code = starts(l.between, "reported ") ? ras_error_code(l.between.substr(9)) : s.value_known ? fitting(s.value, INT32_MIN, INT32_MAX, rec) : -1;
    RasRank& r = rank_of(c, l);
    (s.sub == "init" ? r.init_state : r.async_error) = code;
  } else if (s.sub == "status") {
    int st = starts(l.between, "has status ") ? status_code(l.between.substr(11)) : s.value_known ? fitting(s.value, INT32_MIN, INT32_MAX, rec) : -1;
    if (st == 0) {
      RasMissingRank& m = c.missing[l.rank];
      m.rank = l.rank;
      m.host = l.host;
      m.pid = l.pid;
      return true;
    }
    RasRank& r = rank_of(c, l);
    if (st == 1 && r.init_state == 0) r.init_state = 7;
    if (st == 3) r.finalize_called = true;
    if (st == 4) r.abort_flag = true;
  } else if (s.sub == "counts" && !c.counts.empty()) {
    RasTextCounts& k = c.counts.back();
    long long n = starts(l.between, "has not launched") ? 0
                  : starts(l.between, "has launched up to operation ") ? to_ll(l.between.substr(29))
                  : s.value_known ? s.value : -1;
    if (starts(l.between, "has ")) k.groups[n] += 1;  // a group of one: no count line above it
    rank_of(c, l);
    if (k.listed.size() < 4096) {
      k.listed.emplace_back(l.rank, n);
      k.legacy.ranks.push_back(l.rank);
      k.legacy.counts.push_back(n);
    }
  }
  return true;
}

// "N ranks reported X", "N ranks have status S", "N ranks have launched up to operation M".
bool group_line(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  long long n = to_ll(t);
  if (n < 0 || s.comm < 0) return false;
  RasTextComm& c = s.report.comms[static_cast<size_t>(s.comm)];
  if (has(t, " ranks reported ")) {
    s.value = ras_error_code(t.substr(t.find(" ranks reported ") + 16));
  } else if (has(t, " ranks have status ")) {
    s.value = status_code(t.substr(t.find(" ranks have status ") + 19));
  } else if (has(t, " ranks have launched up to operation ") || has(t, " ranks have not launched any operations")) {
    if (c.counts.empty()) return false;
    RasTextCounts& k = c.counts.back();
    s.value = has(t, "not launched") ? 0 : count_after(t, "up to operation ");
    k.groups[s.value] += n;
    if (n > k.legacy.majority_ranks) {
      k.legacy.majority_ranks = static_cast<int>(std::min<long long>(n, kMaxRank));
      k.legacy.majority_count = s.value;
    }
  } else {
    return false;
  }
  s.value_known = true;
  return true;
}

// "#0-0 (fa93daea854b060b) MISMATCH" and the block headers inside it.
bool comm_header(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  if (starts(t, "#")) {
    size_t open = t.find(" ("), close = t.find(") ");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return false;
    int group = fitting(to_ll(t.substr(1)), 0, kMaxRank, rec);
    RasTextComm& c = comm_for(s.report, t.substr(open + 2, close - open - 2), group);
    s.comm = static_cast<int>(&c - s.report.comms.data());
    std::string_view what = trim(t.substr(close + 2));
    s.sub = what == "INCOMPLETE" ? "comm-incomplete" : what == "ERROR" ? "error" : "mismatch";
    s.value_known = false;
    keep_evidence(rec, t);
    return true;
  }
  bool opens = t == "Communicator ranks have different status" ||
               (starts(t, "Communicator ranks have different ") && has(t, " operation counts"));
  if (s.comm < 0 && opens) s.comm = static_cast<int>(&comm_for(s.report, "", -1) - s.report.comms.data());
  if (s.comm < 0) return false;
  auto sub = [&](const char* name) {
    s.sub = name;
    s.value_known = false;
    return true;
  };
  if (starts(t, "Missing communicator data from ") && has(t, " rank")) return sub("comm-incomplete");
  if (starts(t, "Initialization error")) return sub("init");
  if (starts(t, "Asynchronous error")) return sub("async");
  if (t == "Communicator ranks have different status") return sub("status");
  if (starts(t, "Communicator ranks have different ") && has(t, " operation counts")) {
    RasTextComm& c = s.report.comms[static_cast<size_t>(s.comm)];
    RasTextCounts k;
    k.op = std::string(t.substr(34, t.find(" operation counts") - 34));
    k.legacy.kind = Reported::Kind::ras_counts;
    k.legacy.who = rec.r.who_of(rec.proc);
    k.legacy.evidence = rec.r.evidence(rec.st, t);
    k.legacy.evidence.signal = "nccl.ras.counts";
    k.legacy.op = k.op;
    c.counts.push_back(std::move(k));
    return sub("counts");
  }
  return false;
}

// The version lines, the job summary and the communicators table.
bool summary_line(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  RasTextReport& rep = s.report;
  if (starts(t, "NCCL version ") && has(t, " compiled with CUDA ")) {
    size_t c = t.find(" compiled with CUDA ");
    rep.nccl_version = std::string(t.substr(13, c - 13));
    rep.cuda = std::string(trim(t.substr(c + 20)));
    keep_evidence(rec, t);
    return true;
  }
  if (starts(t, "CUDA runtime version ") || t == "Job summary" || starts(t, "The outlier node") ||
      (starts(t, "Node ") && has(t, " running process")) || starts(t, "Communicators...") ||
      t == "No communicator data collected!" || starts(t, "Nodes ") || starts(t, "Processes ") ||
      starts(t, "per node") || starts(t, "per process") || starts(t, "#  in group")) {
    if (t == "Job summary") s.section = "summary";
    if (starts(t, "Communicators...")) s.section = "table";
    return true;
  }
  if (starts(t, "(total)")) {
    s.sub = "totals";
    return true;
  }
  if (starts(t, "Group ") && has(t, "Status") && has(t, "Errors")) {
    s.section = "table";
    s.sub.clear();
    return true;
  }
  std::vector<std::string_view> w = words(t);
  if (w.empty() || !all_digits(w[0])) return false;
  if (s.section == "table" && w.size() == 8) {
    long long g = to_ll(w[0]), size = to_ll(w[4]);
    int group = fitting(g, 0, kMaxRank, rec);
    if (group >= 0 && size > 0 && size <= kMaxRank) rep.group_size[group] = static_cast<int>(size);
    return true;
  }
  if (s.section != "summary" || !std::all_of(w.begin(), w.end(), all_digits)) return false;
  // "4 8 1 32 32" (nodes, per node, per process, processes, GPUs) or, after the per-node
  // breakdown, "(total) (total) (total)": "4 32 32".
  if (s.sub == "totals" && (w.size() == 5 || w.size() == 3)) {
    rep.nodes = fitting(to_ll(w[0]), 0, kMaxRank, rec);
    rep.processes = fitting(to_ll(w[w.size() - 2]), 0, kMaxRank, rec);
    rep.gpus = fitting(to_ll(w[w.size() - 1]), 0, kMaxRank, rec);
  }
  return true;
}

// The Errors section's job-wide blocks: INCOMPLETE (processes not answering) and DEAD.
bool process_line(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  if (t == "INCOMPLETE" || t == "DEAD") {
    s.sub = t == "DEAD" ? "dead" : "incomplete";
    s.comm = -1;
    return true;
  }
  if (starts(t, "Missing communicator data from ") && has(t, " job process")) {
    s.report.missing_processes = fitting(count_after(t, "data from "), 0, kMaxRank, rec);
    s.sub = "incomplete";
    s.comm = -1;
    return true;
  }
  if (has(t, " considered dead (unreachable via the RAS network)")) {
    s.report.dead_processes = fitting(to_ll(t), 0, kMaxRank, rec);
    s.sub = "dead";
    s.comm = -1;
    return true;
  }
  if (starts(t, "Process ") && has(t, " on node ") && has(t, " managing GPU")) {
    if (s.sub == "dead" && s.report.dead.size() < 4096) {
      RasDeadProcess p;
      p.pid = to_ll(t.substr(8));
      size_t node = t.find(" on node ") + 9;
      p.host = std::string(t.substr(node, t.find(" managing GPU") - node));
      s.report.dead.push_back(std::move(p));
    }
    return true;
  }
  return starts(t, "[could not find information on ") || t == "TIMEOUT" ||
         (starts(t, "Encountered ") && has(t, " communication timeout"));
}

}  // namespace

bool ras_line(std::string_view t, Record& rec) {
  RasTextState& s = rec.st.ras;
  if (starts(t, "NCCL version ") && has(t, " compiled with CUDA ") && !s.report.nccl_version.empty()) return false;
  bool in = false;
  if (t == "Errors" || t == "Warnings") {
    s.section = t == "Errors" ? "errors" : "warnings";
    s.sub.clear();
    s.comm = -1;
    in = true;
  } else if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c == '='; })) {
    in = true;
  } else {
    in = summary_line(t, rec) || process_line(t, rec) || comm_header(t, rec) || group_line(t, rec) ||
         comm_rank_line(t, rec);
  }
  if (in) ++rec.r.records;
  return in;
}

void read_ras(const Hit& hit, Record& rec) {
  end_block(rec.r, rec.st);
  RasTextState& s = rec.st.ras;
  s = RasTextState();
  s.open = true;
  s.report.who = rec.r.who_of(rec.proc);
  rec.st.block = "ras";
  (void)hit;
  if (!ras_line(rec.text, rec)) ++rec.r.records;
}

// The finished report: judged as the JSON form is; counts blocks that cannot be rebuilt go to
// the reported verdicts as RAS printed them.
void ras_finish(LogReader& r, FileState& st) {
  RasTextState& s = st.ras;
  if (!s.open) return;
  std::vector<Reported> legacy;
  for (Finding& f : judge_ras_text(s.report, &legacy)) {
    RasTextFinding x;
    x.finding = std::move(f);
    x.evidence = s.report.evidence;
    r.ras_text.push_back(std::move(x));
  }
  for (Reported& rep : legacy) r.reported.push_back(std::move(rep));
  s = RasTextState();
}

namespace {

// The counts of every rank for one block, when RAS's listing determines them: every group is
// listed rank by rank but at most one, and that one's ranks are exactly those the communicator
// has and nothing else names. False when the listing leaves ranks unknown.
bool rebuild_counts(const RasTextComm& c, const RasTextCounts& k, int size, std::map<int, long long>* out) {
  if (size <= 0 || k.groups.empty()) return false;
  std::map<long long, long long> listed_at;
  std::set<int> named;
  for (const auto& [rank, n] : k.listed) {
    if (rank >= size || !named.insert(rank).second) return false;
    ++listed_at[n];
    (*out)[rank] = n;
  }
  long long unlisted_value = -1, total = 0;
  for (const auto& [value, n] : k.groups) {
    total += n;
    long long got = listed_at.count(value) ? listed_at[value] : 0;
    if (got == n) continue;
    if (got != 0 || unlisted_value >= 0) return false;
    unlisted_value = value;
  }
  for (const auto& m : c.missing)
    if (m.first < size) named.insert(m.first);
  if (total != size - static_cast<long long>(c.missing.size())) return false;
  if (unlisted_value < 0) return true;
  long long filled = 0;
  for (int rank = 0; rank < size; ++rank)
    if (!named.count(rank)) {
      (*out)[rank] = unlisted_value;
      ++filled;
    }
  return filled == k.groups.at(unlisted_value);
}

bool dead_process(const RasTextReport& t, const std::string& host, long long pid) {
  for (const RasDeadProcess& p : t.dead)
    if (p.pid == pid && p.host == host) return true;
  return false;
}

}  // namespace

RasReport ras_text_report(const RasTextReport& t, std::vector<Reported>* legacy) {
  RasReport out;
  out.status = RasReport::Status::ok;
  out.source = t.evidence.empty() ? std::string() : t.evidence.front().file;
  out.nccl_version = t.nccl_version;
  for (const RasTextComm& c : t.comms) {
    RasCommunicator rc;
    rc.hash = c.hash;
    auto sz = t.group_size.find(c.group);
    rc.size = sz == t.group_size.end() ? -1 : sz->second;
    std::map<int, RasRank> ranks = c.ranks;
    for (const RasTextCounts& k : c.counts) {
      std::map<int, long long> counts;
      if (!rebuild_counts(c, k, rc.size, &counts)) {
        legacy->push_back(k.legacy);
        continue;
      }
      for (const auto& [rank, n] : counts) {
        ranks[rank].rank = rank;
        set_ras_count(&out, &ranks[rank], k.op, static_cast<unsigned long long>(std::max<long long>(n, 0)));
      }
    }
    for (auto& [rank, r] : ranks) rc.ranks.push_back(r);
    for (const auto& [rank, m] : c.missing) {
      RasMissingRank x = m;
      x.dead = m.unresponsive && dead_process(t, m.host, m.pid);
      rc.missing.push_back(x);
    }
    out.communicators.push_back(std::move(rc));
  }
  return out;
}

std::vector<Finding> judge_ras_text(const RasTextReport& t, std::vector<Reported>* legacy) {
  std::vector<Finding> out = judge_ras(ras_text_report(t, legacy));
  // Dead processes no communicator's list names: RAS did not print their ranks (too many to
  // list), but the processes themselves are gone.
  std::vector<std::string> hosts, procs;
  for (const RasDeadProcess& p : t.dead) {
    bool named = false;
    for (const RasTextComm& c : t.comms)
      for (const auto& m : c.missing) named = named || (m.second.pid == p.pid && m.second.host == p.host);
    if (named) continue;
    procs.push_back(fmt::format("process {} on node {}", p.pid, p.host));
    hosts.push_back(p.host);
  }
  if (procs.empty()) return out;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  Finding f;
  f.code = FindingCode::ras_rank_dead;
  f.severity = Severity::error;
  f.hosts = hosts;
  f.found = fmt::format("{} dead", fmt::join(procs, ", "));
  f.message = fmt::format("NCCL's RAS considers {} dead (unreachable via the RAS network); the report does not "
                          "list their ranks, and the others wait for them",
                          fmt::join(procs, ", "));
  f.fix = "read those processes' own logs for why they ended (a crash, the OOM killer, a node failure)";
  out.push_back(std::move(f));
  return out;
}

}  // namespace denpex::evidence
