#include "diagnose/log_reader.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "probe/record.h"

namespace denpex::diag {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

size_t find(std::string_view s, std::string_view lit, size_t from = 0) {
  if (from >= s.size()) return std::string_view::npos;
  const void* p = memmem(s.data() + from, s.size() - from, lit.data(), lit.size());
  return p ? static_cast<size_t>(static_cast<const char*>(p) - s.data()) : std::string_view::npos;
}
bool has(std::string_view s, std::string_view lit) { return find(s, lit) != std::string_view::npos; }

// " NCCL " from `from` on: memchr for its 'N' (rare in NCCL and PyTorch records) beats memmem on
// the hot path of a COLL log.
size_t find_nccl(std::string_view s, size_t from = 0) {
  const char* base = s.data();
  const char* end = base + s.size();
  const char* p = base + std::min(from + 1, s.size());
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, 'N', static_cast<size_t>(end - p)));
    if (p == nullptr) return std::string_view::npos;
    if (end - p >= 5 && p[-1] == ' ' && p[1] == 'C' && p[2] == 'C' && p[3] == 'L' && p[4] == ' ')
      return static_cast<size_t>(p - 1 - base);
    ++p;
  }
  return std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The number right after `key` in s (e.g. "SeqNum=" -> 1580); -1 when absent or too large.
long long number_after(std::string_view s, std::string_view key, size_t* where = nullptr) {
  size_t k = find(s, key);
  if (k == std::string_view::npos) return -1;
  long long v;
  size_t n;
  if (!parse_dec(s.substr(k + key.size()), &v, &n)) return -1;
  if (where) *where = k + key.size() + n;
  return v;
}

// The token after `key` up to one of `stops`.
std::string_view token_after(std::string_view s, std::string_view key, std::string_view stops = " ,)") {
  size_t k = find(s, key);
  if (k == std::string_view::npos) return {};
  size_t b = k + key.size(), e = b;
  while (e < s.size() && stops.find(s[e]) == std::string_view::npos) ++e;
  return s.substr(b, e - b);
}

// "{3, 4, 5}" / "[0, 1]" -> ranks (bounded).
std::vector<int> int_list(std::string_view s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size() && out.size() < 4096) {
    if (is_digit(s[i])) {
      long long v;
      size_t n;
      if (parse_dec(s.substr(i), &v, &n) && v < kMaxRank) out.push_back(static_cast<int>(v));
      i += n;
    } else {
      ++i;
    }
  }
  return out;
}

std::string_view cut(std::string_view s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

// An error message as one short line: whole sentences up to about 120 characters.
std::string short_what(std::string_view what) {
  what = trim(what);
  if (what.size() <= 120) return std::string(what);
  size_t cut_at = std::string_view::npos;
  for (size_t i = what.find(". "); i != std::string_view::npos && i < 120; i = what.find(". ", i + 1)) cut_at = i + 1;
  if (cut_at == std::string_view::npos || cut_at < 30) return std::string(what.substr(0, 117)) + "...";
  return std::string(what.substr(0, cut_at));
}

bool looks_like_version(std::string_view v) {
  return v.size() >= 3 && is_digit(v[0]) && v.find('.') != std::string_view::npos;
}

// Errors that follow from someone else's: the peer died, the communicator was torn down, the
// watchdog gave up waiting.
bool collateral_text(std::string_view t) {
  static const std::string_view kWords[] = {
      "Watchdog caught collective operation timeout", "timed out", "Timed out", "timeout",
      "Timeout", "aborted", "Aborted", "abort", "remote process exited", "Connection reset",
      "Connection closed", "closed by remote", "Broken pipe", "ncclRemoteError", "remote peer",
      "DistNetworkError", "Socket Timeout", "heartbeat", "closing signal", "SIGTERM"};
  for (auto w : kWords)
    if (has(t, w)) return true;
  return false;
}

}  // namespace

struct LogReader::FileState {
  std::string name;
  int index = 0;
  long long line_no = 0;
  // A line a terminal wrapped, waiting for its continuation.
  std::string wrapped;
  LineLabel wrapped_label;
  long long wrapped_line = 0;
  bool have_wrapped = false;
  // An NCCL COLL record cut short, waiting for its body on a later line.
  std::string pending_coll;
  LineLabel pending_label;
  long long pending_line = 0;
  int pending_age = 0;
  // NCCL RAS "operation counts" block being read.
  bool in_ras = false;
  Reported ras;
  // fr_trace block being read.
  bool in_fr = false;
  Reported fr;
  // torchrun summary being read.
  bool in_torchrun = false;
  bool root_cause = false;
  bool have_entry = false;
  LauncherEntry entry;
  // The last process a labelled line came from: a traceback's later lines carry no label.
  int last_proc = -1;
};

LogReader::LogReader() = default;

Evidence LogReader::evidence(const FileState& st, std::string_view text) const {
  return Evidence{st.name, st.line_no, std::string(cut(trim(text), kEvidenceChars))};
}

void LogReader::bad(const FileState& st, std::string_view text) {
  ++unreadable.count;
  if (unreadable.samples.size() < kMaxSamples) unreadable.samples.push_back(evidence(st, text));
}

Who LogReader::who_of(int proc) const {
  Who w;
  w.index = proc;
  if (proc >= 0 && static_cast<size_t>(proc) < processes.size()) {
    const Process& p = processes[static_cast<size_t>(proc)];
    w.rank = p.rank;
    w.host = p.host;
    w.proc = p.key;
  }
  return w;
}

int LogReader::process_for(const LineLabel& lab, std::string_view host, long long pid) {
  // The process key: the launcher's rank label, else Ray's worker, else NCCL's host:pid, else
  // srun's task, else the file.
  std::string key;
  std::string header = host.empty() ? std::string() : fmt::format("{}:{}", host, pid);
  if (lab.rank >= 0) key = fmt::format("rank {}", lab.rank);
  else if (!lab.worker.empty()) key = lab.worker;
  else if (!header.empty()) key = header;
  else if (lab.task >= 0) key = lab.host.empty() ? fmt::format("task {}", lab.task) : fmt::format("{} task {}", lab.host, lab.task);
  else return -1;
  auto it = proc_index_.find(key);
  int idx;
  if (it == proc_index_.end()) {
    idx = static_cast<int>(processes.size());
    Process p;
    p.key = key;
    if (lab.rank >= 0) {
      p.rank = lab.rank;
      p.rank_weak = false;
    }
    processes.push_back(p);
    proc_index_.emplace(key, idx);
  } else {
    idx = it->second;
  }
  if (lab.task >= 0) {
    if (lab.rank >= 0 && lab.rank != lab.task) tasks_are_nodes_ = true;
    if (!header.empty() && task_procs_.size() < 100000) task_procs_[lab.task].insert(idx);
  }
  Process& p = processes[static_cast<size_t>(idx)];
  if (!host.empty() && (p.host.empty() || !lab.worker.empty())) p.host = std::string(host);
  else if (p.host.empty() && !lab.host.empty()) p.host = lab.host;
  if (pid >= 0 && p.pid < 0) p.pid = pid;
  // The same process under its NCCL header name: lines without the launcher label (or from
  // another file) find it by host:pid.
  if (!header.empty() && key != header) {
    auto h = proc_index_.find(header);
    if (h == proc_index_.end()) proc_index_.emplace(header, idx);
    else if (h->second != idx && lab.rank >= 0) {
      Process& other = processes[static_cast<size_t>(h->second)];
      if (other.rank < 0 || other.rank_weak) {
        other.rank = lab.rank;
        other.rank_weak = false;
      }
    }
  }
  return idx;
}

