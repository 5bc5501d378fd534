// Reading libdenpex-trace.so traces (schema "denpex.trace.v1", see launch/trace/trace.cpp) into
// per-rank collective sequences for compare/collectives.h. Also defines CollectiveInput, what any
// collective input file (trace or log, see nccl_log.h) contributes. No MPI.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "compare/collectives.h"

namespace denpex {

struct CollectiveInput {
  enum class Status { ok, missing, malformed };
  Status status = Status::ok;
  std::string error;              // one line naming the problem when status != ok
  std::string path;
  std::string format;             // "trace" or "log"
  std::vector<CommSequence> sequences;
  std::vector<WatchdogState> watchdog;
  long long lines = 0;            // physical lines read
  long long used = 0;             // records that contributed a call, an init or a watchdog state
  long long unreadable = 0;       // lines that look like a record we know but do not parse
  std::vector<std::string> unreadable_samples;  // "path:line: text", the first few
  long long unattributed_calls = 0;  // calls on a communicator whose cross-rank identity is unknown
  std::vector<std::string> hosts;    // every host named, sorted, no duplicates
};

// How many unreadable lines are kept verbatim in CollectiveInput::unreadable_samples.
constexpr size_t kMaxUnreadableSamples = 5;

// Records one unreadable line (count, and the text while fewer than kMaxUnreadableSamples kept).
void note_unreadable(CollectiveInput* in, long long line_no, const std::string& text);

// Longest line the trace and log readers hand on (hostile-input fix, issue 6). Real records
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

// True when `first_line` is a denpex.trace.v1 header, i.e. the file is a recorder trace rather
// than a log.
bool is_collective_trace(const std::string& first_line);

// Reads one trace file. status missing: cannot be opened; malformed: no valid header. Bad lines
// after the header (e.g. the last line cut by a kill) are counted as unreadable, not fatal.
// Calls on communicators the recorder could not identify ("local:" ids) are counted in
// unattributed_calls and left out of `sequences`.
CollectiveInput read_collective_trace(const std::string& path);

}  // namespace denpex
