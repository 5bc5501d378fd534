#include "launch/explain_cmd.h"

#include <iostream>

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
  if (failed) std::cerr << "denpex-probe explain: " << e.text;
  else if (!options.json) std::cout << e.text;
  return failed ? 2 : 0;
}

}  // namespace denpex
