#include "collect/nccl_log.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "collect/bounded_line.h"

namespace denpex {

namespace {

// What launcher prefixes said about the line's process.
struct Prefix {
  int rank = -1;
  long long pid = -1;
};

// The prefixes are tried repeatedly at the start of a record, in any order, because launchers
// stack them (Ray around srun, timestamps around everything).
struct PrefixRules {
  std::regex space{R"(^\s+)"};
  std::regex timestamp{R"(^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?:?)"};
  std::regex clock{R"(^\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s)"};
  std::regex torchrun_rank{R"(^\[rank(\d+)\]:)"};
  std::regex ompi_tag{R"(^\[\d+,(\d+)\]<\w+>:)"};
  std::regex srun_label{R"(^(\d+): )"};
  std::regex ray{R"(^\((\w+) pid=(\d+)(?:, ip=[0-9a-fA-F.:]+)?\))"};
  std::regex counter{R"(^\[\d+\]\s)"};  // e.g. a paste tool's line numbers "[80746] "
};

struct RecordRules {
  std::regex record_start{R"((\[rank\d+\]:)|([A-Za-z0-9][A-Za-z0-9._-]*:\d+:\d+ \[\d+\] NCCL ))"};
  std::regex nccl_header{R"(^([A-Za-z0-9][A-Za-z0-9._-]*):(\d+):(\d+) \[(\d+)\] NCCL (?:INFO|WARN|TRACE) (.*)$)"};
  std::regex coll{
      R"(^(\w+): opCount ([0-9a-fA-F]+) sendbuff (\S+) recvbuff (\S+) count (-?\d+) datatype (\d+) op (\d+) root (-?\d+) comm (\S+) \[nranks=(\d+)\])"};
  std::regex init{
      R"(^(?:(\w+) )?comm (\S+) rank (\d+) nranks (\d+) cudaDev (-?\d+)(?: nvmlDev (-?\d+))? busId ([0-9a-fA-F]+)(?: commId 0x([0-9a-fA-F]+)| parent (\S+) splitCount (\d+) color (-?\d+) key (-?\d+))? - Init COMPLETE)"};
  std::regex work{R"(WorkNCCL\(SeqNum=(\d+), OpType=(\w+), NumelIn=(-?\d+), NumelOut=(-?\d+))"};
  std::regex enqueued{R"(last enqueued (?:NCCL )?work: (-?\d+), last completed (?:NCCL )?work: (-?\d+))"};
  std::regex pg_rank{R"(\[(?:PG (?:ID \d+ PG GUID )?(\S+?) )?Rank (\d+)\])"};
};

std::string strip_prefixes(const std::string& text, const PrefixRules& r, Prefix* p) {
  std::string s = text;
  std::smatch m;
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    if (std::regex_search(s, m, r.torchrun_rank) || std::regex_search(s, m, r.ompi_tag) ||
        std::regex_search(s, m, r.srun_label)) {
      p->rank = std::stoi(m[1].str());
    } else if (std::regex_search(s, m, r.ray)) {
      p->pid = std::stoll(m[2].str());
    } else if (!std::regex_search(s, m, r.space) && !std::regex_search(s, m, r.timestamp) &&
               !std::regex_search(s, m, r.clock) && !std::regex_search(s, m, r.counter)) {
      break;
    }
    s = m.suffix().str();
    changed = true;
  }
  return s;
}

struct Segment {
  std::string text;  // prefixes included
  bool glued = false;
};

// Splits a physical line where a second record starts (two processes writing to one terminal).
// A record start directly after nothing but prefixes belongs to the same record.
std::vector<Segment> split_glued(const std::string& line, const RecordRules& rr, const PrefixRules& pr) {
  std::vector<Segment> out;
  size_t cur = 0;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), rr.record_start); it != std::sregex_iterator(); ++it) {
    size_t at = static_cast<size_t>(it->position(0));
    if (at == cur) continue;
    Prefix ignored;
    if (strip_prefixes(line.substr(cur, at - cur), pr, &ignored).empty()) continue;
    out.push_back(Segment{line.substr(cur, at - cur), !out.empty() || cur > 0});
    cur = at;
  }
  out.push_back(Segment{line.substr(cur), cur > 0});
  return out;
}

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

struct Process {
  int global_rank = -1;
  std::map<std::string, size_t> comms;       // comm pointer -> sequences index, as of now
  std::map<std::string, std::string> ids;    // comm pointer -> cross-rank identity, as of now
  std::map<int, int> unidentified_inits;     // nranks -> how many inits without commId so far
};

