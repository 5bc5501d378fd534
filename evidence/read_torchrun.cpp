// torchrun's ChildFailedError summary: "Failures:" / "Root Cause (first observed failure):",
// then per failed local rank "[N]:" and "time: ..", "host: ..", "rank: ..", "exitcode: ..",
// "traceback : Signal 6 (SIGABRT) received by PID ..", up to the closing "=====" line.
#include <algorithm>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void flush_entry(LogReader& r, FileState& st) {
  if (st.have_entry) r.add_launcher(st.entry);
  st.have_entry = false;
}

void entry_field(std::string_view key, std::string_view val, std::string_view t, Record& rec) {
  LauncherEntry& e = rec.st.entry;
  if (key == "time") {
    parse_timestamp(val, &e.when);
  } else if (key == "host") {
    e.host = std::string(cut(val, 128));
  } else if (key == "rank") {
    long long r = to_ll(val);
    if (r >= 0 && r < kMaxRank) e.rank = static_cast<int>(r);
    e.evidence.text += " " + std::string(cut(t, 80));
  } else if (key == "exitcode") {
    e.exitcode = std::string(trim(val.substr(0, val.find(' '))));
    size_t pid = val.find("pid: ");
    if (pid != std::string_view::npos) e.pid = to_ll(val.substr(pid + 5));
    e.evidence.text += " " + std::string(cut(t, 80));
  } else if (key == "traceback") {
    size_t s = val.find("(SIG");
    if (s != std::string_view::npos) e.signal = std::string(val.substr(s + 1, val.find(')', s) - s - 1));
  }
}

}  // namespace

void read_torchrun(const Hit& hit, Record& rec) {
  if (rec.st.block != "torchrun") end_block(rec.r, rec.st);
  flush_entry(rec.r, rec.st);
  rec.st.block = "torchrun";
  rec.st.root_cause = starts(rec.text, "Root Cause");
  rec.st.entry.evidence.signal = hit.signal->id;
}

bool torchrun_line(std::string_view t, Record& rec) {
  FileState& st = rec.st;
  if (starts(t, "Failures:") || starts(t, "Root Cause (first observed failure)")) {
    flush_entry(rec.r, st);
    st.root_cause = starts(t, "Root Cause");
    return true;
  }
  if (starts(t, "[") && t.size() <= 8 && t.back() == ':') {
    flush_entry(rec.r, st);
    st.entry = LauncherEntry();
    st.entry.root_cause = st.root_cause;
    st.entry.local = true;  // "[N]:" is the local rank; "rank:" below gives the global one
    st.entry.evidence = rec.r.evidence(st, t);
    st.entry.evidence.signal = "torchrun.summary";
    st.have_entry = true;
    return true;
  }
  // "-----" separates the parts; the closing "=====" ends the summary.
  if (starts(t, "===")) return false;
  if (starts(t, "---")) {
    flush_entry(rec.r, st);
    return true;
  }
  if (t.find("<NO_OTHER_FAILURES>") != std::string_view::npos) return true;
  size_t c = t.find(':');
  if (st.have_entry && c != std::string_view::npos) {
    std::string_view key = trim(t.substr(0, c));
    if (key == "rank") st.entry.local = false;
    entry_field(key, trim(t.substr(c + 1)), t, rec);
    ++rec.r.records;
    return true;
  }
  return false;
}

bool block_line(std::string_view t, Record& rec) {
  bool in = false;
  if (rec.st.block == "fr_trace") in = fr_trace_line(t, rec);
  else if (rec.st.block == "ras") in = ras_line(t, rec);
  else if (rec.st.block == "torchrun") in = torchrun_line(t, rec);
  else if (rec.st.block.rfind("env.", 0) == 0) in = env_line(t, rec);
  if (!in) end_block(rec.r, rec.st);
  return in;
}

void end_block(LogReader& r, FileState& st) {
  if (st.block == "fr_trace") r.reported.push_back(st.report);
  if (st.block == "ras") ras_finish(r, st);
  if (st.block == "torchrun") flush_entry(r, st);
  st.block.clear();
  horovod_finish(r, st);
}

}  // namespace denpex::evidence
