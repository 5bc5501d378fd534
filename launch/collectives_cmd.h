// `denpex-probe collectives PATH...`: reads recorder traces and NCCL / PyTorch logs, finds the
// first collective where ranks diverged and reports it (the contract's collectives mode).
#pragma once

#include <string>
#include <vector>

#include "evidence/input_source.h"
#include "launch/report_output.h"

namespace denpex {

struct CollectivesOptions {
  std::vector<std::string> paths;  // files or directories (each regular file in it, not recursive)
  std::string json_path;           // "" = no JSON; "-" = JSON on stdout, human report on stderr
  bool quiet = false;              // no human report
  bool strict = false;             // warnings (unreadable lines, absent ranks) reject too
  ReportOutput output;             // --json/--html/--brief/--redact/--color (json_path, quiet as above)
  // How much a compressed input may decode to (--max-decoded-size, --max-decoded-ratio); an
  // input cut by a limit or by damage is judged up to the cut, and the report says so.
  evidence::DecodeLimits decode;
};

// Returns the contract exit code: 0 pass, 1 reject, 2 could not judge (a path missing or
// unreadable, a trace without a valid header, the same rank of a communicator in two inputs,
// nothing collective in any input, the JSON file not writable); for 2 exactly one line on stderr
// names the file and the problem. Never throws.
int run_collectives(const CollectivesOptions& options);

}  // namespace denpex
