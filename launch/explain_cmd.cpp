#include "launch/explain_cmd.h"

#include <iostream>

#include "compare/terminal_text.h"
#include "evidence/explain.h"
#include "launch/did_you_mean.h"

namespace denpex {

int run_explain(const ExplainOptions& options) {
  const evidence::SignalTable& table = evidence::builtin_signals();
  evidence::Explanation e = evidence::explain(options.name, table);
  if (e.status == evidence::ExplainStatus::unknown)
    evidence::add_suggestion(&e, did_you_mean(options.name, evidence::explain_names(table)));
  const bool failed = e.status == evidence::ExplainStatus::unknown ||
                      e.status == evidence::ExplainStatus::table_error;
  if (options.json) std::cout << e.json.dump(2) << "\n";
  // The name asked for is echoed in the answer: shown, never obeyed by the terminal.
  if (failed) std::cerr << "denpex-probe explain: " << terminal_text(e.text, LineBreaks::keep);
  else if (!options.json) std::cout << terminal_text(e.text, LineBreaks::keep);
  return failed ? 2 : 0;
}

}  // namespace denpex
