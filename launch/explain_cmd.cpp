#include "launch/explain_cmd.h"

#include <iostream>
#include <string>

#include "compare/terminal_text.h"
#include "evidence/explain.h"
#include "launch/did_you_mean.h"

namespace denpex {

namespace {

// A pasted line or a few: what is past this is not read (a whole log is diagnose's input).
constexpr std::size_t kMaxStdin = 64 * 1024;

std::string read_stdin() {
  std::string text;
  char buf[4096];
  while (text.size() < kMaxStdin && std::cin.read(buf, sizeof buf).gcount() > 0)
    text.append(buf, static_cast<std::size_t>(std::cin.gcount()));
  return text.substr(0, kMaxStdin);
}

}  // namespace

int run_explain(const ExplainOptions& options) {
  const evidence::SignalTable& table = evidence::builtin_signals();
  const bool from_stdin = options.name == "-";
  const std::string name = from_stdin ? read_stdin() : options.name;
  if (from_stdin || evidence::looks_like_line(name)) {
    evidence::Explanation e = evidence::explain_line(name, table);
    if (options.json) std::cout << e.json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    if (e.status != evidence::ExplainStatus::line) {
      std::cerr << "denpex-probe explain: " << terminal_text(e.text, LineBreaks::keep);
      return 2;
    }
    if (!options.json) std::cout << terminal_text(e.text, LineBreaks::keep);
    return 0;
  }
  evidence::Explanation e = evidence::explain(name, table);
  if (e.status == evidence::ExplainStatus::unknown)
    evidence::add_suggestion(&e, did_you_mean(name, evidence::explain_names(table)));
  const bool failed = e.status == evidence::ExplainStatus::unknown ||
                      e.status == evidence::ExplainStatus::table_error;
  if (options.json) std::cout << e.json.dump(2) << "\n";
  // The name asked for is echoed in the answer: shown, never obeyed by the terminal.
  if (failed) std::cerr << "denpex-probe explain: " << terminal_text(e.text, LineBreaks::keep);
  else if (!options.json) std::cout << terminal_text(e.text, LineBreaks::keep);
  return failed ? 2 : 0;
}

}  // namespace denpex
