// Reading a text input (trace, log) one line at a time without trusting its line lengths.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

namespace denpex {

// Longest line the trace and log readers hand on. Real records
// are a few hundred bytes; a longer line is cut to this length and the rest skipped without
// being held in memory, so a 2 GB file without a newline costs 16 KiB, and the log parser's
// std::regex (which recurses once per character in libstdc++) never sees a line long enough to
// overflow the stack (a 100,000-space line crashed it).
constexpr size_t kMaxInputLine = 16 * 1024;

// Reads one line (without its '\n') into *line, keeping at most `max` bytes; sets *cut when the
// line was longer, and then skips the rest of it unless !skip_rest (the stream is then left
// inside the line: for a caller that gives up on the input). False at end of input with nothing
// read.
bool get_bounded_line(std::istream& in, std::string* line, bool* cut,
                      size_t max = kMaxInputLine, bool skip_rest = true);

}  // namespace denpex
