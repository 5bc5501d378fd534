#include "launch/report_output.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/atomic_file.h"
#include "compare/terminal_text.h"
#include "compare/text_paint.h"
#include "report/html_report.h"
#include "report/lead.h"
#include "report/redact.h"

namespace denpex {

bool use_color(const ReportOutput& out, int fd) {
  if (out.color == "always") return true;
  if (out.color == "never" || !out.tty_color) return false;
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !std::getenv("NO_COLOR") && !(term && std::strcmp(term, "dumb") == 0);
}

namespace {

int write(const ReportOutput& out, const char* option, const std::string& path, const std::string& content) {
  std::string error;
  if (write_file_atomically(path, content, &error)) return 0;
  // A standard stream's failure reads "cannot write to standard output: <why>", without the
  // option, as the same failure of the text report does.
  if (standard_stream_fd(path) >= 0) fmt::print(stderr, "{}: {}\n", out.tool, terminal_text(error));
  else fmt::print(stderr, "{}: {} {}\n", out.tool, option, terminal_text(error));
  return 2;
}

int emit(const ReportOutput& out, const nlohmann::json& original, const std::string& original_text) {
  nlohmann::json redacted;
  std::string text = out.brief ? brief_text(original) : original_text;
  std::vector<std::string> before = out.notes_before, after = out.notes_after;
  if (out.redact) {
    Redactor r = Redactor::from_report(original);
    redacted = r.apply(original);
    text = out.brief ? brief_text(redacted) : r.apply(text);
    for (auto* notes : {&before, &after})
      for (auto& n : *notes) n = r.apply(n);
  }
  for (const auto& n : before) fmt::print(stderr, "{}\n", terminal_text(n));
  const nlohmann::json& report = out.redact ? redacted : original;
  std::FILE* human = out.json_path == "-" ? stderr : stdout;
  if (!out.quiet && !text.empty()) {
    // Input text (log lines, host names, paths) is shown, never obeyed by the terminal; the
    // colours are ours, added after.
    text = terminal_text(text, LineBreaks::keep);
    if (use_color(out, ::fileno(human))) text = paint_report(text);
    if (text.back() != '\n') text += '\n';
    // A report that did not reach its reader is not a verdict (exit 2); when stderr is the
    // stream that failed, there is nowhere to say so.
    std::string error;
    if (!write_standard_stream(human, text, &error)) {
      if (human == stdout) fmt::print(stderr, "{}: {}\n", out.tool, error);
      return 2;
    }
  }
  int code = 0;
  // Evidence and paths are raw bytes from outside: invalid UTF-8 becomes U+FFFD, never an
  // exception.
  if (!out.json_path.empty())
    code = write(out, "--json", out.json_path,
                 report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!out.html_path.empty() && code == 0) code = write(out, "--html", out.html_path, render_html(report));
  for (const auto& n : after) fmt::print(stderr, "{}\n", terminal_text(n));
  return code;
}

}  // namespace

int emit_report(const ReportOutput& out, const nlohmann::json& report, const std::string& text) {
  try {
    return emit(out, report, text);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: cannot write the report: {}\n", out.tool, e.what());
    return 2;
  }
}

}  // namespace denpex
