#include "evidence/log_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/line_feed.h"
#include "evidence/matcher.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool has(std::string_view s, std::string_view lit) {
  return !lit.empty() && s.size() >= lit.size() && memmem(s.data(), s.size(), lit.data(), lit.size()) != nullptr;
}

// A hash of a short header ("host:pid:tid"), eight bytes at a time; the top bits are taken.
size_t header_hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
  }
  uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  h = (h ^ w) * 0x100000001b3ULL;
  return static_cast<size_t>(h >> 40);
}

// Where the level of a record without a header starts: "NCCL INFO x", "[0] NCCL WARN x",
// "[0] init.cc:255 NCCL WARN x" or "transport/nvls.cc:165 NCCL WARN x" at the start of the
// text. npos for anything else.
size_t headerless_level(std::string_view text) {
  size_t k = 0;
  if (starts(text, "[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close < 2 || close > 4) return std::string_view::npos;
    for (size_t i = 1; i < close; ++i)
      if (!is_digit(text[i])) return std::string_view::npos;
    k = close + 1;
    while (k < text.size() && text[k] == ' ') ++k;
  }
  // An optional source location, "init.cc:255 " (NCCL's own sources: .cc, .c plugins).
  size_t sp = text.find(' ', k);
  if (sp != std::string_view::npos && sp - k < 64) {
    std::string_view loc = text.substr(k, sp - k);
    if (loc.find(".cc:") != std::string_view::npos || loc.find(".c:") != std::string_view::npos) k = sp + 1;
  }
  if (!starts(text.substr(k), "NCCL ")) return std::string_view::npos;
  std::string_view level = text.substr(k + 5, 5);
  if (!(starts(level, "INFO ") || starts(level, "WARN ") || starts(level, "ERROR"))) return std::string_view::npos;
  return k + 5;
}

// A COLL record: "AllReduce: opCount 1a ..." (or an old "Name: ... count N datatype D" form).
bool is_coll_body(std::string_view body) {
  size_t colon = body.find(": opCount ");
  if (colon != std::string_view::npos) return colon < 24;
  if (body.empty() || !std::isupper(static_cast<unsigned char>(body[0]))) return false;
  size_t c = body.find(':');
  return c != std::string_view::npos && c < 20 && has(body, " count ") && has(body, " datatype ");
}

}  // namespace

LogReader::LogReader(bool keep_all_calls)
    : hits(builtin_matcher().table().signals.size(), 0), matcher_(builtin_matcher()),
      keep_all_calls_(keep_all_calls), read_threads_(std::thread::hardware_concurrency() >= 2 ? 2 : 1),
      coll_entry_(builtin_matcher().first_of_reader("coll")) {}

LogReader::~LogReader() = default;

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
  if (valid_process(proc)) {
    const Process& p = processes[static_cast<size_t>(proc)];
    w.rank = p.rank;
    w.host = p.host;
    w.proc = p.key;
  }
  return w;
}

bool LogReader::keep_event(int kind, int proc, size_t kept) {
  bool keep = kept < kMaxEvents;
  if (keep && proc >= 0) {
    uint32_t& n = events_per_proc_[(static_cast<long long>(kind) << 32) | static_cast<uint32_t>(proc)];
    keep = n < kMaxEventsPerProcess;
    if (keep) ++n;
  }
  if (!keep) ++events_dropped;
  return keep;
}

void LogReader::add_failure(Failure f) {
  ++records;
  if (keep_event(0, f.who.index, failures.size())) failures.push_back(std::move(f));
}
void LogReader::add_fact(Fact f) {
  ++records;
  if (keep_event(1, f.who.index, facts.size())) facts.push_back(std::move(f));
}
void LogReader::add_watch(WatchRecord w) {
  ++records;
  if (keep_event(2, w.who.index, watch.size())) watch.push_back(std::move(w));
}
void LogReader::add_reported(Reported r) {
  ++records;
  if (keep_event(3, -1, reported.size())) reported.push_back(std::move(r));
}
void LogReader::add_launcher(LauncherEntry e) {
  ++records;
  if (keep_event(4, -1, launcher.size())) launcher.push_back(std::move(e));
}

