// What an input given to `diagnose` or `collectives` is, told by its content (its decoded first
// block, evidence/decode.h), never by its name: a text log, a Flight Recorder dump (pickle or
// JSON), NCCL RAS JSON, NCCL Inspector records, a libdenpex-trace.so trace, or other JSON (a
// saved rank record or report, for the caller's own reader). Inputs that cannot be read
// (missing, binary, corrupt) say so in one line.
#pragma once

#include <string>

#include "evidence/input_source.h"

namespace denpex::evidence {

enum class InputKind { text, fr_dump, ras_json, inspector, recorder_trace, other_json, unreadable };

const char* to_string(InputKind k);

struct ClassifiedInput {
  InputKind kind = InputKind::unreadable;
  std::string path;
  std::string encoding;  // open_input's: "text", "gzip", "pickle", "gzip+pickle", ...
  std::string message;   // for unreadable: one line naming the file and what to do
  // For unreadable: a compressed input damaged before any text decoded (why damaged; else none).
  // The callers note it as cut and judge the other inputs, as for damage found later.
  InputCut cut;
};

// Opens `path` ("-" is standard input, which is not opened here and reads as text) and looks at
// its decoded start, decoding within `limits`. Never throws.
ClassifiedInput classify(const std::string& path, const DecodeLimits& limits = DecodeLimits{});

// The same on a decoded start already read (tests; callers that opened the input themselves).
InputKind classify_head(const std::string& head, const std::string& encoding);

// True for the kinds evidence/recorders.h reads: Flight Recorder dumps, RAS JSON, Inspector.
bool is_recorder(InputKind k);

}  // namespace denpex::evidence