bool LogReader::read(std::FILE* in, const std::string& name, std::string* error) {
  FileState st;
  st.name = name;
  st.index = static_cast<int>(files.size());
  files.push_back(name);
  file_index_ = st.index;
  std::vector<char> buf(1 << 20);
  std::string line;
  bool cut_line = false;
  for (;;) {
    size_t n = std::fread(buf.data(), 1, buf.size(), in);
    if (n == 0) break;
    size_t i = 0;
    while (i < n) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data() + i, '\n', n - i));
      size_t end = nl ? static_cast<size_t>(nl - buf.data()) : n;
      if (!cut_line) {
        size_t take = std::min(end - i, kMaxLine - std::min(kMaxLine, line.size()));
        line.append(buf.data() + i, take);
        if (take < end - i) cut_line = true;
      }
      if (!nl) break;
      ++st.line_no;
      ++lines;
      if (cut_line) {
        // A line longer than any record: what was kept is read, the rest was skipped.
        bad(st, fmt::format("line longer than {} KiB cut: {}", kMaxLine / 1024, cut(line, 120)));
      }
      this->line(&line, st);
      line.clear();
      cut_line = false;
      i = end + 1;
    }
  }
  if (std::ferror(in)) {
    *error = "read error";
    return false;
  }
  if (!line.empty() || cut_line) {
    ++st.line_no;
    ++lines;
    if (cut_line) bad(st, fmt::format("line longer than {} KiB cut: {}", kMaxLine / 1024, cut(line, 120)));
    this->line(&line, st);
  }
  // End of input: whatever waits for a continuation is read as it is.
  std::string flush;
  this->line(&flush, st);
  if (st.in_fr) {
    reported.push_back(st.fr);
    st.in_fr = false;
  }
  if (st.have_entry) launcher.push_back(st.entry);
  if (st.in_ras) reported.push_back(st.ras);
  if (!st.pending_coll.empty()) bad(st, st.pending_coll);
  return true;
}

void LogReader::read_text(const std::string& text, const std::string& name) {
  std::FILE* f = fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  if (f == nullptr) {
    // fmemopen refuses empty buffers on some libcs: nothing to read.
    files.push_back(name);
    return;
  }
  std::string error;
  read(f, name, &error);
  std::fclose(f);
}

void LogReader::line(std::string* raw, FileState& st) {
  bool at_end = raw->empty() && st.line_no > 0 && false;
  (void)at_end;
  LineLabel lab;
  std::string_view text = repair_line(raw, &lab);
  if (st.have_wrapped) {
    // The previous line was cut by the terminal: this one continues it when it starts with the
    // rest of the record (indented, no record marker of its own).
    std::string_view t = text;
    bool continues = !raw->empty() && (is_space((*raw)[0]) || !t.empty()) && !has(t, "NCCL INFO") &&
                     !has(t, "NCCL WARN") && !has(t, "WorkNCCL(") && !t.empty() &&
                     (is_space((*raw)[0]) || is_digit(t[0]));
    std::string joined = std::move(st.wrapped);
    LineLabel jl = st.wrapped_label;
    long long jline = st.wrapped_line;
    st.have_wrapped = false;
    st.wrapped.clear();
    long long here = st.line_no;
    if (continues) {
      // The wrap marker took the place of the last character before it: complete a COLL key cut
      // short ("coun" -> "count").
      size_t sp = joined.rfind(' ');
      std::string_view last = sp == std::string::npos ? std::string_view() : std::string_view(joined).substr(sp + 1);
      for (std::string_view key : {"opCount", "sendbuff", "recvbuff", "count", "datatype", "root", "comm", "stream"})
        if (!last.empty() && last.size() < key.size() && starts(key, last)) {
          joined.resize(sp + 1);
          joined.append(key);
          break;
        }
      joined.append(" ");
      joined.append(trim(t));
      st.line_no = jline;
      jl.wrapped = lab.wrapped;
      if (lab.wrapped) {
        st.wrapped = joined;
        st.wrapped_label = jl;
        st.wrapped_line = jline;
        st.have_wrapped = true;
        st.line_no = here;
        return;
      }
      segment(joined, jl, st, joined);
      st.line_no = here;
      return;
    }
    st.line_no = jline;
    segment(joined, jl, st, joined);
    st.line_no = here;
  }
  if (lab.wrapped) {
    st.wrapped.assign(text.data(), text.size());
    st.wrapped_label = lab;
    st.wrapped_line = st.line_no;
    st.have_wrapped = true;
    return;
  }
  if (text.empty()) {
    if (st.in_fr) {
      reported.push_back(st.fr);
      st.in_fr = false;
    }
    return;
  }
  segment(text, lab, st, text);
}

// Splits a line into records: NCCL headers ("host:pid:tid [dev] NCCL INFO") may be glued onto
// another process's output or onto each other.
void LogReader::segment(std::string_view text, const LineLabel& lab, FileState& st, std::string_view whole) {
  (void)whole;
  // Records start at "host:pid:tid [dev] NCCL INFO" (or "... [dev] file.cc:77 NCCL WARN", the
  // older form); they may be glued onto another process's output or onto each other.
  size_t k = find_nccl(text);
  if (k == std::string_view::npos) {
    other_records(text, lab, st);
    return;
  }
  // Record starts; more than a few glued records on one line are read as the last one's text.
  size_t starts_buf[16];
  size_t nstarts = 0;
  while (k != std::string_view::npos) {
    std::string_view level = text.substr(k + 6, 5);
    size_t close = std::string_view::npos;
    if (level == "INFO " || level == "WARN " || starts(level, "INFO") || starts(level, "WARN") || starts(level, "ERROR")) {
      if (k > 0 && text[k - 1] == ']') {
        close = k - 1;
      } else {
        // "[4] bootstrap.cc:77 NCCL WARN": skip the source location.
        size_t sp = text.rfind(' ', k - 1);
        if (sp != std::string_view::npos && sp > 0 && text[sp - 1] == ']' && k - sp < 64) close = sp - 1;
      }
    }
    size_t b = std::string_view::npos;
    size_t open = close == std::string_view::npos ? std::string_view::npos : text.rfind('[', close);
    if (open != std::string_view::npos && close - open <= 6 && open >= 2 && text[open - 1] == ' ') {
      size_t e = open - 1, s0 = e;
      int colons = 0;
      while (s0 > 0 && !is_space(text[s0 - 1]) && e - s0 < 256) {
        if (text[s0 - 1] == ':') ++colons;
        --s0;
      }
      if (colons >= 2) {
        // A glued header starts right after the other record's last character: take the
        // longest host-like run (letters, digits, '-', '.', '_') before the first ':'.
        std::string_view tok = text.substr(s0, e - s0);
        size_t h = tok.find(':');
        while (h > 0) {
          char c = tok[h - 1];
          if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) break;
          --h;
        }
        b = s0 + h;
      }
    }
    if (b != std::string_view::npos && (nstarts == 0 || b > starts_buf[nstarts - 1]) && nstarts < 16) starts_buf[nstarts++] = b;
    k = find_nccl(text, k + 6);
  }
  if (nstarts == 0) {
    other_records(text, lab, st);
    return;
  }
  std::string_view head = trim(text.substr(0, starts_buf[0]));
  if (!head.empty()) other_records(head, lab, st);
  for (size_t i = 0; i < nstarts; ++i) {
    size_t e = i + 1 < nstarts ? starts_buf[i + 1] : text.size();
    nccl_record(text.substr(starts_buf[i], e - starts_buf[i]), lab, st);
  }
}

