// Writing an output file (a report, a baseline, metrics) so that a reader never sees half of
// it: the one file writer of the project (with baseline.*, the only file access in compare/).
#pragma once

#include <string>

namespace denpex {

// Writes `text` to `path` through a temporary file beside it (path + ".tmp." + pid, so two
// writers never share one), flushed, closed and renamed into place; "-" writes to stdout.
// Returns false and sets *error to one line, "<path>: cannot <create|write|rename ...>: <why>",
// on failure, and removes the temporary file. Never throws.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace denpex
