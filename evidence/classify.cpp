#include "evidence/classify.h"

#include <cctype>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "evidence/inspector.h"
#include "evidence/input_source.h"
#include "evidence/ras_json.h"

namespace denpex::evidence {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The first non-blank byte, or '\0'.
char first_char(const std::string& head) {
  for (char c : head)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c;
  return '\0';
}

// The keys of a JSON document's start: its top-level keys, the keys of the first object in its
// "entries" array, and its "schema" string. Read by a SAX parser that stops at the first error,
// so a head cut inside a large document (or the first line of JSON Lines) still gives the keys
// before the cut.
struct JsonKeys {
  std::set<std::string> top, first_entry;
  std::string schema;
};

class KeyCollector : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit KeyCollector(JsonKeys* out) : out_(out) {}
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override {
    if (depth_ == 1 && key_ == "schema") out_->schema = s.substr(0, 64);
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    ++depth_;
    if (depth_ == 3 && in_entries_ && !entry_seen_) in_entry_ = true;
    return depth_ < 64;
  }
  bool end_object() override {
    if (depth_ == 3 && in_entry_) {
      in_entry_ = false;
      entry_seen_ = true;
    }
    --depth_;
    return value();
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (depth_ == 2 && key_ == "entries") in_entries_ = true;
    return depth_ < 64;
  }
  bool end_array() override {
    if (depth_ == 2) in_entries_ = false;
    --depth_;
    return value();
  }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      key_ = k;
      // A document is known by its first keys: enough to tell it, a bound on the work.
      if (out_->top.size() < 256) out_->top.insert(k);
    } else if (depth_ == 3 && in_entry_ && out_->first_entry.size() < 256) {
      out_->first_entry.insert(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool value() { return true; }
  JsonKeys* out_;
  int depth_ = 0;
  std::string key_;
  bool in_entries_ = false, in_entry_ = false, entry_seen_ = false;
};

JsonKeys json_keys(const std::string& head) {
  JsonKeys keys;
  KeyCollector collector(&keys);
  // Not strict: JSON Lines give the first line's object and stop there.
  nlohmann::json::sax_parse(head, &collector, nlohmann::json::input_format_t::json, false);
  return keys;
}

bool has(const std::set<std::string>& keys, const char* k) { return keys.count(k) > 0; }

// A Flight Recorder dump (torch's _dump_nccl_trace_json, or json.dump of the pickle's dict, any
// key order and spacing): its own keys, or an entries list whose first entry is a collective's.
bool fr_keys(const JsonKeys& k) {
  if (has(k.top, "pg_config") || has(k.top, "pg_status") || has(k.top, "nccl_comm_state")) return true;
  if (!has(k.top, "entries")) return false;
  return has(k.first_entry, "collective_seq_id") || has(k.first_entry, "record_id") ||
         has(k.first_entry, "profiling_name") || has(k.top, "comm_lib_version") || has(k.top, "version");
}

// NCCL RAS's JSON output (ncclras -f json).
bool ras_keys(const JsonKeys& k) { return has(k.top, "nccl_version") && has(k.top, "communicators"); }

// A saved rank record (--rank-report): a rank and what the probe found.
bool rank_record_keys(const JsonKeys& k) {
  return has(k.top, "rank") && (has(k.top, "nccl") || has(k.top, "torch") || has(k.top, "cuda_driver"));
}

bool starts_with_nocase(const std::string& s, size_t at, const char* prefix) {
  size_t n = std::strlen(prefix);
  if (s.size() < at + n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != prefix[i]) return false;
  return true;
}

// A page written by --html: its generator tag, or (older pages) its footer.
bool own_page(const std::string& head) {
  size_t at = head.find_first_not_of(" \t\r\n");
  if (at == std::string::npos || !starts_with_nocase(head, at, "<!doctype html")) return false;
  return head.find("<meta name=\"generator\" content=\"denpex-probe\">") != std::string::npos ||
         head.find("<footer>denpex-probe report (") != std::string::npos;
}

}  // namespace

const char* to_string(InputKind k) {
  switch (k) {
    case InputKind::text: return "text log";
    case InputKind::fr_dump: return "Flight Recorder dump";
    case InputKind::ras_json: return "NCCL RAS JSON";
    case InputKind::inspector: return "NCCL Inspector records";
    case InputKind::recorder_trace: return "libdenpex-trace.so trace";
    case InputKind::other_json: return "JSON";
    case InputKind::denpex_report: return "denpex-probe report";
    case InputKind::denpex_page: return "denpex-probe HTML page";
    case InputKind::unreadable: break;
  }
  return "unreadable";
}

bool read_as_written(const std::string& encoding) { return encoding == "text" || encoding == "denpex-trace"; }

bool is_own_report(InputKind k) { return k == InputKind::denpex_report || k == InputKind::denpex_page; }

bool is_recorder(InputKind k) {
  return k == InputKind::fr_dump || k == InputKind::ras_json || k == InputKind::inspector;
}

InputKind classify_head(const std::string& head, const std::string& encoding) {
  if (ends_with(encoding, "pickle")) return InputKind::fr_dump;
  if (ends_with(encoding, "denpex-trace")) return InputKind::recorder_trace;
  if (own_page(head)) return InputKind::denpex_page;
  if (first_char(head) != '{') return InputKind::text;
  JsonKeys k = json_keys(head);
  if (k.schema.rfind("denpex.trace", 0) == 0) return InputKind::recorder_trace;
  if (k.schema.rfind("denpex.report", 0) == 0) return InputKind::denpex_report;
  if (ras_keys(k)) return InputKind::ras_json;
  if (fr_keys(k)) return InputKind::fr_dump;
  if (looks_like_inspector(head)) return InputKind::inspector;
  // A saved rank record is judged; any other JSON (a JSON-lines log) is read as text.
  return rank_record_keys(k) || !k.schema.empty() ? InputKind::other_json : InputKind::text;
}

ClassifiedInput classify(const std::string& path, const DecodeLimits& limits) {
  ClassifiedInput out;
  out.path = path;
  if (path == "-") {
    out.kind = InputKind::text;
    out.encoding = "text";
    return out;
  }
  OpenedInput in = open_input(path, limits);
  out.encoding = in.encoding;
  if (in.status != OpenedInput::Status::ok) {
    out.message = in.message;
    out.cut = in.cut;
    return out;
  }
  std::string head(64 * 1024, '\0'), error;
  size_t have = 0;
  while (have < head.size()) {
    long n = in.source->read(&head[have], head.size() - have, &error);
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  head.resize(have);
  out.kind = classify_head(head, in.encoding);
  return out;
}

}  // namespace denpex::evidence