int LogReader::find_process(const std::string& key) const {
  auto it = proc_index_.find(key);
  return it == proc_index_.end() ? -1 : it->second;
}

int LogReader::process_by_key(const std::string& key, int rank) {
  auto it = proc_index_.find(key);
  if (it != proc_index_.end()) return it->second;
  int idx = static_cast<int>(processes.size());
  Process p;
  p.key = key;
  p.rank = rank;
  p.rank_weak = rank < 0;
  p.file = static_cast<int>(files.size()) - 1;
  processes.push_back(p);
  proc_index_.emplace(key, idx);
  return idx;
}

int LogReader::process_for(const LineLabel& lab, std::string_view host, long long pid) {
  // The process key: the launcher's rank label, else Ray's worker, else NCCL's host:pid, else
  // srun's task, else none.
  std::string key;
  std::string header = host.empty() ? std::string() : fmt::format("{}:{}", host, pid);
  if (lab.rank >= 0) key = fmt::format("rank {}", lab.rank);
  else if (!lab.worker.empty()) key = lab.worker;
  else if (!header.empty()) key = header;
  else if (lab.task >= 0) key = lab.host.empty() ? fmt::format("task {}", lab.task) : fmt::format("{} task {}", lab.host, lab.task);
  else return -1;
  int idx = process_by_key(key, lab.rank);
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
    if (h == proc_index_.end()) {
      proc_index_.emplace(header, idx);
    } else if (h->second != idx && lab.rank >= 0) {
      Process& other = processes[static_cast<size_t>(h->second)];
      if (other.rank < 0 || other.rank_weak) {
        other.rank = lab.rank;
        other.rank_weak = false;
      }
    }
  }
  return idx;
}

bool LogReader::read(ByteSource* in, const std::string& name, std::string* error) {
  FileState st;
  st.name = name;
  st.index = static_cast<int>(files.size());
  files.push_back(name);
  LineFeed feed(in, read_threads_ > 1);
  When read_to;  // the last time a line's prefix gave: how far a cut input was read
  while (const FedBatch* b = feed.next()) {
    for (const FedLine& l : b->lines) {
      st.line_no = l.line_no;
      if (l.label.when.known()) read_to = l.label.when;
      ++lines;
      // A line longer than any record: what was kept is read, the rest was skipped.
      if (l.cut) bad(st, fmt::format("line longer than {} KiB cut: {}", kMaxLine / 1024, b->cut_text(l)));
      repaired(b->text(l), l.label, l.indented, b->starts_of(l), l.nstarts, st);
    }
  }
  st.host_labels = std::move(feed.host_labels());
  end_file(st);
  if (InputCut c = in->cut(); c.why != InputCut::Why::none && feed.error().empty()) {
    c.file = name;
    cuts.push_back(CutInput{std::move(c), read_to, true});
    stream_.mark_cut(st.index);
  }
  if (!feed.error().empty()) {
    *error = feed.error();
    return false;
  }
  return true;
}

void LogReader::end_file(FileState& st) {
  // Whatever waits for a continuation is read as it is.
  std::string flush;
  line(&flush, st);
  end_block(*this, st);
  end_env(*this, st);
  end_diag(*this, st);
  if (!st.pending_coll.empty()) bad(st, st.pending_coll);
}

void LogReader::read_text(const std::string& text, const std::string& name) {
  auto src = memory_source(text);
  std::string error;
  read(src.get(), name, &error);
}

