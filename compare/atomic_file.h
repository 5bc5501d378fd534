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

enum class NewFileStatus {
  written,   // `path` did not exist and now holds `text`, whole
  exists,    // `path` existed (or another writer made it first): left as it was
  failed,    // could not write; *error says why
};

// Writes `text` to `path` only if no file is there, never replacing one: the temporary file is
// hard-linked into place (link() fails when the name exists, atomically, even between hosts
// on NFS); on a filesystem without hard links, an O_EXCL create written in place. Two writers
// racing for one name: exactly one gets `written`. *error is set for `exists` too
// ("<path>: exists"). Never throws.
NewFileStatus write_new_file(const std::string& path, const std::string& text, std::string* error);

}  // namespace denpex
