// The end of every run: what the program printed must have reached standard output. A report
// that a full disk, a closed pipe or a failing file system swallowed is not a verdict, so a
// failed write, flush or close of stdout turns the exit code into 2. The print sites write and
// forget (stdio keeps the error); this is the one place that looks.
#pragma once

#include <string>

namespace denpex {

// Flushes stdout, checks its error indicator and closes a duplicate of its descriptor (stdout
// itself stays open). Returns `code` when everything printed was written; otherwise 2, after
// one line on stderr, "<tool>: cannot write to standard output: <why>" (nothing when `code` is
// 2 already: the failure was said where it happened, or another one was; nothing either when
// stderr fails too). Call once, last.
int close_standard_output(const std::string& tool, int code);

}  // namespace denpex