bool LogReader::join_wrapped(bool indented, std::string_view text, const LineLabel& lab, FileState& st) {
  // The previous line was cut by the terminal: this one continues it when it starts with the
  // rest of the record (indented, or a digit; no record marker of its own).
  std::string_view t = text;
  // A WorkNCCL(...) record cut before its ')' goes on on the next line, mid-word.
  bool open_work = has(st.wrapped, "WorkNCCL(") && st.wrapped.find(')', st.wrapped.find("WorkNCCL(")) == std::string::npos;
  bool continues = !t.empty() && !has(t, "NCCL INFO") && !has(t, "NCCL WARN") && !has(t, "WorkNCCL(") &&
                   (indented || is_digit(t[0]) ||
                    (open_work && lab.rank < 0 && lab.task < 0 && lab.worker.empty() && !lab.when.known()));
  std::string joined = std::move(st.wrapped);
  LineLabel jl = st.wrapped_label;
  long long jline = st.wrapped_line;
  st.have_wrapped = false;
  st.wrapped.clear();
  long long here = st.line_no;
  st.line_no = jline;
  if (!continues) {
    segment(joined, jl, st);
    st.line_no = here;
    return false;
  }
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
  if (!open_work) joined.append(" ");
  joined.append(trim(t));
  jl.wrapped = lab.wrapped;
  if (lab.wrapped) {
    st.wrapped = joined;
    st.wrapped_label = jl;
    st.wrapped_line = jline;
    st.have_wrapped = true;
  } else {
    segment(joined, jl, st);
  }
  st.line_no = here;
  return true;
}

void LogReader::line(std::string* raw, FileState& st) {
  LineLabel lab;
  std::string_view text = repair_line(raw, &lab, &st.host_labels);
  size_t at[kMaxRecordStarts];
  size_t n = nccl_record_starts(text, at);
  repaired(text, lab, !raw->empty() && is_space((*raw)[0]), at, n, st);
}

void LogReader::repaired(std::string_view text, const LineLabel& lab, bool indented, const size_t* starts,
                         size_t nstarts, FileState& st) {
  if (lab.when.year > 0) file_year.emplace(st.name, lab.when.year);
  if (st.have_wrapped && join_wrapped(indented, text, lab, st)) return;
  size_t work = text.find("WorkNCCL(");
  bool open_work = work != std::string_view::npos && text.find(')', work) == std::string_view::npos;
  if (lab.wrapped || open_work) {
    st.wrapped.assign(text.data(), text.size());
    st.wrapped_label = lab;
    st.wrapped_line = st.line_no;
    st.have_wrapped = true;
    return;
  }
  if (text.empty()) {
    if (st.block == "fr_trace") end_block(*this, st);
    return;
  }
  segment(text, lab, st, starts, nstarts);
}

// Splits a line into records: NCCL headers may be glued onto another process's output or onto
// each other; more than a few glued records on one line are read as the last one's text.
void LogReader::segment(std::string_view text, const LineLabel& lab, FileState& st) {
  size_t at[kMaxRecordStarts];
  size_t n = nccl_record_starts(text, at);
  segment(text, lab, st, at, n);
}

// The same, where the records start at `found` (nccl_record_starts of text).
void LogReader::segment(std::string_view text, const LineLabel& lab, FileState& st, const size_t* found, size_t nstarts) {
  size_t starts_buf[kMaxRecordStarts];
  std::copy(found, found + nstarts, starts_buf);
  if (nstarts == 0) {
    size_t level = headerless_level(text);
    if (level == std::string_view::npos) {
      other_record(text, lab, st);
      return;
    }
    // A record without NCCL's "host:pid:tid" header (a paste that cut it, or a log that keeps
    // only "[dev] NCCL INFO"): its process is the line's label's, else the input's.
    int proc = process_for(lab, std::string_view(), -1);
    st.last_proc = proc;
    nccl_level(text, text.substr(level), lab, proc, st);
    return;
  }
  // A record glued on with its own launcher prefix ("...stream 0x7f(RayTrainWorker pid=2,
  // ip=10.0.0.2) host:2:3 [0] NCCL INFO ...") starts at that prefix and has its own label.
  bool own_prefix[kMaxRecordStarts] = {};
  for (size_t i = 1; i < nstarts; ++i) {
    size_t b = starts_buf[i];
    if (b < 3 || text[b - 1] != ' ' || text[b - 2] != ')') continue;
    size_t open = text.rfind('(', b - 2);
    if (open != std::string_view::npos && open > starts_buf[i - 1] && b - open < 128 &&
        text.substr(open, b - open).find("pid=") != std::string_view::npos) {
      starts_buf[i] = open;
      own_prefix[i] = true;
    }
  }
  std::string_view head = trim(text.substr(0, starts_buf[0]));
  if (!head.empty()) other_record(head, lab, st);
  for (size_t i = 0; i < nstarts; ++i) {
    size_t e = i + 1 < nstarts ? starts_buf[i + 1] : text.size();
    std::string_view rec = text.substr(starts_buf[i], e - starts_buf[i]);
    if (!own_prefix[i]) {
      // A record glued onto another process's output is not that process's: the line's label
      // belongs to the first record only (passed as is: a copy would copy its strings per line).
      if (i == 0) nccl_record(rec, lab, st);
      else nccl_record(rec, LineLabel(), st);
      continue;
    }
    std::string own(rec);
    LineLabel own_lab;
    std::string_view repaired = repair_line(&own, &own_lab);
    nccl_record(repaired, own_lab, st);
  }
}