void LogReader::nccl_record(std::string_view rec, const LineLabel& lab, FileState& st) {
  // The header ends at " [dev]"; the level follows (after an optional "file.cc:77").
  size_t open = rec.find(" [");
  size_t k = find_nccl(rec);
  if (open == std::string_view::npos || k == std::string_view::npos || open > k) {
    bad(st, rec);
    return;
  }
  std::string_view hdr = rec.substr(0, open);
  size_t c2 = hdr.rfind(':');
  size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : hdr.rfind(':', c2 - 1);
  std::string_view host;
  long long pid = -1;
  if (c1 != std::string_view::npos) {
    host = hdr.substr(0, c1);
    size_t n;
    if (!parse_dec(hdr.substr(c1 + 1), &pid, &n)) pid = -1;
  }
  int proc;
  if (lab.worker.empty() && lab.rank < 0 && lab.task < 0 && lab.host.empty()) {
    hdr_key_.assign(hdr.data(), hdr.size());
    auto it = hdr_proc_.find(hdr_key_);
    if (it != hdr_proc_.end()) {
      proc = it->second;
    } else {
      proc = process_for(lab, host, pid);
      if (hdr_proc_.size() < 100000) hdr_proc_.emplace(hdr_key_, proc);
    }
  } else {
    proc = process_for(lab, host, pid);
  }
  st.last_proc = proc;
  std::string_view level_body = rec.substr(k + 6);  // "INFO ..." / "WARN ..."
  bool warn = starts(level_body, "WARN");
  size_t sp = level_body.find(' ');
  std::string_view body = sp == std::string_view::npos ? std::string_view() : level_body.substr(sp + 1);

  // COLL: "AllReduce: opCount 1a sendbuff ... count N datatype D op O root R comm 0x.. [nranks=N] stream"
  size_t colon = body.find(": opCount ");
  if (colon == std::string_view::npos && !body.empty() && std::isupper(static_cast<unsigned char>(body[0]))) {
    size_t c = body.find(':');
    if (c != std::string_view::npos && c < 20 && has(body, " count ") && has(body, " datatype ")) colon = c;
  }
  if (!warn && colon != std::string_view::npos && colon < 24) {
    std::string_view name = body.substr(0, colon);
    CollCall call;
    call.kind = parse_coll_kind(std::string(name));
    call.file = st.index;
    call.line = st.line_no;
    std::string_view f = body.substr(colon + 1);
    unsigned long long comm_ptr = 0;
    bool have_count = false, have_dtype = false, have_comm = false;
    long long nranks = -1;
    size_t i = 0;
    bool broken = false;
    while (i < f.size()) {
      while (i < f.size() && f[i] == ' ') ++i;
      size_t ke = i;
      while (ke < f.size() && f[ke] != ' ') ++ke;
      std::string_view key = f.substr(i, ke - i);
      size_t vb = ke + 1, ve = vb;
      while (ve < f.size() && f[ve] != ' ') ++ve;
      std::string_view val = vb < f.size() ? f.substr(vb, ve - vb) : std::string_view();
      long long v;
      unsigned long long u;
      size_t n;
      if (starts(key, "[nranks=")) {
        if (!parse_dec(key.substr(8), &nranks, &n) || nranks >= kMaxRank) broken = true;
        i = ke;
        continue;
      }
      if (key == "opCount") {
        if (parse_hex(val, &u, &n) && u < (1ULL << 62)) call.pos = static_cast<long long>(u);
        else broken = true;
      } else if (key == "count") {
        if (parse_dec(val, &v, &n)) { call.count = static_cast<unsigned long long>(v); have_count = true; }
        else broken = true;
      } else if (key == "datatype") {
        if (parse_dec(val, &v, &n) && v < 64) { call.datatype = static_cast<int>(v); have_dtype = true; }
        else broken = true;
      } else if (key == "op") {
        if (parse_dec(val, &v, &n) && v < (1LL << 30)) call.redop = static_cast<int>(v);
      } else if (key == "root") {
        if (parse_dec(val, &v, &n) && v < kMaxRank) { call.root = static_cast<int>(v); call.peer = call.root; }
      } else if (key == "comm") {
        if (parse_hex(val, &u, &n)) { comm_ptr = u; have_comm = true; }
      } else if (key == "stream") {
        break;
      }
      i = ve;
    }
    if (broken || !have_count || !have_dtype || !have_comm) {
      if (!broken && !have_comm) {
        // The record's body may follow on a later line (a header glued elsewhere).
        if (!st.pending_coll.empty()) bad(st, st.pending_coll);
        st.pending_coll.assign(rec.data(), rec.size());
        st.pending_label = lab;
        st.pending_line = st.line_no;
        st.pending_age = 0;
        return;
      }
      bad(st, rec);
      return;
    }
    ++records;
    ++coll_calls;
    auto key = std::make_pair(proc, comm_ptr);
    auto cached = comm_cache_.find(key);
    if (cached != comm_cache_.end()) {
      stream_.add(cached->second.first, cached->second.second, call);
      return;
    }
    auto it = comm_of_.find(key);
    if (it == comm_of_.end()) {
      auto in = init_.find(key);
      std::string id;
      int rank_in_comm = -1;
      if (in != init_.end() && !in->second.id.empty()) {
        id = in->second.id;
        rank_in_comm = in->second.rank;
      } else {
        // No Init COMPLETE line naming it: matched across ranks by size and order of first use
        // in each process, which is unambiguous only while a process has one such communicator.
        unmatched_comms_ = true;
        int& nth = unnamed_count_[{proc, fmt::format("{}", nranks)}];
        id = nth == 0 ? fmt::format("nranks={}", nranks) : fmt::format("nranks={}#{}", nranks, nth + 1);
        if (nth > 0) ambiguous_comms_ = true;
        ++nth;
        if (in != init_.end()) rank_in_comm = in->second.rank;
      }
      int ci = stream_.comm(id, static_cast<int>(nranks));
      int mi = stream_.member(ci, proc < 0 ? 0 : proc, rank_in_comm);
      it = comm_of_.emplace(key, std::make_pair(ci, mi)).first;
    }
    comm_cache_.emplace(key, it->second);
    stream_.add(it->second.first, it->second.second, call);
    return;
  }

  if (has(body, "Init COMPLETE") || has(body, "Init START")) {
    // "comm 0x.. rank R nranks N cudaDev D [nvmlDev X] [busId B] [commId 0x..] [parent 0x..
    //  splitCount S color C key K] ... - Init COMPLETE"
    unsigned long long ptr = 0;
    size_t n;
    std::string_view cp = token_after(body, "comm ");
    long long rank = number_after(body, " rank ");
    long long nranks = number_after(body, " nranks ");
    if (cp.empty() || !parse_hex(cp, &ptr, &n) || rank < 0 || nranks <= 0 || nranks >= kMaxRank || rank >= nranks) {
      bad(st, rec);
      return;
    }
    ++records;
    Init in;
    in.rank = static_cast<int>(rank);
    in.nranks = static_cast<int>(nranks);
    std::string_view commid = token_after(body, "commId ");
    std::string_view parent = token_after(body, "parent ");
    if (!commid.empty()) in.id = std::string(commid);
    else if (!parent.empty()) in.id = fmt::format("{}/split{}/color{}", parent, number_after(body, "splitCount "), number_after(body, "color "));
    if (has(body, "Init COMPLETE") || !init_.count({proc, ptr})) init_[{proc, ptr}] = in;
    // A line whose process could not be told (proc < 0) names no process to give a rank to.
    if (proc >= 0) {
      auto& w = widest_init_[proc];
      if (in.nranks > w.first) w = {in.nranks, in.rank};
    }
    return;
  }

  if (warn) {
    ++records;
    Reported r;
    r.who = who_of(proc);
    r.evidence = evidence(st, rec);
    if (has(body, "Mismatched collective")) {
      r.kind = Reported::Kind::nccl_mismatch;
      long long a = number_after(body, "around rank ");
      if (a >= 0 && a < kMaxRank) r.ranks.push_back(static_cast<int>(a));
      reported.push_back(r);
      return;
    }
    if (has(body, "Mismatched NCCL version")) {
      // "rank 0 version 22703 rank 1 version 22602": NCCL's own comparison of two ranks.
      r.kind = Reported::Kind::nccl_version;
      size_t at = 0;
      std::string_view rest = body;
      for (int side = 0; side < 2; ++side) {
        size_t w;
        long long rk = number_after(rest, "rank ", &w);
        if (rk < 0) break;
        rest = rest.substr(w);
        std::string_view ver = token_after(rest, "version ");
        long long code;
        size_t n;
        std::string version(ver);
        if (parse_dec(ver, &code, &n) && n == ver.size()) version = nccl_version_from_code(static_cast<int>(std::min<long long>(code, 1 << 30)));
        if (rk < kMaxRank) {
          r.ranks.push_back(static_cast<int>(rk));
          Fact f{Fact::Kind::nccl_version, Who{-1, static_cast<int>(rk), "", fmt::format("rank {}", rk)}, version, "", r.evidence};
          facts.push_back(f);
        }
        (void)at;
      }
      reported.push_back(r);
      return;
    }
    if (has(body, "Message truncated")) {
      r.kind = Reported::Kind::truncated;
      r.detail = std::string(cut(trim(body.substr(find(body, "Message truncated"))), 120));
      reported.push_back(r);
      return;
    }
    if (has(body, "collective mismatch")) {
      r.kind = Reported::Kind::net_mismatch;
      reported.push_back(r);
      return;
    }
    if (failures.size() < kMaxEvents) {
      Failure fl;
      fl.kind = collateral_text(body) ? Failure::Kind::aborted : Failure::Kind::nccl_warn;
      fl.who = who_of(proc);
      fl.what = "NCCL WARN " + short_what(body);
      fl.when = lab.when;
      fl.evidence = r.evidence;
      failures.push_back(fl);
    } else {
      ++events_dropped;
    }
    return;
  }

  // INFO lines with facts.
  Evidence ev;
  auto fact = [&](Fact::Kind kind, std::string a, std::string b) {
    ++records;
    if (facts.size() >= kMaxEvents) {
      ++events_dropped;
      return;
    }
    facts.push_back(Fact{kind, who_of(proc), std::move(a), std::move(b), evidence(st, rec)});
  };
  size_t vpos = find(body, "NCCL version ");
  if (vpos != std::string_view::npos) {
    std::string_view v = token_after(body.substr(vpos), "NCCL version ", " ,)");
    size_t plus = v.find("+cuda");
    std::string version(v.substr(0, plus));
    if (looks_like_version(version)) fact(Fact::Kind::nccl_version, version, plus == std::string_view::npos ? "" : std::string(v.substr(plus + 5)));
    else bad(st, rec);
    return;
  }
  if (has(body, "cudaDriverVersion ")) {
    long long d = number_after(body, "cudaDriverVersion ");
    if (d > 0 && d < 1000000) fact(Fact::Kind::driver_cuda, fmt::format("{}.{}", d / 1000, d % 1000 / 10), "");
    else bad(st, rec);
    return;
  }
  if (has(body, "NET/Plugin") || has(body, "Plugin Path")) {
    if (has(body, "Could not find") || has(body, "No plugin found") || has(body, "internal network plugin") ||
        has(body, "dlerror")) {
      fact(Fact::Kind::plugin_missing, std::string(cut(trim(body), 160)), "");
    } else if (has(body, "Plugin Path")) {
      size_t c = body.find(':', find(body, "Plugin Path"));
      fact(Fact::Kind::plugin_loaded, std::string(trim(body.substr(c == std::string_view::npos ? body.size() : c + 1))), "");
    } else if (has(body, "Loaded net plugin")) {
      std::string_view rest = trim(body.substr(find(body, "Loaded net plugin") + 17));
      std::string api;
      size_t vp = rest.rfind("(v");
      if (vp != std::string_view::npos) {
        long long v = number_after(rest.substr(vp), "(v");
        if (v > 0 && v < 100) api = fmt::format("ncclNetPlugin_v{}", v);
        rest = trim(rest.substr(0, vp));
      }
      fact(Fact::Kind::plugin_loaded, std::string(rest), api);
    }
    return;
  }
  size_t env = find(body, " set by environment to ");
  if (env != std::string_view::npos) {
    std::string_view name = trim(body.substr(0, env));
    size_t sp2 = name.rfind(' ');
    if (sp2 != std::string_view::npos) name = name.substr(sp2 + 1);
    std::string_view value = trim(body.substr(env + 23));
    if (!value.empty() && value.back() == '.') value.remove_suffix(1);
    if (starts(name, "NCCL_")) fact(Fact::Kind::nccl_env, std::string(name), std::string(value));
    return;
  }
  if (has(body, "Abort COMPLETE") || has(body, "comm abort")) return;
  // Other INFO lines say nothing we judge (channels, rings, "-> 3" error traces).
  if (!st.pending_coll.empty() && ++st.pending_age > 8) {
    bad(st, st.pending_coll);
    st.pending_coll.clear();
  }
}

