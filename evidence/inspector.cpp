#include "evidence/inspector.h"

#include <algorithm>
#include <climits>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "compare/bounded_json.h"
#include "evidence/line_repair.h"

namespace denpex::evidence {
namespace {

using json = nlohmann::json;
constexpr size_t kMaxLine = 64 * 1024;

bool is_record(const json& j) {
  return j.is_object() && j.contains("header") && j["header"].is_object() &&
         (j.contains("coll_perf") || j.contains("p2p_perf"));
}

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

long long int_at(const json& j, const char* key, long long fallback = -1) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  if (it->is_number_float()) {  // past long long's range (or NaN) is not a value the plugin writes
    double d = it->get<double>();
    return d > -9.2e18 && d < 9.2e18 ? static_cast<long long>(d) : fallback;
  }
  if (it->is_number_unsigned() && it->get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX))
    return LLONG_MAX;
  return it->get<long long>();
}

using Key = std::tuple<std::string, int, long long>;  // communicator id, rank, pid

class Reader {
 public:
  explicit Reader(InspectorInput* in) : in_(in) {}
  void line(const std::string& text) {
    ++in_->lines;
    if (text.find_first_not_of(" \t\r") == std::string::npos) return;
    BoundedJson j = parse_bounded_json(text, 8);
    if (j.status != BoundedJsonStatus::ok || !is_record(j.value)) {
      ++in_->unreadable;
      return;
    }
    record(j.value);
  }
  void finish();

 private:
  void record(const json& j);
  InspectorInput* in_;
  std::map<Key, CommSequence> seqs_;
};

void Reader::record(const json& j) {
  const json& h = j["header"];
  const json meta = j.contains("metadata") && j["metadata"].is_object() ? j["metadata"] : json::object();
  if (!rank_like(int_at(h, "rank")) || !rank_like(int_at(h, "n_ranks"))) {
    ++in_->unreadable;
    return;
  }
  if (in_->version.empty()) in_->version = str_at(meta, "inspector_output_format_version");
  Key key{str_at(h, "id"), static_cast<int>(int_at(h, "rank")), int_at(meta, "pid")};
  CommSequence& s = seqs_[key];
  if (s.comm.empty()) {
    s.comm = std::get<0>(key);
    s.rank = std::get<1>(key);
    s.nranks = static_cast<int>(int_at(h, "n_ranks"));
    s.host = str_at(meta, "hostname");
    s.pid = std::get<2>(key);
    s.source = in_->source;
  }
  bool coll = j.contains("coll_perf");
  const json& p = coll ? j["coll_perf"] : j["p2p_perf"];
  if (!p.is_object() || (!coll && !rank_like(int_at(p, "p2p_peer")))) {
    ++in_->unreadable;
    return;
  }
  CollectiveCall c;
  c.op_name = str_at(p, coll ? "coll" : "p2p");
  c.kind = parse_coll_kind(c.op_name.view());
  c.coll_seq = int_at(p, coll ? "coll_sn" : "p2p_sn");
  c.count = static_cast<unsigned long long>(std::max(0LL, int_at(p, coll ? "coll_msg_size_bytes" : "p2p_msg_size_bytes", 0)));
  if (!coll) c.peer = static_cast<int>(int_at(p, "p2p_peer"));
  c.trace_seq = in_->lines;
  c.state = CallState::returned;  // the plugin writes completed operations only
  s.calls.push_back(c);
  ++in_->records;
}

void Reader::finish() {
  for (auto& [key, s] : seqs_) {
    // Periodic dumps may write an operation again: keep each sequence number once.
    std::stable_sort(s.calls.begin(), s.calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
      return std::make_tuple(a.kind == CollKind::send || a.kind == CollKind::recv, a.coll_seq) <
             std::make_tuple(b.kind == CollKind::send || b.kind == CollKind::recv, b.coll_seq);
    });
    s.calls.erase(std::unique(s.calls.begin(), s.calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
      return a.coll_seq == b.coll_seq && a.kind == b.kind;
    }), s.calls.end());
    in_->sequences.push_back(std::move(s));
  }
}

}  // namespace

bool looks_like_inspector(const std::string& first_block) {
  size_t end = first_block.find('\n');
  std::string first = first_block.substr(0, end == std::string::npos ? first_block.size() : end);
  if (first.find("\"header\"") == std::string::npos) return false;
  BoundedJson j = parse_bounded_json(first, 8);
  return j.status == BoundedJsonStatus::ok && is_record(j.value);
}

InspectorInput read_inspector(ByteSource* source, const std::string& name) {
  InspectorInput in;
  in.source = name;
  Reader r(&in);
  std::string buf(1 << 16, '\0'), line, error;
  bool overlong = false;
  for (;;) {
    long n = source->read(&buf[0], buf.size(), &error);
    if (n < 0) {
      in.message = error;
      break;
    }
    if (n == 0) break;
    for (long i = 0; i < n; ++i) {
      char ch = buf[static_cast<size_t>(i)];
      if (ch != '\n') {
        if (line.size() < kMaxLine) {
          line.push_back(ch);
        } else {
          overlong = true;
        }
        continue;
      }
      if (overlong) {
        ++in.lines;
        ++in.unreadable;
      } else {
        r.line(line);
      }
      line.clear();
      overlong = false;
    }
  }
  if (!line.empty()) r.line(line);
  r.finish();
  in.status = in.records > 0 ? InspectorInput::Status::ok : InspectorInput::Status::malformed;
  if (in.records == 0 && in.message.empty())
    in.message = fmt::format("{}: no NCCL Inspector record in it (one JSON object per line with "
                             "\"header\" and \"coll_perf\"): give the files of NCCL_INSPECTOR_DUMP_DIR", name);
  else if (in.unreadable > 0 && in.message.empty())
    in.message = fmt::format("{}: {} of {} lines are not Inspector records and were skipped", name,
                             in.unreadable, in.lines);
  return in;
}

}  // namespace denpex::evidence