int LogReader::header_process(std::string_view hdr, const LineLabel& lab) {
  // An unlabelled header seen before is answered from the cache first: its host was recorded
  // when it was first seen, so nothing below would change (one hash lookup per COLL line).
  const bool labelled = !lab.worker.empty() || lab.rank >= 0 || lab.task >= 0 || !lab.host.empty();
  HeaderSlot* slot = nullptr;
  if (!labelled) {
    // A direct-mapped copy of hdr_proc_ in front of it: one compare of the header in the usual
    // case, no key built.
    slot = &hdr_slots_[header_hash(hdr) % hdr_slots_.size()];
    if (slot->proc != kNoSlot && slot->hdr == hdr) return slot->proc;
    hdr_key_.assign(hdr.data(), hdr.size());
    auto it = hdr_proc_.find(hdr_key_);
    if (it != hdr_proc_.end()) {
      slot->hdr = hdr_key_;
      slot->proc = it->second;
      return it->second;
    }
  }
  size_t c2 = hdr.rfind(':');
  size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : hdr.rfind(':', c2 - 1);
  std::string_view host;
  long long pid = -1;
  if (c1 != std::string_view::npos) {
    host = hdr.substr(0, c1);
    size_t n;
    if (!parse_dec(hdr.substr(c1 + 1), &pid, &n)) pid = -1;
  }
  // A header glued onto the end of a hex pointer takes its digits: a host seen before that ends
  // the run is the host (the longest such; each suffix looked up, so a new host costs its length,
  // not the count of hosts seen).
  if (!host.empty() && !hosts_seen_.count(std::string(host))) {
    for (size_t k = 1; k < host.size() && k < 256; ++k)
      if (hosts_seen_.count(std::string(host.substr(k)))) {
        host = host.substr(k);
        break;
      }
    if (hosts_seen_.size() < 100000) hosts_seen_.insert(std::string(host));
  }
  if (labelled) return process_for(lab, host, pid);
  int proc = process_for(lab, host, pid);
  if (hdr_proc_.size() < 100000 && hdr_proc_.emplace(hdr_key_, proc).second) {
    slot->hdr = hdr_key_;
    slot->proc = proc;
  }
  return proc;
}

void LogReader::nccl_record(std::string_view rec, const LineLabel& lab, FileState& st) {
  // The header ends at " [dev]"; the level follows (after an optional "file.cc:77").
  size_t open = rec.find(" [");
  size_t k = find_nccl(rec);
  if (open == std::string_view::npos || k == std::string_view::npos || open > k) {
    bad(st, rec);
    return;
  }
  int proc = header_process(rec.substr(0, open), lab);
  st.last_proc = proc;
  st.last_error_next = false;
  std::string_view level_body = rec.substr(k + 6);  // "INFO ..." / "WARN ..."
  if (starts(level_body, "WARN ") && valid_process(proc) && processes[static_cast<size_t>(proc)].rank < 0 &&
      warn_text_proc_.size() < 4096)
    warn_text_proc_.emplace(std::string(cut(trim(level_body.substr(5)), kEvidenceChars)), proc);
  nccl_level(rec, level_body, lab, proc, st);
}