struct WatchdogKey {
  int launcher_rank;
  int pg_rank;
  bool operator<(const WatchdogKey& o) const {
    return std::tie(launcher_rank, pg_rank) < std::tie(o.launcher_rank, o.pg_rank);
  }
};

class LogParser {
 public:
  explicit LogParser(const std::string& path) { in_.path = path; in_.format = "log"; }

  void line(long long no, const std::string& raw) {
    for (const Segment& seg : split_glued(raw, rr_, pr_)) record(no, seg);
  }

  CollectiveInput finish() {
    for (size_t i = 0; i < in_.sequences.size(); ++i)
      in_.sequences[i].global_rank = procs_[seq_proc_[i]].global_rank;
    std::set<std::string> named;
    for (auto& kv : watchdog_)
      if (!kv.second.group.empty()) named.insert(kv.second.group);
    for (auto& kv : watchdog_) {
      // The timeout line names only the rank; the group comes from a later line of the same rank,
      // or, failing that, from the only group this log names.
      if (kv.second.group.empty()) kv.second.group = named.size() == 1 ? *named.begin() : "default";
      in_.watchdog.push_back(kv.second);
    }
    in_.hosts.assign(hosts_.begin(), hosts_.end());
    return std::move(in_);
  }

 private:
  void record(long long no, const Segment& seg) {
    Prefix pre;
    std::string t = strip_prefixes(seg.text, pr_, &pre);
    std::smatch m;
    if (std::regex_search(t, m, rr_.nccl_header)) {
      std::string host = m[1].str();
      if (seg.glued) host = known_host(host);
      hosts_.insert(host);
      std::string proc = fmt::format("{}:{}", host, m[2].str());
      Process& p = procs_[proc];
      if (pre.rank >= 0) p.global_rank = pre.rank;
      nccl_body(no, t, m[5].str(), host, std::stoll(m[2].str()), proc);
    } else if (contains(t, "NCCL INFO") && (contains(t, "opCount") || contains(t, "Init COMPLETE"))) {
      note_unreadable(&in_, no, seg.text);
    } else if (contains(t, "WorkNCCL(") || contains(t, "last enqueued")) {
      watchdog_line(no, t, seg.text, pre);
    }
  }

  // A glued line's host is read from the middle of the previous record's last token (typically
  // "stream 0x55d0" + "node1"): prefer the longest host already seen that ends the candidate.
  std::string known_host(const std::string& candidate) const {
    if (hosts_.count(candidate)) return candidate;
    std::string best;
    for (const auto& h : hosts_)
      if (h.size() > best.size() && candidate.size() > h.size() &&
          candidate.compare(candidate.size() - h.size(), h.size(), h) == 0)
        best = h;
    return best.empty() ? candidate : best;
  }

  void nccl_body(long long no, const std::string& whole, const std::string& body, const std::string& host,
                 long long pid, const std::string& proc) {
    std::smatch m;
    Process& p = procs_[proc];
    if (contains(body, " opCount ")) {
      if (!std::regex_search(body, m, rr_.coll)) return note_unreadable(&in_, no, whole);
      std::string ptr = m[9].str();
      auto it = p.comms.find(ptr);
      if (it == p.comms.end()) {
        ++in_.unattributed_calls;
        return;
      }
      CollectiveCall c;
      c.op_name = m[1].str();
      c.kind = parse_coll_kind(c.op_name);
      c.count = std::stoull(m[5].str());
      c.datatype = std::stoi(m[6].str());
      int op = std::stoi(m[7].str()), root = std::stoi(m[8].str());
      bool p2p = c.kind == CollKind::send || c.kind == CollKind::recv;
      bool reduction = c.kind == CollKind::all_reduce || c.kind == CollKind::reduce ||
                       c.kind == CollKind::reduce_scatter || c.kind == CollKind::unknown;
      bool rooted = c.kind == CollKind::broadcast || c.kind == CollKind::reduce || c.kind == CollKind::unknown;
      // NCCL prints op and root for every call; they only mean something for some (Send/Recv
      // print the peer as root).
      c.redop = reduction ? op : -1;
      c.root = rooted ? root : -1;
      c.peer = p2p ? root : -1;
      c.trace_seq = no;
      in_.sequences[it->second].calls.push_back(c);
      ++in_.used;
    } else if (contains(body, "Init COMPLETE")) {
      if (!std::regex_search(body, m, rr_.init)) return note_unreadable(&in_, no, whole);
      std::string ptr = m[2].str();
      int rank = std::stoi(m[3].str()), nranks = std::stoi(m[4].str());
      std::string id;
      if (m[8].matched) {
        id = "0x" + m[8].str();
      } else if (m[9].matched) {
        auto parent = p.ids.find(m[9].str());
        if (parent == p.ids.end()) {
          // The parent's init is not in this log: the split cannot be identified across ranks.
          p.comms.erase(ptr);
          return note_unreadable(&in_, no, whole);
        }
        id = fmt::format("{}/split{}/color{}", parent->second, m[10].str(), m[11].str());
      } else {
        // Releases before commId was printed: assume communicators of one size are created in the
        // same order on every rank (true for the usual world-then-subgroups set-up).
        id = fmt::format("nranks{}#{}", nranks, p.unidentified_inits[nranks]++);
      }
      CommSequence s;
      s.comm = id;
      s.rank = rank;
      s.nranks = nranks;
      s.host = host;
      s.pid = pid;
      s.source = in_.path;
      p.ids[ptr] = id;
      p.comms[ptr] = in_.sequences.size();
      in_.sequences.push_back(std::move(s));
      seq_proc_.push_back(proc);
      ++in_.used;
    }
  }