// fr_trace and torchrun summaries span lines: returns true when the line belonged to a block.
bool LogReader::block_line(std::string_view t, const LineLabel& lab, FileState& st) {
  (void)lab;
  // Flight Recorder analyser (tools/flight_recorder, fr_trace).
  long long seq = -1;
  bool new_block = false;
  Reported::Kind kind = Reported::Kind::fr_errors;
  if (starts(t, "Collective sequence number:") && has(t, "has errors")) {
    seq = number_after(t, "number: ");
    new_block = true;
  } else if (starts(t, "Collective ") && has(t, " errors") && has(t, " at entry ")) {
    seq = number_after(t, "Collective ");
    new_block = true;
  } else if (starts(t, "Not all ranks joining collective")) {
    seq = number_after(t, "sequence number: ");
    if (seq < 0) seq = number_after(t, "collective ");
    kind = Reported::Kind::fr_missing_ranks;
    new_block = true;
  }
  if (new_block) {
    if (st.in_fr) reported.push_back(st.fr);
    st.fr = Reported();
    st.fr.kind = kind;
    st.fr.seq = seq;
    st.fr.evidence = evidence(st, t);
    st.in_fr = true;
    ++records;
    return true;
  }
  if (st.in_fr) {
    auto field = [&](std::string_view key) -> std::string_view {
      return starts(t, key) ? trim(t.substr(key.size())) : std::string_view();
    };
    std::string_view v;
    if (!(v = field("group info:")).empty()) st.fr.group = std::string(v);
    else if (!(v = field("collective:")).empty()) st.fr.op = std::string(v);
    else if (!(v = field("missing ranks:")).empty()) st.fr.ranks = int_list(v);
    else if (!(v = field("world size:")).empty()) {
      long long w;
      size_t n;
      if (parse_dec(v, &w, &n) && w < kMaxRank) st.fr.world = static_cast<int>(w);
    } else if (!(v = field("input sizes:")).empty()) {
      if (st.fr.detail.empty()) st.fr.detail = fmt::format("input sizes {}", cut(v, 80));
    } else if (starts(t, "Culprit rank")) {
      long long r = number_after(t, "Culprit rank ");
      if (r >= 0 && r < kMaxRank) st.fr.ranks.push_back(static_cast<int>(r));
      std::string_view et = token_after(t, "Error type: ", ",;");
      if (!et.empty()) st.fr.detail = fmt::format("{}: {}", et, cut(trim(t.substr(find(t, "Error type: ") + 12)), 160));
    } else if (starts(t, "error msg:")) {
      std::vector<int> culprits;
      size_t at = 0;
      while ((at = find(t, "Culprit rank ", at)) != std::string_view::npos) {
        long long r = number_after(t.substr(at), "Culprit rank ");
        if (r >= 0 && r < kMaxRank) st.fr.ranks.push_back(static_cast<int>(r));
        at += 13;
      }
    }
    // Other fields (output sizes, expected ranks, state, stack) are part of the block.
    return true;
  }

  // torchrun's ChildFailedError summary.
  if (starts(t, "Failures:") || starts(t, "Root Cause (first observed failure)")) {
    if (st.have_entry) launcher.push_back(st.entry);
    st.have_entry = false;
    st.in_torchrun = true;
    st.root_cause = starts(t, "Root Cause");
    return true;
  }
  if (st.in_torchrun) {
    if (starts(t, "[") && t.size() <= 8 && t.back() == ':') {
      if (st.have_entry) launcher.push_back(st.entry);
      st.entry = LauncherEntry();
      st.entry.root_cause = st.root_cause;
      st.entry.evidence = evidence(st, t);
      st.have_entry = true;
      return true;
    }
    if (starts(t, "---") || starts(t, "===")) {
      if (st.have_entry) launcher.push_back(st.entry);
      st.have_entry = false;
      if (starts(t, "===")) st.in_torchrun = false;
      return true;
    }
    size_t c = t.find(':');
    if (st.have_entry && c != std::string_view::npos) {
      std::string_view key = trim(t.substr(0, c));
      std::string_view val = trim(t.substr(c + 1));
      ++records;
      if (key == "time") {
        parse_timestamp(val, &st.entry.when);
      } else if (key == "host") {
        st.entry.host = std::string(cut(val, 128));
      } else if (key == "rank") {
        long long r;
        size_t n;
        if (parse_dec(val, &r, &n) && r < kMaxRank) st.entry.rank = static_cast<int>(r);
        st.entry.evidence.text += std::string(" ") + std::string(cut(t, 80));
      } else if (key == "exitcode") {
        std::string_view code = token_after(t, ": ", " ");
        st.entry.exitcode = std::string(trim(code));
        st.entry.evidence.text += std::string(" ") + std::string(cut(t, 80));
      } else if (key == "traceback") {
        size_t s = find(val, "(SIG");
        if (s != std::string_view::npos) st.entry.signal = std::string(token_after(val.substr(s), "(", ")"));
      }
      return true;
    }
    if (t.find("<NO_OTHER_FAILURES>") != std::string_view::npos) return true;
  }
  return false;
}

