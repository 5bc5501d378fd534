// docs/failures.md, the encyclopedia of failures: every signature of the signal library grouped
// by family, each with what it indicates, the rank it implicates, what tells it apart from its
// look-alikes (and the variables to rerun with), the fix, the verify command and an example.
// Generated from the table alone; tests/evidence/explain_test.cpp fails when the checked-in
// page differs.
#pragma once

#include <string>

#include "evidence/signal_table.h"

namespace denpex::evidence {

// The recorder's path as the page shows it: the Debian package's on x86_64, so that the page is
// the same whichever machine generates it (the page names the other layouts).
inline constexpr const char* kDocsRecorderPath = "/usr/lib/x86_64-linux-gnu/denpex/libdenpex-trace.so";

// The page for `table`, verify commands with @RECORDER@ as `recorder_path`. Never fails; a
// table that does not parse gives a page that says so.
std::string failures_markdown(const SignalTable& table,
                              const std::string& recorder_path = kDocsRecorderPath);

}  // namespace denpex::evidence
