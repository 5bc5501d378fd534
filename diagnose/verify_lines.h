// Verify lines that run as pasted and check the fix. The judges and the signal library write
// "denpex-probe diagnose -" for "the inputs read"; a command that reads the terminal waits
// silently there, so here "-" becomes the inputs this run was given, named as given, and a run
// that read standard input says to save it to a file and names that file. Where the fix is the
// job's own rerun, the finding's note says so. A wheel or library conflict in a Python
// environment is checked on that environment (--site-packages).
#pragma once

#include <string>
#include <vector>

#include "diagnose/diagnosis.h"

namespace denpex::diag {

// The file a verify line names for standard input, which it asks the user to save first.
inline constexpr const char* kSavedStdin = "job.log";

// Rewrites every finding's verify (and verify_or) of `d` for `inputs`, the paths as the user gave
// them ("-" = standard input). Never throws for what diagnose() made; a command it cannot
// render (a path that cannot be quoted) becomes constant text with argv empty.
void settle_verify_lines(Diagnosis* d, const std::vector<std::string>& inputs);

// The site-packages folder of the first absolute path in `text` that holds one
// (".../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so" -> ".../site-packages"), or "".
std::string site_packages_in(const std::string& text);

}  // namespace denpex::diag