// A line quoted after "Last error:" under a rank's exception is NCCL's text of that process's
// error, as its NCCL WARN printed it: a WARN of a process whose rank is unknown with this very
// text is the same process (NCCL's header names a CUDA device, never the rank).
void LogReader::tie_quoted_warn(std::string_view text, int proc) {
  if (!valid_process(proc) || warn_text_proc_.empty()) return;
  auto it = warn_text_proc_.find(std::string(cut(text, kEvidenceChars)));
  if (it == warn_text_proc_.end() || it->second == proc || !valid_process(it->second)) return;
  Process& rank = processes[static_cast<size_t>(proc)];
  Process& nccl = processes[static_cast<size_t>(it->second)];
  if (rank.rank < 0 || nccl.rank >= 0) return;
  nccl.rank = rank.rank;
  nccl.rank_weak = rank.rank_weak;
  if (rank.host.empty()) rank.host = nccl.host;
  if (rank.pid < 0) rank.pid = nccl.pid;
}

// The record from its level on ("INFO ...", "WARN ..."), once its process is known.
void LogReader::nccl_level(std::string_view rec, std::string_view level_body, const LineLabel& lab, int proc,
                           FileState& st) {
  bool warn = starts(level_body, "WARN");
  size_t sp = level_body.find(' ');
  std::string_view body = sp == std::string_view::npos ? std::string_view() : level_body.substr(sp + 1);
  Record r{*this, st, lab, proc, rec, true};
  if (!warn && coll_entry_ >= 0 && is_coll_body(body)) {
    // The hot path: COLL lines go to their hand-written reader without a pattern match (and
    // without a Hit, whose field slots would be cleared per line).
    ++hits[static_cast<size_t>(coll_entry_)];
    read_coll_body(body, r);
    return;
  }
  Hit hit;
  std::string_view scoped = warn ? level_body : body;
  // A WARN is matched from the source file NCCL names before it ("transport/nvls.cc:244 NCCL
  // WARN ..."): the file says which transport failed where the text alone does not.
  if (warn && level_body.data() > rec.data()) {
    size_t at = static_cast<size_t>(level_body.data() - rec.data());
    size_t src = rec.substr(0, at).find("] ");
    // Without NCCL's header (a paste that cut it) the record starts at the source file.
    scoped = src != std::string_view::npos ? rec.substr(src + 2) : rec;
  }
  if (matcher_.match(warn ? Scope::nccl_warn : Scope::nccl_info, scoped, &hit)) {
    dispatch(hit, r);
    return;
  }
  // Other INFO lines say nothing we judge (channels, rings, "-> 3" error traces).
  if (!st.pending_coll.empty() && ++st.pending_age > 8) {
    bad(st, st.pending_coll);
    st.pending_coll.clear();
  }
}

bool LogReader::dispatch(const Hit& hit, Record& rec) {
  FamilyRead fn = family_reader(hit.signal->reader);
  if (fn == nullptr) return false;
  ++hits[static_cast<size_t>(hit.index)];
  fn(hit, rec);
  return true;
}

// The process a line outside NCCL records is from: its launcher label, else the "[Rank r]" or
// "[PG i Rank r]" tag of a watchdog line, else whoever printed the lines before (a traceback's
// later lines carry no label), else the file itself.
int LogReader::line_process(std::string_view t, const LineLabel& lab, FileState& st) {
  int proc = process_for(lab, {}, -1);
  if (proc >= 0) {
    st.last_proc = proc;
    return proc;
  }
  if (has(t, "WorkNCCL(") || has(t, "last enqueued") || has(t, "Timeout at NCCL work:")) {
    size_t tag = t.find("[PG ");
    size_t rk = t.find("[Rank ");
    std::string key;
    long long r = -1;
    if (tag != std::string_view::npos) {
      size_t close = t.find(']', tag);
      std::string_view inside = t.substr(tag + 1, close == std::string_view::npos ? 0 : close - tag - 1);
      size_t rr = inside.find(" Rank ");
      if (rr != std::string_view::npos) r = to_ll(inside.substr(rr + 6));
      bool world = starts(inside, "PG 0 ") || has(inside, "default_pg") || starts(inside, "PG ID 0 ");
      if (r >= 0 && r < kMaxRank) key = world ? fmt::format("rank {}", r) : fmt::format("{} rank {}", inside.substr(0, rr), r);
    } else if (rk != std::string_view::npos) {
      r = to_ll(t.substr(rk + 6));
      if (r >= 0 && r < kMaxRank) key = fmt::format("rank {}", r);
    }
    if (!key.empty()) return process_by_key(key, starts(key, "rank ") ? static_cast<int>(r) : -1);
  }
  if (st.last_proc >= 0) return st.last_proc;
  return process_by_key(fmt::format("file {}", st.name), -1);
}

