// `denpex-probe explain [NAME]`: what a signature or a finding code means, from the signal
// library and the finding-code table (evidence/explain.h makes the text).
#pragma once

#include <string>

namespace denpex {

struct ExplainOptions {
  std::string name;    // a signature id, a finding code, a family, a log line (it holds a space),
                       // or "-" (lines from standard input); "" = list them all
  bool json = false;   // the answer as JSON on stdout
};

// Prints the answer on stdout. Returns 0 when NAME is known (or absent) or a line some signature
// reads, 2 when it is not (one line on stderr, with the nearest known name when one is near), when
// no signature reads the line, or when the compiled-in signal library does not parse. Never throws.
int run_explain(const ExplainOptions& options);

}  // namespace denpex