  void watchdog_line(long long no, const std::string& t, const std::string& whole, const Prefix& pre) {
    std::smatch m;
    std::smatch who;
    bool has_who = std::regex_search(t, who, rr_.pg_rank);
    int pg_rank = has_who ? std::stoi(who[2].str()) : pre.rank;
    WatchdogKey key{pre.rank, pg_rank};
    if (std::regex_search(t, m, rr_.work)) {
      WatchdogState& s = state(key, pre);
      if (s.seq < 0) {
        s.seq = std::stoll(m[1].str());
        s.op_type = m[2].str();
        s.numel_in = std::stoll(m[3].str());
        s.numel_out = std::stoll(m[4].str());
      }
    } else if (std::regex_search(t, m, rr_.enqueued)) {
      WatchdogState& s = state(key, pre);
      s.last_enqueued = std::stoll(m[1].str());
      s.last_completed = std::stoll(m[2].str());
    } else {
      return note_unreadable(&in_, no, whole);
    }
    if (has_who && who[1].matched) state(key, pre).group = "pg " + who[1].str();
    ++in_.used;
  }

  WatchdogState& state(const WatchdogKey& key, const Prefix& pre) {
    auto it = watchdog_.find(key);
    if (it == watchdog_.end()) {
      WatchdogState s;
      s.rank = key.pg_rank;
      s.global_rank = pre.rank;
      s.source = in_.path;
      it = watchdog_.emplace(key, s).first;
    }
    return it->second;
  }

  // Compiled once per process, not per log: building the ~26 std::regex took ~40 ms, which
  // made the fuzz target (fuzz/fuzz_nccl_log, issue 6) run 20 inputs a second.
  static const PrefixRules& prefix_rules() {
    static const PrefixRules rules;
    return rules;
  }
  static const RecordRules& record_rules() {
    static const RecordRules rules;
    return rules;
  }
  const PrefixRules& pr_ = prefix_rules();
  const RecordRules& rr_ = record_rules();
  CollectiveInput in_;
  std::map<std::string, Process> procs_;
  std::vector<std::string> seq_proc_;  // sequences[i] belongs to procs_[seq_proc_[i]]
  std::set<std::string> hosts_;
  std::map<WatchdogKey, WatchdogState> watchdog_;
};

}  // namespace

CollectiveInput parse_nccl_log(const std::string& path, std::istream& in) {
  LogParser parser(path);
  std::string line;
  long long no = 0;
  bool cut = false;
  // Bounded lines (hostile-input fix, issue 6): see kMaxInputLine. A line that long is no NCCL
  // or PyTorch record; it is skipped like any other line that is not one.
  while (get_bounded_line(in, &line, &cut)) {
    ++no;
    if (cut) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    parser.line(no, line);
  }
  CollectiveInput out = parser.finish();
  out.lines = no;
  return out;
}

CollectiveInput read_nccl_log(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    CollectiveInput in;
    in.path = path;
    in.format = "log";
    in.status = CollectiveInput::Status::missing;
    in.error = "cannot open file";
    return in;
  }
  return parse_nccl_log(path, f);
}

}  // namespace denpex