void LogReader::other_record(std::string_view t, const LineLabel& lab, FileState& st) {
  t = trim(t);
  if (t.empty()) return;
  bool quoted = st.last_error_next;
  st.last_error_next = t.size() >= 11 && t.substr(t.size() - 11) == "Last error:";
  if (quoted) tie_quoted_warn(t, lab.rank >= 0 || lab.task >= 0 || !lab.worker.empty() ? process_for(lab, {}, -1) : st.last_proc);
  Record probe{*this, st, lab, st.last_proc, t, false};
  if (!st.block.empty() && block_line(t, probe)) return;
  if (!st.pending_coll.empty()) {
    // A COLL header waiting for its body: this line may be it.
    if (has(t, " datatype ") || has(t, " comm 0x")) {
      std::string joined = st.pending_coll + " " + std::string(t);
      st.pending_coll.clear();
      long long here = st.line_no;
      st.line_no = st.pending_line;
      LineLabel pl = st.pending_label;
      nccl_record(joined, pl, st);
      st.line_no = here;
      return;
    }
    if (++st.pending_age > 8) {
      bad(st, st.pending_coll);
      st.pending_coll.clear();
    }
  }
  // A labelled line names its process even when nothing in it is read (a traceback's later
  // lines belong to it; srun task numbers are told from ranks by what labels share a task).
  int labelled = lab.rank >= 0 || lab.task >= 0 || !lab.worker.empty() ? process_for(lab, {}, -1) : -1;
  if (labelled >= 0) st.last_proc = labelled;
  Hit hit;
  if (!matcher_.match(Scope::line, t, &hit)) return;
  Record rec{*this, st, lab, labelled >= 0 ? labelled : line_process(t, lab, st), t, false};
  dispatch(hit, rec);
}

std::string LogReader::comm_id(int proc, unsigned long long ptr) const {
  auto it = init_.find({proc, ptr});
  return it == init_.end() ? std::string() : it->second.id;
}

void LogReader::add_init(int proc, unsigned long long ptr, const std::string& id, int rank, int nranks, bool complete) {
  Init in;
  in.id = id;
  in.rank = rank;
  in.nranks = nranks;
  if (complete || !init_.count({proc, ptr})) init_[{proc, ptr}] = in;
  // A line whose process could not be told (proc < 0) names no process to give a rank to.
  if (proc >= 0) {
    auto& w = widest_init_[proc];
    if (nranks > w.first) w = {nranks, rank};
  }
}

