// `denpex-probe diagnose PATH...`: reads a failed job's logs (files, directories read whole,
// '-' for standard input; recorder traces among them are recognised), and reports the
// initiating rank, the collateral ranks, the launcher's claim and the findings with evidence,
// fix and verify (the contract's mode 6, "diagnose additions").
#pragma once

#include <string>
#include <vector>

#include "evidence/input_source.h"
#include "launch/report_output.h"

namespace denpex {

struct DiagnoseOptions {
  std::vector<std::string> paths;  // files, directories (every regular file below), "-" = stdin
  std::string json_path;           // "" = no JSON; "-" = JSON on stdout, human report on stderr
  bool quiet = false;
  ReportOutput output;             // --json/--html/--brief/--redact/--color (json_path, quiet as above)
  // How much a compressed input may decode to (--max-decoded-size, --max-decoded-ratio); an
  // input cut by a limit or by damage is judged up to the cut, and the report says so.
  evidence::DecodeLimits decode;
};

// Returns 1 (reject: an error finding, e.g. the initiating failure or a mismatch) or 2 (could
// not judge: a path missing or unreadable, or evidence that cannot decide, then one line on
// stderr says what to add). Never 0: a diagnosis never passes. Never throws.
int run_diagnose(const DiagnoseOptions& options);

}  // namespace denpex