void LogReader::other_records(std::string_view t, const LineLabel& lab, FileState& st) {
  t = trim(t);
  if (t.empty()) return;
  if (block_line(t, lab, st)) return;
  if (!st.pending_coll.empty()) {
    // A COLL header waiting for its body: this line may be it.
    if (has(t, " datatype ") || has(t, " comm 0x")) {
      std::string joined = st.pending_coll + " " + std::string(t);
      st.pending_coll.clear();
      long long here = st.line_no;
      st.line_no = st.pending_line;
      nccl_record(joined, st.pending_label, st);
      st.line_no = here;
      return;
    }
    if (++st.pending_age > 8) {
      bad(st, st.pending_coll);
      st.pending_coll.clear();
    }
  }

  int proc = process_for(lab, {}, -1);
  bool watchdog_line = has(t, "WorkNCCL(") || has(t, "last enqueued") || has(t, "Timeout at NCCL work:");
  if (proc < 0 && watchdog_line) {
    // No launcher label: the line's own "[Rank r]" (old format: the rank of a one-group job) or
    // "[PG i Rank r]" (the rank in group i) names the process.
    size_t tag = find(t, "[PG ");
    size_t rk = find(t, "[Rank ");
    long long r = -1;
    std::string key;
    if (tag != std::string_view::npos) {
      size_t close = t.find(']', tag);
      std::string_view inside = t.substr(tag + 1, close == std::string_view::npos ? 0 : close - tag - 1);
      size_t rr = find(inside, " Rank ");
      if (rr != std::string_view::npos) r = number_after(inside.substr(rr), " Rank ");
      bool world = starts(inside, "PG 0 ") || has(inside, "default_pg") || starts(inside, "PG ID 0 ");
      if (r >= 0 && r < kMaxRank) key = world ? fmt::format("rank {}", r) : fmt::format("{} rank {}", inside.substr(0, rr), r);
    } else if (rk != std::string_view::npos) {
      r = number_after(t.substr(rk), "[Rank ");
      if (r >= 0 && r < kMaxRank) key = fmt::format("rank {}", r);
    }
    if (!key.empty()) {
      auto it = proc_index_.find(key);
      if (it == proc_index_.end()) {
        proc = static_cast<int>(processes.size());
        Process p;
        p.key = key;
        if (starts(key, "rank ")) p.rank = static_cast<int>(r);
        processes.push_back(p);
        proc_index_.emplace(key, proc);
      } else {
        proc = it->second;
      }
    }
  }
  if (proc < 0) {
    // Traceback lines carry no label: they belong to whoever printed the lines before, or to
    // the file itself.
    proc = st.last_proc;
    if (proc < 0) {
      LineLabel file_label;
      std::string key = fmt::format("file {}", st.name);
      auto it = proc_index_.find(key);
      if (it == proc_index_.end()) {
        proc = static_cast<int>(processes.size());
        Process p;
        p.key = key;
        processes.push_back(p);
        proc_index_.emplace(key, proc);
      } else {
        proc = it->second;
      }
    }
  } else {
    st.last_proc = proc;
  }

  // PyTorch ProcessGroupNCCL watchdog.
  size_t wk = find(t, "WorkNCCL(");
  size_t le = find(t, "last enqueued");
  size_t tw = find(t, "Timeout at NCCL work:");
  if (wk != std::string_view::npos || le != std::string_view::npos || tw != std::string_view::npos) {
    WatchRecord w;
    w.who = who_of(proc);
    w.evidence = evidence(st, t);
    // PG tag: "[PG ID 11 PG GUID 119(name) Rank 1]", "[PG 1 (name) Rank 0]", "[PG 1 Rank 0]", "[Rank 1]".
    size_t tag = find(t, "[PG ");
    size_t rk = find(t, "Rank ", tag == std::string_view::npos ? 0 : tag);
    if (tag != std::string_view::npos) {
      size_t close = t.find(']', tag);
      std::string_view inside = t.substr(tag + 1, close == std::string_view::npos ? 0 : close - tag - 1);
      size_t guid = find(inside, "GUID ");
      std::string_view g;
      if (guid != std::string_view::npos) {
        g = inside.substr(guid + 5);
      } else {
        g = inside.size() > 3 ? inside.substr(3) : std::string_view();  // after "PG "
      }
      size_t r = find(g, " Rank ");
      if (r != std::string_view::npos) g = g.substr(0, r);
      w.group = fmt::format("PG {}", trim(g));
    }
    if (rk != std::string_view::npos) {
      long long r = number_after(t.substr(rk), "Rank ");
      if (r >= 0 && r < kMaxRank) w.group_rank = static_cast<int>(r);
    }
    if (wk != std::string_view::npos) {
      std::string_view body = t.substr(wk);
      w.seq = number_after(body, "SeqNum=");
      w.op = std::string(token_after(body, "OpType="));
      w.numel_in = number_after(body, "NumelIn=");
      w.numel_out = number_after(body, "NumelOut=");
      if (w.op.empty() && w.seq < 0) {
        bad(st, t);
        return;
      }
    }
    if (le != std::string_view::npos) {
      w.last_enqueued = number_after(t, "last enqueued NCCL work: ");
      if (w.last_enqueued < 0) w.last_enqueued = number_after(t, "last enqueued work: ");
      w.last_completed = number_after(t, "last completed NCCL work: ");
      if (w.last_completed < 0) w.last_completed = number_after(t, "last completed work: ");
      long long at = number_after(t, "at work: ");
      if (at < 0) at = number_after(t, "Timeout at NCCL work: ");
      if (w.seq < 0) w.seq = at;
    } else if (tw != std::string_view::npos && w.seq < 0) {
      w.seq = number_after(t, "Timeout at NCCL work: ");
    }
    // The old format names no group and its "[Rank r]" is the rank in the process group; with
    // nothing better it is taken as the job-wide rank of a one-group job.
    Process& p = processes[static_cast<size_t>(proc)];
    if (w.group.empty() && w.group_rank >= 0 && p.rank < 0) {
      p.rank = w.group_rank;
      p.rank_weak = true;
      w.who.rank = p.rank;
    }
    ++records;
    if (watch.size() < kMaxEvents) watch.push_back(w);
    else ++events_dropped;
    if (failures.size() < kMaxEvents) {
      Failure fl;
      fl.kind = Failure::Kind::timeout;
      fl.who = who_of(proc);
      fl.when = lab.when;
      fl.group = w.group;
      fl.seq = w.seq;
      fl.what = w.op.empty() ? fmt::format("watchdog timeout at work {}", w.seq)
                             : fmt::format("watchdog timeout in {} (SeqNum {})", w.op, w.seq);
      fl.evidence = w.evidence;
      failures.push_back(fl);
    }
    return;
  }

  // TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints: "Rank A is running [inconsistent] collective:
  // CollectiveFingerPrint(SequenceNumber=N, OpType=X, TensorShape=[..], TensorDtypes=Y, ...)".
  if (has(t, "CollectiveFingerPrint(")) {
    size_t at = 0;
    int found = 0;
    while ((at = find(t, "Rank ", at)) != std::string_view::npos && found < 8) {
      std::string_view rest = t.substr(at);
      long long r = number_after(rest, "Rank ");
      size_t fp = find(rest, "CollectiveFingerPrint(");
      size_t next_rank = find(rest, "Rank ", 5);
      if (r < 0 || r >= kMaxRank || fp == std::string_view::npos || (next_rank != std::string_view::npos && next_rank < fp) ||
          !has(rest.substr(0, fp), "collective")) {
        at += 5;
        continue;
      }
      std::string_view body = rest.substr(fp);
      WatchRecord w;
      w.who = who_of(proc);
      w.who.rank = static_cast<int>(r);
      w.who.index = -1;
      w.who.proc = fmt::format("rank {}", r);
      w.who.host.clear();
      w.fingerprint = true;
      w.group = "TORCH_DISTRIBUTED_DEBUG=DETAIL";
      w.group_rank = static_cast<int>(r);
      w.seq = number_after(body, "SequenceNumber=");
      // "OpType=REDUCE" may follow the number without a comma (SequenceNumber=0OpType=REDUCE).
      w.op = std::string(token_after(body, "OpType=", " ,)"));
      std::string_view dtype = token_after(body, "TensorDtypes=", " ,)");
      if (!dtype.empty()) w.op += " " + std::string(dtype);
      std::string_view shape = token_after(body, "TensorShape=", ")");
      if (!shape.empty()) {
        // Product of the first tensor's dimensions: "[195812480]", "[4, 1024]".
        std::string_view dims = shape;
        size_t close = dims.find(']');
        if (close != std::string_view::npos) dims = dims.substr(0, close);
        long long numel = 1;
        bool any = false;
        for (int d : int_list(dims)) {
          any = true;
          if (numel < (1LL << 40)) numel *= d;
        }
        // int_list drops numbers beyond kMaxRank; read the first dimension directly for those.
        long long first;
        size_t n;
        size_t b = dims.find('[');
        if (b != std::string_view::npos && parse_dec(dims.substr(b + 1), &first, &n) && dims.find(',') == std::string_view::npos) {
          numel = first;
          any = true;
        }
        if (any) w.numel_in = w.numel_out = numel;
      }
      w.evidence = evidence(st, t);
      ++records;
      watch.push_back(w);
      ++found;
      at += fp;
    }
    if (found == 0) bad(st, t);
    return;
  }

  // TORCH_NCCL_DESYNC_DEBUG report.
  if (has(t, "lagging ranks that caused this timeout") || has(t, "didn't join collective") ||
      has(t, "joined but didn't finish collective")) {
    auto add = [&](int r, const std::string& what) {
      Failure fl;
      fl.kind = Failure::Kind::never_joined;
      fl.who = Who{-1, r, "", fmt::format("rank {}", r)};
      fl.what = what;
      fl.evidence = evidence(st, t);
      failures.push_back(fl);
    };
    ++records;
    size_t lag = find(t, "ranks [");
    if (has(t, "lagging ranks that caused this timeout") && lag != std::string_view::npos) {
      std::string_view list = t.substr(lag + 7, t.find(']', lag) - lag - 7);
      for (int r : int_list(list)) add(r, "never joined any collective (TORCH_NCCL_DESYNC_DEBUG)");
    }
    size_t at = 0;
    while ((at = find(t, "- [", at)) != std::string_view::npos) {
      std::string_view rest = t.substr(at + 3);
      long long r;
      size_t n;
      if (parse_dec(rest, &r, &n) && r < kMaxRank) {
        std::string_view after = rest.substr(n);
        size_t nl = find(after, "- [");
        std::string_view phrase =
            after.empty() ? std::string_view() : trim(after.substr(1, nl == std::string_view::npos ? 120 : nl - 1));
        add(static_cast<int>(r), fmt::format("{} (TORCH_NCCL_DESYNC_DEBUG)", cut(phrase, 100)));
      }
      at += 3;
    }
    return;
  }

  // NCCL RAS (ncclras client): "Communicator ranks have different AllReduce operation counts",
  // then "N ranks have launched up to operation M" per group and "Rank R has launched up to
  // operation M -- GPU g managed by process p on node h" (or "has not launched any operations")
  // for the outliers.
  if (has(t, "operation counts") && has(t, "have different")) {
    if (st.in_ras) reported.push_back(st.ras);
    st.ras = Reported();
    st.ras.kind = Reported::Kind::ras_counts;
    st.ras.who = who_of(proc);
    st.ras.evidence = evidence(st, t);
    size_t d = find(t, "different ");
    st.ras.op = std::string(token_after(t.substr(d), "different ", " "));
    st.in_ras = true;
    ++records;
    return;
  }
  if (st.in_ras) {
    if (starts(t, "Rank ") && (has(t, "launched up to operation") || has(t, "not launched any operations"))) {
      long long r = number_after(t, "Rank ");
      long long n = has(t, "not launched") ? 0 : number_after(t, "up to operation ");
      if (r >= 0 && r < kMaxRank && st.ras.ranks.size() < 4096) {
        st.ras.ranks.push_back(static_cast<int>(r));
        st.ras.counts.push_back(n);
      }
      ++records;
      return;
    }
    if (has(t, "ranks have launched up to operation") || has(t, "ranks have not launched any operations")) {
      long long k = 0;
      size_t n;
      parse_dec(t, &k, &n);
      long long m = has(t, "not launched") ? 0 : number_after(t, "up to operation ");
      if (k > st.ras.majority_ranks) {
        st.ras.majority_ranks = static_cast<int>(std::min<long long>(k, kMaxRank));
        st.ras.majority_count = m;
      }
      ++records;
      return;
    }
    reported.push_back(st.ras);
    st.in_ras = false;
  }

  // Tracebacks and errors from rank code and libraries.
  auto fact = [&](Fact::Kind kind, std::string a, std::string b) {
    ++records;
    if (facts.size() < kMaxEvents) facts.push_back(Fact{kind, who_of(proc), std::move(a), std::move(b), evidence(st, t)});
  };
  auto failure = [&](Failure::Kind kind, std::string_view what, std::string hint = {}) {
    ++records;
    if (failures.size() >= kMaxEvents) {
      ++events_dropped;
      return;
    }
    Failure fl;
    fl.kind = kind;
    fl.who = who_of(proc);
    fl.what = short_what(what);
    fl.when = lab.when;
    fl.hint = std::move(hint);
    fl.evidence = evidence(st, t);
    failures.push_back(fl);
  };
  size_t us = find(t, "undefined symbol: nccl");
  if (us != std::string_view::npos) {
    std::string sym(token_after(t.substr(us), "undefined symbol: ", " ,)'\""));
    std::string lib;
    size_t so = t.rfind(".so", us);
    if (so != std::string_view::npos) {
      size_t b = so;
      while (b > 0 && t[b - 1] != ' ' && t[b - 1] != '\'' && t[b - 1] != '"' && t[b - 1] != ':') --b;
      lib = std::string(t.substr(b, so + 3 - b));
    }
    fact(Fact::Kind::undefined_symbol, sym, lib);
    failure(Failure::Kind::own_error, t.substr(t.rfind("Error", us) == std::string_view::npos ? 0 : 0));
    return;
  }
  if (has(t, "CUDA driver version is insufficient") || has(t, "driver on your system is too old")) {
    fact(Fact::Kind::driver_too_old, std::string(cut(t, 200)), "");
    failure(Failure::Kind::own_error, t);
    return;
  }
  if (has(t, "CUDA_ERROR_STUB_LIBRARY") || (has(t, "stubs/libcuda.so") && !has(t, "LD_LIBRARY_PATH=")) ||
      has(t, "stub library")) {
    std::string path;
    size_t s = find(t, "stubs/libcuda.so");
    if (s != std::string_view::npos) {
      size_t b = s;
      while (b > 0 && t[b - 1] != ' ' && t[b - 1] != '\'' && t[b - 1] != '"') --b;
      size_t e = s + 16;
      while (e < t.size() && t[e] != ' ' && t[e] != '\'' && t[e] != '"' && t[e] != ',' && t[e] != ')') ++e;
      path = std::string(t.substr(b, e - b));
    }
    fact(Fact::Kind::driver_stub, path, "");
    failure(Failure::Kind::own_error, t);
    return;
  }
  if (has(t, "Driver/library version mismatch")) {
    fact(Fact::Kind::nvml_mismatch, std::string(cut(t, 200)), "");
    failure(Failure::Kind::own_error, t);
    return;
  }
  if (has(t, "OutOfMemoryError") || has(t, "CUDA out of memory")) {
    std::string hint;
    size_t pc = find(t, "PYTORCH_CUDA_ALLOC_CONF=");
    if (pc != std::string_view::npos) hint = std::string(token_after(t.substr(pc), "", " ,)"));
    else if (has(t, "expandable_segments")) hint = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
    size_t e = find(t, "OutOfMemoryError");
    failure(Failure::Kind::oom, e != std::string_view::npos ? t.substr(t.rfind(' ', e) == std::string_view::npos ? 0 : t.rfind(' ', e) + 1) : t, hint);
    return;
  }
  size_t ne = find(t, "NCCL error in:");
  if (ne != std::string_view::npos || has(t, "DistBackendError") || has(t, "ncclInternalError") ||
      has(t, "ncclSystemError") || has(t, "ncclInvalidUsage") || has(t, "ncclUnhandledCudaError")) {
    size_t vp = find(t, "NCCL version ");
    if (vp != std::string_view::npos) {
      std::string_view v = token_after(t.substr(vp), "NCCL version ", " ,)\n");
      size_t plus = v.find("+cuda");
      std::string version(v.substr(0, plus));
      if (looks_like_version(version)) fact(Fact::Kind::nccl_version, version, plus == std::string_view::npos ? "" : std::string(v.substr(plus + 5)));
    }
    failure(collateral_text(t) ? Failure::Kind::aborted : Failure::Kind::own_error, t);
    return;
  }
  size_t vp = find(t, "NCCL version ");
  if (vp != std::string_view::npos && (vp == 0 || has(t, "NCCL INFO"))) {
    std::string_view v = token_after(t.substr(vp), "NCCL version ", " ,)");
    size_t plus = v.find("+cuda");
    std::string version(v.substr(0, plus));
    if (looks_like_version(version)) fact(Fact::Kind::nccl_version, version, plus == std::string_view::npos ? "" : std::string(v.substr(plus + 5)));
    else bad(st, t);
    return;
  }
  // srun's own failure lines: "srun: error: node02: task 6: Out Of Memory".
  if (starts(t, "srun: error: ") && has(t, ": task")) {
    long long task = number_after(t, ": task ");
    std::string_view msg = trim(t.substr(t.rfind(':') + 1));
    LauncherEntry e;
    e.rank = task >= 0 && task < kMaxRank ? static_cast<int>(task) : -1;
    std::string_view rest = t.substr(13);
    e.host = std::string(rest.substr(0, rest.find(':')));
    e.exitcode = std::string(cut(msg, 60));
    e.signal = has(msg, "Killed") || has(msg, "Terminated") ? "SIGKILL" : "";
    e.evidence = evidence(st, t);
    launcher.push_back(e);
    ++records;
    return;
  }
  // Other exceptions raised in rank code: "RuntimeError: ...", "ValueError: ...".
  size_t re = find(t, "Error: ");
  if (re != std::string_view::npos && re < 80 && !has(t, "ChildFailedError") && !has(t, "File \"")) {
    size_t b = re;
    while (b > 0 && t[b - 1] != ' ' && t[b - 1] != ':' && t[b - 1] != ']') --b;
    std::string_view what = t.substr(b);
    if (has(what, "Detected mismatch between collectives")) return;
    failure(collateral_text(what) ? Failure::Kind::aborted : Failure::Kind::own_error, what);
    return;
  }
  if (has(t, "Signal 15 (SIGTERM) received") || has(t, "Signal 9 (SIGKILL) received")) {
    failure(Failure::Kind::killed, t);
    return;
  }
  if (!st.pending_coll.empty() && ++st.pending_age > 8) {
    bad(st, st.pending_coll);
    st.pending_coll.clear();
  }
}