void LogReader::add_call(int proc, unsigned long long comm_ptr, long long nranks, const CollCall& call) {
  ++records;
  ++coll_calls;
  // The communicator this process used last is asked first: most processes use one at a time.
  size_t slot = static_cast<size_t>(proc + 1);
  if (slot < last_comm_.size() && last_comm_[slot].set && last_comm_[slot].ptr == comm_ptr) {
    store_call(last_comm_[slot].at, call);
    return;
  }
  auto key = std::make_pair(proc, comm_ptr);
  auto it = comm_of_.find(key);
  if (it != comm_of_.end()) {
    if (slot >= last_comm_.size()) last_comm_.resize(slot + 1);
    last_comm_[slot] = LastComm{comm_ptr, it->second, true};
    store_call(it->second, call);
    return;
  }
  auto in = init_.find(key);
  std::string id;
  int rank_in_comm = in != init_.end() ? in->second.rank : -1;
  if (in != init_.end() && !in->second.id.empty()) {
    id = in->second.id;
  } else if (keep_all_calls_ && in == init_.end()) {
    // Without an Init line the communicator cannot be named across ranks: counted, not compared.
    ++unattributed_calls;
    return;
  } else {
    // No identity on the Init line (or no Init line): matched across ranks by size and order of
    // first use in each process, which is unambiguous only while a process has one such
    // communicator.
    unmatched_comms_ = true;
    int& nth = unnamed_count_[{proc, fmt::format("{}", nranks)}];
    id = nth == 0 ? fmt::format("nranks={}", nranks) : fmt::format("nranks={}#{}", nranks, nth + 1);
    if (nth > 0) ambiguous_comms_ = true;
    ++nth;
  }
  if (keep_all_calls_) {
    MemberCalls m{id, proc, rank_in_comm, static_cast<int>(nranks), {}, 0};
    m.add(call);
    it = comm_of_.emplace(key, std::make_pair(static_cast<int>(all_calls.size()), 0)).first;
    all_calls.push_back(std::move(m));
    return;
  }
  int ci = stream_.comm(id, static_cast<int>(nranks));
  int mi = stream_.member(ci, proc < 0 ? 0 : proc, rank_in_comm);
  comm_of_.emplace(key, std::make_pair(ci, mi));
  stream_.add(ci, mi, call);
}

void MemberCalls::add(const CollCall& call) {
  if (calls.empty() || calls.back().size() == calls.back().capacity()) {
    calls.emplace_back();
    calls.back().reserve(std::min<size_t>(size_t{256} << std::min<size_t>(calls.size() - 1, 5), 8192));
  }
  calls.back().push_back(call);
  ++count;
}

void LogReader::store_call(std::pair<int, int> at, const CollCall& call) {
  if (keep_all_calls_) all_calls[static_cast<size_t>(at.first)].add(call);
  else stream_.add(at.first, at.second, call);
}

// One host, one name: a short name and its FQDN that both appear in the input ("gpu-a17" in a
// launcher's summary, "gpu-a17.cluster.local" in NCCL's headers) are one host, named by the short
// name everywhere; a process known as FQDN:pid is the one known as short:pid.
void LogReader::unify_host_names() {
  std::set<std::string> names;
  auto note = [&](const std::string& h) {
    if (!h.empty() && names.size() < 100000) names.insert(h);
  };
  for (const auto& p : processes) note(p.host);
  for (const auto& e : launcher) note(e.host);
  for (const auto& f : failures) note(f.who.host);
  for (const auto& f : facts) note(f.who.host);
  for (const auto& r : reported) note(r.who.host);
  std::map<std::string, std::string> to_short;
  for (const auto& h : names) {
    size_t dot = h.find('.');
    if (dot == std::string::npos || dot == 0) continue;
    std::string short_name = h.substr(0, dot);
    bool address = std::all_of(short_name.begin(), short_name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!address && names.count(short_name)) to_short.emplace(h, short_name);
  }
  if (to_short.empty()) return;
  auto fix = [&](std::string& h) {
    auto it = to_short.find(h);
    if (it != to_short.end()) h = it->second;
  };
  for (auto& e : launcher) fix(e.host);
  for (auto& f : failures) fix(f.who.host);
  for (auto& f : facts) fix(f.who.host);
  for (auto& w : watch) fix(w.who.host);
  for (auto& r : reported) fix(r.who.host);
  for (size_t i = 0; i < processes.size(); ++i) {
    Process& p = processes[i];
    fix(p.host);
    size_t colon = p.key.rfind(':');
    if (colon == std::string::npos) continue;
    auto it = to_short.find(p.key.substr(0, colon));
    if (it == to_short.end()) continue;
    std::string key = it->second + p.key.substr(colon);
    auto same = proc_index_.find(key);
    if (same == proc_index_.end()) {
      proc_index_.emplace(key, static_cast<int>(i));
      p.key = key;
    } else if (same->second != static_cast<int>(i) && (p.rank < 0 || p.rank_weak)) {
      const Process& other = processes[static_cast<size_t>(same->second)];
      if (other.rank >= 0) p.rank = other.rank, p.rank_weak = other.rank_weak;
      p.key = key;
    }
  }
}

