#include "evidence/classify.h"

#include <cstring>

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

// torch's dump_json writes nlohmann's sorted keys: "comm_lib_version", "entries", ...,
// "pg_config", "pg_status", "version"; with many entries only the first keys are in the head.
bool looks_like_fr_json(const std::string& head) {
  static const char* const kStarts[] = {"{\"comm_lib_version\"", "{\"entries\":[{\"collective_seq_id\"",
                                        "{\"entries\":[{", "{\"nccl_comm_state\"", "{\"nccl_version\"",
                                        "{\"pg_config\""};
  for (const char* s : kStarts)
    if (head.compare(0, std::strlen(s), s) == 0)
      return head.find("\"pg_config\"") != std::string::npos || head.find("\"collective_seq_id\"") != std::string::npos ||
             head.find("\"version\"") != std::string::npos;
  return false;
}

bool looks_like_ras_head(const std::string& head) {
  return head.find("\"nccl_version\"") != std::string::npos && head.find("\"communicators\"") != std::string::npos &&
         head.find("\"cuda_runtime_version\"") != std::string::npos;
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
    case InputKind::unreadable: break;
  }
  return "unreadable";
}

bool is_recorder(InputKind k) {
  return k == InputKind::fr_dump || k == InputKind::ras_json || k == InputKind::inspector;
}

InputKind classify_head(const std::string& head, const std::string& encoding) {
  if (ends_with(encoding, "pickle")) return InputKind::fr_dump;
  if (ends_with(encoding, "denpex-trace") || head.compare(0, 23, "{\"schema\":\"denpex.trace") == 0)
    return InputKind::recorder_trace;
  if (first_char(head) != '{') return InputKind::text;
  if (looks_like_ras_head(head)) return InputKind::ras_json;
  if (looks_like_fr_json(head)) return InputKind::fr_dump;
  if (looks_like_inspector(head)) return InputKind::inspector;
  // One JSON object per line that is not Inspector's, or a document: a saved record, a report,
  // or a JSON-lines log the text readers take.
  return head.find("\"schema\"") != std::string::npos || head.find("\"rank\"") != std::string::npos
             ? InputKind::other_json
             : InputKind::text;
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