void LogReader::finish() {
  // The launcher's summary names each failed rank's host: processes known by rank only get it.
  std::map<int, std::string> host_of_rank;
  for (const auto& e : launcher)
    if (e.rank >= 0 && !e.host.empty()) host_of_rank.emplace(e.rank, e.host);
  for (auto& p : processes)
    if (p.host.empty() && p.rank >= 0) {
      auto it = host_of_rank.find(p.rank);
      if (it != host_of_rank.end()) p.host = it->second;
    }
  // A process whose rank is unknown but which joined the widest communicator with an Init line:
  // its rank there is the job-wide rank (the world communicator is the widest).
  if (!tasks_are_nodes_)
    for (const auto& [task, procs] : task_procs_)
      if (procs.size() == 1 && valid_process(*procs.begin())) {
        Process& p = processes[static_cast<size_t>(*procs.begin())];
        if (p.rank < 0) p.rank = task;
      }
  int world = 0;
  for (const auto& kv : widest_init_) world = std::max(world, kv.second.first);
  for (const auto& kv : widest_init_) {
    if (!valid_process(kv.first)) continue;
    Process& p = processes[static_cast<size_t>(kv.first)];
    if (p.rank < 0 && kv.second.first == world && world > 1) {
      p.rank = kv.second.second;
      p.rank_weak = true;
    }
  }
  // A rank's host known under one of its names (its NCCL header) serves its other names ("rank 1").
  std::map<int, std::string> host_by_rank;
  for (const auto& p : processes)
    if (p.rank >= 0 && !p.host.empty()) host_by_rank.emplace(p.rank, p.host);
  for (auto& p : processes)
    if (p.rank >= 0 && p.host.empty() && host_by_rank.count(p.rank)) p.host = host_by_rank[p.rank];
  auto resolve = [&](Who& w) {
    if (w.index >= 0 && static_cast<size_t>(w.index) < processes.size()) {
      const Process& p = processes[static_cast<size_t>(w.index)];
      if (w.rank < 0) w.rank = p.rank;
      if (w.host.empty()) w.host = p.host;
    }
  };
  for (auto& f : facts) resolve(f.who);
  for (auto& f : failures) resolve(f.who);
  for (auto& w : watch)
    if (!w.fingerprint) resolve(w.who);
  for (auto& r : reported) resolve(r.who);
  coll = stream_.finish(
      [&](int proc) {
        MemberIdentity id;
        if (proc >= 0 && static_cast<size_t>(proc) < processes.size()) {
          const Process& p = processes[static_cast<size_t>(proc)];
          id.global_rank = p.rank;
          id.host = p.host;
          id.pid = p.pid;
          id.name = p.key;
        }
        return id;
      },
      files);
  if (unmatched_comms_)
    notes.push_back(ambiguous_comms_
                        ? "some processes use several communicators of one size without Init COMPLETE lines: they were matched by size and order of first use, which may be wrong"
                        : "communicators without Init COMPLETE lines were matched across ranks by their size (nranks)");
}

}  // namespace denpex::diag