void LogReader::resolve_identities() {
  unify_host_names();
  // The launcher's summary names each failed rank's host: processes known by rank only get it.
  std::map<int, std::string> host_of_rank;
  for (const auto& e : launcher)
    if (e.rank >= 0 && !e.host.empty() && !e.local) host_of_rank.emplace(e.rank, e.host);
  for (auto& p : processes)
    if (p.host.empty() && p.rank >= 0 && host_of_rank.count(p.rank)) p.host = host_of_rank[p.rank];
  // A process known only by its pid (a launcher stopped it) is the rank the launcher's summary
  // gives that pid.
  for (const auto& e : launcher)
    if (e.pid >= 0 && e.rank >= 0 && !e.local)
      for (auto& p : processes)
        if (p.pid == e.pid && p.rank < 0) {
          p.rank = e.rank;
          if (p.host.empty()) p.host = e.host;
        }
  // srun tasks that are single processes: the task number is the rank.
  if (!tasks_are_nodes_)
    for (const auto& [task, procs] : task_procs_)
      if (procs.size() == 1 && valid_process(*procs.begin())) {
        Process& p = processes[static_cast<size_t>(*procs.begin())];
        if (p.rank < 0) p.rank = task;
      }
  // A process whose rank is unknown but which joined the widest communicator with an Init line:
  // its rank there is the job-wide rank (the world communicator is the widest).
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
  // A file that shows one host only (one node's log) gives it to its processes that name none.
  std::map<int, std::set<std::string>> file_hosts;
  for (const auto& p : processes)
    if (!p.host.empty() && p.file >= 0) file_hosts[p.file].insert(p.host);
  for (const auto& e : launcher)
    for (size_t i = 0; i < files.size(); ++i)
      if (!e.host.empty() && files[i] == e.evidence.file) file_hosts[static_cast<int>(i)].insert(e.host);
  for (auto& p : processes)
    if (p.host.empty() && file_hosts.count(p.file) && file_hosts[p.file].size() == 1) p.host = *file_hosts[p.file].begin();
  // A rank's host known under one of its names (its NCCL header) serves its other names ("rank 1").
  std::map<int, std::string> host_by_rank;
  for (const auto& p : processes)
    if (p.rank >= 0 && !p.host.empty()) host_by_rank.emplace(p.rank, p.host);
  for (auto& p : processes)
    if (p.rank >= 0 && p.host.empty() && host_by_rank.count(p.rank)) p.host = host_by_rank[p.rank];
}

// A time without a year ("E0321 02:07:08") takes the year another line of its file gives
// (an ISO prefix, torchrun's summary); across a new year it would be off by one, which only the
// text shows: every comparison is by month, day and time.
void LogReader::date_events() {
  for (const auto& e : launcher)
    if (e.when.year > 0) file_year.emplace(e.evidence.file, e.when.year);
  auto date = [&](When& w, const Evidence& ev) {
    if (!w.known() || w.year > 0) return;
    auto it = file_year.find(ev.file);
    if (it != file_year.end()) w.year = it->second;
  };
  for (auto& f : failures) date(f.when, f.evidence);
  for (auto& e : launcher) date(e.when, e.evidence);
}

void LogReader::finish() {
  resolve_identities();
  auto resolve = [&](Who& w) {
    if (!valid_process(w.index)) return;
    const Process& p = processes[static_cast<size_t>(w.index)];
    if (w.rank < 0) w.rank = p.rank;
    if (w.rank < 0) w.proc = p.key;  // a name learned after the line ("rank 0 of PG 2")
    if (w.host.empty()) w.host = p.host;
  };
  for (auto& f : facts) resolve(f.who);
  for (auto& f : failures) resolve(f.who);
  for (auto& w : watch)
    if (!w.fingerprint) resolve(w.who);
  for (auto& r : reported) resolve(r.who);
  date_events();
  if (keep_all_calls_) return;
  coll = stream_.finish(
      [&](int proc) {
        MemberIdentity id;
        if (valid_process(proc)) {
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

}  // namespace denpex::evidence
