// The last step of every mode that reports (the gate, compare, collectives, diagnose): the
// finished JSON report and the text made for it go out the same way everywhere: --redact first,
// then --json, --html, and the text (--brief: the verdict and lead lines only; --color).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

struct ReportOutput {
  std::string json_path;     // "" = none, "-" = stdout (the text then goes to stderr)
  std::string html_path;     // "" = none
  bool quiet = false;        // no text
  bool brief = false;        // the verdict and lead lines only (report/lead.h)
  bool redact = false;       // host names, addresses, paths and users replaced (report/redact.h)
  std::string color = "auto";  // "auto" (a terminal, unless NO_COLOR or TERM=dumb), "always", "never"
  bool tty_color = true;     // false where isatty() cannot be trusted (ranks under mpirun)
  std::string tool = "denpex-probe";  // names the program in error messages
  // Lines for stderr about the inputs (skipped, cut, refused), printed before the text, and after
  // it (the "could not decide" line): with --redact they are redacted with the report's mapping,
  // since they name the same hosts and files.
  std::vector<std::string> notes_before, notes_after;
};

// Writes `report` and prints `text` (the mode's own text report, ignored with --brief, which is
// made from the JSON). Returns 0, or 2 when --json or --html cannot be written (one line on
// stderr names the option, the file and why; the text is printed first all the same). Never
// throws.
int emit_report(const ReportOutput& out, const nlohmann::json& report, const std::string& text);

// Whether text to `fd` gets colour under `out.color`.
bool use_color(const ReportOutput& out, int fd);

}  // namespace denpex
