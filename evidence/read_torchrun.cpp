// torchrun's ChildFailedError summary: "Failures:" / "Root Cause (first observed failure):",
// then per failed local rank "[N]:" and "time: ..", "host: ..", "rank: ..", "exitcode: ..",
// "traceback : Signal 6 (SIGABRT) received by PID ..", up to the closing "=====" line. Pasted
// through a page that renders it as a table, the layout is lost: field names stand alone on
// their lines with the values after them, or fields are glued into one line
// ("rank5 (local rank: 1)exitcode: -9 (pid: 4410)error file: <N/A>").
#include <algorithm>
#include <utility>
#include <vector>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void flush_entry(LogReader& r, FileState& st) {
  if (st.have_entry) r.add_launcher(st.entry);
  st.have_entry = false;
  st.entry_keys.clear();
}

void entry_field(std::string_view key, std::string_view val, Record& rec) {
  LauncherEntry& e = rec.st.entry;
  if (key == "time") {
    parse_timestamp(val, &e.when);
  } else if (key == "host") {
    e.host = std::string(cut(val, 128));
  } else if (key == "rank") {
    e.local = false;
    long long r = to_ll(val);
    if (r >= 0 && r < kMaxRank) e.rank = static_cast<int>(r);
  } else if (key == "exitcode") {
    e.exitcode = std::string(trim(val.substr(0, val.find(' '))));
    size_t pid = val.find("pid: ");
    if (pid != std::string_view::npos) e.pid = to_ll(val.substr(pid + 5));
  } else if (key == "traceback") {
    size_t s = val.find("(SIG");
    if (s != std::string_view::npos) e.signal = std::string(val.substr(s + 1, val.find(')', s) - s - 1));
  }
}

// The entry's field names; a table's rendering drops the underscore of "error_file".
constexpr std::string_view kEntryKeys[] = {"time", "host", "rank", "exitcode", "error_file", "error file", "traceback"};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// The field name starting at t[i], "" when none does: one not inside a word or parentheses
// ("local_rank", "(local rank: 2)"), followed by its colon, or by the rank's number where a
// paste glued them ("rank2 (...").
std::string_view key_at(std::string_view t, size_t i, int depth) {
  if (depth > 0 || (i > 0 && is_letter(t[i - 1]))) return {};
  for (std::string_view k : kEntryKeys) {
    if (t.substr(i, k.size()) != k) continue;
    size_t j = i + k.size();
    while (j < t.size() && t[j] == ' ') ++j;
    if (j < t.size() && (t[j] == ':' || (i == 0 && k == "rank" && j == i + k.size() && t[j] >= '0' && t[j] <= '9')))
      return k;
  }
  return {};
}

struct EntryField {
  std::string_view key;
  size_t from = 0;  // where its value starts; it ends where the next field's name does
};

// The fields of one line of the entry: "key : value", or several glued together. Empty when the
// line does not start with a field name.
std::vector<std::pair<std::string_view, std::string_view>> entry_fields(std::string_view t) {
  std::vector<EntryField> at;
  std::vector<size_t> ends;
  int depth = 0;
  for (size_t i = 0; i < t.size() && at.size() < 8; ++i) {
    if (t[i] == '(') ++depth;
    if (t[i] == ')' && depth > 0) --depth;
    std::string_view k = key_at(t, i, depth);
    if (k.empty()) continue;
    if (at.empty() && i > 0) return {};
    if (!at.empty()) ends.push_back(i);
    size_t v = i + k.size();
    while (v < t.size() && (t[v] == ' ' || t[v] == ':')) ++v;
    at.push_back(EntryField{k, v});
    i = v - 1;
  }
  ends.push_back(t.size());
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (size_t n = 0; n < at.size(); ++n) out.emplace_back(at[n].key, trim(t.substr(at[n].from, ends[n] - at[n].from)));
  return out;
}

bool is_entry_key(std::string_view t) {
  for (std::string_view k : kEntryKeys)
    if (t == k) return true;
  return false;
}

// The name that stood alone a value line belongs to: a time goes to "time", anything else to
// the first other name (line repair takes a time standing alone for a prefix, so its line may
// never come). Removes it from the names waiting; "" when none fits.
std::string_view take_key(std::string_view t, FileState& st) {
  When w;
  bool time = parse_timestamp(t, &w) >= t.size() * 2 / 3;
  for (size_t i = 0; i < st.entry_keys.size(); ++i) {
    if ((st.entry_keys[i] == "time") != time) continue;
    std::string_view k;
    for (std::string_view known : kEntryKeys)
      if (known == st.entry_keys[i]) k = known;
    st.entry_keys.erase(st.entry_keys.begin() + static_cast<long>(i));
    return k;
  }
  return {};
}

// A line inside an entry: its fields, a field name alone, or the value of a name that stood
// alone. False when the line is none of these.
bool entry_line(std::string_view t, Record& rec) {
  FileState& st = rec.st;
  if (is_entry_key(t)) {
    if (st.entry_keys.size() < 8) st.entry_keys.emplace_back(t);
    return true;
  }
  auto fields = entry_fields(t);
  if (fields.empty() && !st.entry_keys.empty()) {
    std::string_view key = take_key(t, st);
    if (!key.empty()) fields.emplace_back(key, t);
  }
  // Another "name: value" of the entry (a later torch's extra field) says nothing more; a line
  // without a colon ends it.
  if (fields.empty() && t.find(':') == std::string_view::npos) return false;
  bool proves = false;
  for (const auto& [key, value] : fields) {
    entry_field(key, value, rec);
    proves = proves || key == "rank" || key == "exitcode";
  }
  if (proves) st.entry.evidence.text += " " + std::string(cut(t, 80));
  ++rec.r.records;
  return true;
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
  if (t.find("<NO_OTHER_FAILURES>") != std::string_view::npos || t.find("<NO OTHER FAILURES>") != std::string_view::npos)
    return true;
  return st.have_entry && entry_line(t, rec);
}

bool block_line(std::string_view t, Record& rec) {
  bool in = false;
  if (rec.st.block == "fr_trace") in = fr_trace_line(t, rec);
  else if (rec.st.block == "ras") in = ras_line(t, rec);
  else if (rec.st.block == "torchrun") in = torchrun_line(t, rec);
  else if (rec.st.block == "mpirun") in = mpirun_line(t, rec);
  else if (rec.st.block.rfind("env.", 0) == 0) in = env_line(t, rec);
  if (!in) end_block(rec.r, rec.st);
  return in;
}

void end_block(LogReader& r, FileState& st) {
  if (st.block == "fr_trace") r.reported.push_back(st.report);
  if (st.block == "ras") ras_finish(r, st);
  if (st.block == "torchrun") flush_entry(r, st);
  // Open MPI's block without its exit code was cut: the name alone says too little to keep.
  if (st.block == "mpirun") st.have_entry = false;
  st.block.clear();
  horovod_finish(r, st);
}

}  // namespace denpex::evidence
