// Colour for a finished text report of any mode (the gate, compare, collectives, diagnose):
// ANSI SGR on what a person looks for first, applied to the plain text after it is made (and
// after --redact), so every mode gets the same colours without each renderer carrying its own.
#pragma once

#include <string>

namespace denpex {

// `text` with colour: the verdict word (PASS green, REJECT red, INCONCLUSIVE yellow) on the
// verdict line; "error"/"warning" and the finding code that follows on a finding's first line;
// the labels "Started by:" (red), "Followed:" (yellow), "Launcher:", "fix:", "verify:",
// "evidence:", "could not decide:" and "-- WRONG:"; "N configurations:" headings. Lines are
// otherwise left as they are; text that already holds an escape sequence is returned unchanged.
// Never fails.
std::string paint_report(const std::string& text);

}  // namespace denpex
