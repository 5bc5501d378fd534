// What an input given to `diagnose` or `collectives` is, told by its content (its decoded first
// block, evidence/decode.h), never by its name; JSON by the keys it holds (parsed, so spacing, key
// order and line breaks do not matter), never by its first bytes: a text log, a Flight Recorder dump (pickle or
// JSON), NCCL RAS JSON, NCCL Inspector records, a libdenpex-trace.so trace, or other JSON (a
// saved rank record or report, for the caller's own reader). Inputs that cannot be read
// (missing, binary, corrupt) say so in one line.
#pragma once

#include <string>

#include "evidence/input_source.h"

namespace denpex::evidence {

// denpex_report and denpex_page are this project's own outputs (a --json report of any mode, an
// --html page) met among the inputs: not evidence of the job, so the callers skip them, saying so.
// other_json is a saved rank record (--rank-report), which the callers judge.
enum class InputKind { text, fr_dump, ras_json, inspector, recorder_trace, other_json, denpex_report, denpex_page, unreadable };

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

// True when an input of `encoding` is read as the file holds it (text, or a trace's binary ring),
// not through a decompressor: what the readers that open the file themselves can take.
bool read_as_written(const std::string& encoding);

// True for the project's own reports and pages (skipped as inputs).
bool is_own_report(InputKind k);

// True for the kinds evidence/recorders.h reads: Flight Recorder dumps, RAS JSON, Inspector.
bool is_recorder(InputKind k);

}  // namespace denpex::evidence
