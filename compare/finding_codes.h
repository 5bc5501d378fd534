// Every finding code denpex-probe can emit, in one table: the code, its usual severity, the
// mode that emits it, what it means and the release that added it. Emitters name a code by its
// FindingCode value (code_name), so a code cannot be emitted without a row here;
// docs/finding-codes.md is generated from this table (finding_codes_markdown) and
// tests/compare/finding_codes_test.cpp checks both it and the contract's tables against it.
//
// Adding a code: a FindingCode value (compare/finding_code.h) and a row in finding_codes.cpp in
// the same position, `since`
// the next release (the project's version in CMakeLists.txt, one minor up while unreleased),
// then regenerate docs/finding-codes.md (the test says how).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compare/finding.h"
#include "compare/finding_code.h"

namespace denpex {

// Where a code comes from.
enum class CodeMode {
  gate,         // rank records judged: under a launcher, alone, the prolog, --root, compare
  prolog,       // rank records judged as root, which is how the Slurm prolog runs
  image,        // a record read statically (--root, validate-image), or a baseline that pins it
  collectives,  // call sequences compared: `collectives`, and `diagnose` on COLL lines
  diagnose,     // a failed job's logs read by `diagnose`
  all,          // rank records judged anywhere, `diagnose`'s facts from logs included
};

const char* to_string(CodeMode m);

// Whether the user-facing contract lists the code, or this project added it.
enum class CodeOrigin { contract, extension };


struct FindingCodeInfo {
  FindingCode id;
  const char* code;            // its name in reports: `nccl-version-mismatch`
  Severity severity;           // the usual severity
  const char* severity_note;   // when it differs ("error with `--require-gpu`"), or ""
  CodeMode mode;
  CodeOrigin origin;
  const char* meaning;         // one sentence: when it is emitted (Markdown)
  const char* since;           // the release that added it, "0.1.0"
};

// The table, in FindingCode order (finding_codes.cpp checks the order at compile time).
const std::vector<FindingCodeInfo>& finding_codes();

// The row of a code given by name; nullptr when it is not a finding code.
const FindingCodeInfo* find_finding_code(std::string_view code);

// docs/finding-codes.md, generated from the table (tests compare the checked-in page with it).
std::string finding_codes_markdown();

}  // namespace denpex
