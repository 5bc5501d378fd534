// `denpex-probe explain NAME`: what the signal library (signal_table.h) and the finding-code
// table (compare/finding_codes.h) say about one signature or one finding code, as text and as
// JSON. Made from the two tables alone, so `explain`, docs/failures.md and the reports cannot
// say different things.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/signal_table.h"

namespace denpex::evidence {

enum class ExplainStatus {
  signature,  // NAME is a signature id ("nccl.init")
  code,       // NAME is a finding code (`collective-mismatch`)
  family,     // NAME is a family ("nccl"): its signatures listed
  index,      // no NAME: every id and code listed
  line,       // NAME is a log line: the signatures the reading engine reads it with, each explained
  unread,     // NAME is a log line that no signature reads: `text` says so
  unknown,    // NAME is none of these: `text` says so, with the nearest name when there is one
  table_error // the compiled-in signal table does not parse: `text` says where
};

struct Explanation {
  ExplainStatus status = ExplainStatus::unknown;
  std::string text;          // the human answer, ending in a newline
  nlohmann::json json;       // the same as JSON ({"error": ...} for unknown and table_error)
  std::string suggestion;    // unknown: the nearest id or code ("" when none is near)
};

// The answer for `name` ("" = the index) from `table`. Never fails: an unknown name is a
// status, not an error.
Explanation explain(const std::string& name, const SignalTable& table);

// The signatures that read `text` (one log line, or a few pasted together) when it goes through
// the reading engine as a log does (line repair, NCCL record headers, the family readers), each
// once, in table order. Empty when none reads it. Never throws.
std::vector<const Signal*> signatures_reading(const std::string& text);

// Whether `name` is to be read as a log line rather than a name: it holds a space, a tab or a
// line break (no id, code or family does).
bool looks_like_line(const std::string& name);

// The answer for a log line: every signature that reads it (explain_signal's text each, after a
// line naming them), or status unread. The JSON is {"line": ..., "signatures": [...]}.
Explanation explain_line(const std::string& text, const SignalTable& table);

// Every name explain knows (ids, codes, families): the candidates for "did you mean".
std::vector<std::string> explain_names(const SignalTable& table);

// Puts the nearest name into an unknown name's answer (text, JSON); nothing for other
// statuses or an empty suggestion. The caller picks it (launch/did_you_mean.h).
void add_suggestion(Explanation* e, const std::string& suggestion);

// The variables a signature's tells_apart says to rerun with ("NCCL_DEBUG=INFO",
// "TORCHELASTIC_ERROR_FILE"), in the order written; empty when it names none.
std::vector<std::string> rerun_variables(const std::string& tells_apart);

// The signatures of `table` that lead to finding code `code`, in table order.
std::vector<const Signal*> signals_with_code(const SignalTable& table, const std::string& code);

// The family names in the order docs/failures.md shows them; families of the table not in the
// fixed order follow, in table order.
std::vector<std::string> family_order(const SignalTable& table);

// One signature as JSON (the fields explain prints, verify expanded).
nlohmann::json signal_json(const Signal& s);

}  // namespace denpex::evidence
