// Reading libdenpex-trace.so traces into per-rank collective sequences for compare/collectives.h:
// "denpex.trace.v2" (the crash-safe ring, layout in collect/trace_format.h) and the older JSON-lines
// "denpex.trace.v1". Also defines CollectiveInput, what any
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
  std::vector<TracedProcess> processes;  // one per recorder trace (none for a log)
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

// True when `first_line` is a denpex.trace.v1 or v2 header, i.e. the file is a recorder trace
// rather than a log.
bool is_collective_trace(const std::string& first_line);

// Reads one trace file. status missing: cannot be opened; malformed: no valid header (v2: or a
// control block that does not match it). Bad lines after a v1 header (e.g. the last line cut by a
// kill) and v2 slots with an unknown operation are counted as unreadable, not fatal; v2 slots cut
// by a kill while being written are counted in processes[0].torn. Calls on communicators the
// recorder could not identify ("local:" ids) are counted in unattributed_calls and left out of
// `sequences`. A v2 trace fills `processes` (calls, ring overwrites, how the process ended, the
// NCCL it had mapped) and gives calls their CallState, times, status and coll_seq; a call made
// inside a group whose outermost ncclGroupEnd is in flight is in flight too.
CollectiveInput read_collective_trace(const std::string& path);

}  // namespace denpex
