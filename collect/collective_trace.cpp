#include "collect/collective_trace.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace denpex {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "denpex.trace.v1";

// Reads an integer field that may be absent or null; `fallback` then.
long long int_field(const json& j, const char* key, long long fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

void note_unreadable(CollectiveInput* in, long long line_no, const std::string& text) {
  ++in->unreadable;
  if (in->unreadable_samples.size() < kMaxUnreadableSamples)
    in->unreadable_samples.push_back(fmt::format("{}:{}: {}", in->path, line_no, text.substr(0, 200)));
}

bool get_bounded_line(std::istream& in, std::string* line, bool* cut, size_t max,
                      bool skip_rest) {
  line->clear();
  *cut = false;
  bool any = false;
  size_t total = 0;
  char buf[16 * 1024];
  for (;;) {
    in.getline(buf, sizeof buf);
    const auto n = static_cast<size_t>(in.gcount());
    if (n > 0) any = true;
    // No failbit: the line ended, its '\n' extracted (counted in gcount, not stored) unless
    // the input ended first. failbit without eof: the buffer filled and the line goes on.
    const bool ended = !in.fail() || in.eof() || in.bad();
    const size_t keep = !in.fail() && !in.eof() ? n - 1 : n;
    total += keep;
    if (line->size() < max) line->append(buf, std::min(keep, max - line->size()));
    if (ended) {
      *cut = total > max;
      return any;
    }
    in.clear();
    if (total > max) {
      // Past the cap: skip the rest of the line (ignore() scans the buffer with memchr).
      *cut = true;
      if (!skip_rest) return true;
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      if (in.eof()) in.clear(std::ios::eofbit);
      return true;
    }
  }
}

bool is_collective_trace(const std::string& first_line) {
  json j = json::parse(first_line, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && string_field(j, "schema") == kSchema;
}

CollectiveInput read_collective_trace(const std::string& path) {
  CollectiveInput in;
  in.path = path;
  in.format = "trace";
  std::ifstream f(path);
  if (!f) {
    in.status = CollectiveInput::Status::missing;
    in.error = "cannot open file";
    return in;
  }
  std::string line;
  bool cut = false;
  if (!get_bounded_line(f, &line, &cut) || cut || !is_collective_trace(line)) {
    in.status = CollectiveInput::Status::malformed;
    in.error = fmt::format("first line is not a {} header", kSchema);
    return in;
  }
  in.lines = 1;
  json header = json::parse(line, nullptr, false);
  std::string host = string_field(header, "host");
  long long pid = int_field(header, "pid", -1);
  int global_rank = static_cast<int>(int_field(header, "rank", -1));
  if (!host.empty()) in.hosts.push_back(host);

  std::map<std::pair<std::string, int>, size_t> index;  // (comm, rank in comm) -> sequences[i]
  while (get_bounded_line(f, &line, &cut)) {
    ++in.lines;
    if (line.empty()) continue;
    if (cut) {  // no trace record is this long
      note_unreadable(&in, in.lines, line);
      continue;
    }
    json j = json::parse(line, nullptr, false);
    std::string ev = j.is_object() ? string_field(j, "ev") : std::string();
    if (ev == "group_start" || ev == "group_end") {
      ++in.used;
      continue;
    }
    std::string comm = ev.empty() ? std::string() : string_field(j, "comm");
    if (ev.empty() || comm.empty()) {
      note_unreadable(&in, in.lines, line);
      continue;
    }
    ++in.used;
    if (ev == "comm") continue;  // the calls carry rank and size themselves
    if (ev != "call") {
      note_unreadable(&in, in.lines, line);
      continue;
    }
    int rank = static_cast<int>(int_field(j, "rank", -1));
    if (comm.rfind("local:", 0) == 0 || rank < 0) {
      ++in.unattributed_calls;
      continue;
    }
    auto key = std::make_pair(comm, rank);
    auto it = index.find(key);
    if (it == index.end()) {
      CommSequence s;
      s.comm = comm;
      s.rank = rank;
      s.nranks = static_cast<int>(int_field(j, "nranks", -1));
      s.global_rank = global_rank;
      s.host = host;
      s.pid = pid;
      s.source = path;
      it = index.emplace(key, in.sequences.size()).first;
      in.sequences.push_back(std::move(s));
    }
    CollectiveCall c;
    c.op_name = string_field(j, "op");
    c.kind = parse_coll_kind(c.op_name);
    c.count = static_cast<unsigned long long>(int_field(j, "count", 0));
    c.datatype = static_cast<int>(int_field(j, "dtype", -1));
    c.redop = static_cast<int>(int_field(j, "redop", -1));
    c.root = static_cast<int>(int_field(j, "root", -1));
    c.peer = static_cast<int>(int_field(j, "peer", -1));
    c.trace_seq = int_field(j, "seq", -1);
    in.sequences[it->second].calls.push_back(c);
  }
  return in;
}

}  // namespace denpex
