// What one collective input file (a recorder trace, evidence/collective_trace.h, or an NCCL /
// PyTorch log, evidence/collective_log.h) contributes to `denpex-probe collectives` and `diagnose`:
// per-rank call sequences and watchdog states for compare/collectives.h, and how much of the
// file could be read. No MPI, no file access here.
#pragma once

#include <string>
#include <vector>

#include "compare/collectives.h"
#include "evidence/input_source.h"

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
  evidence::InputCut cut;         // why a compressed log ended early (why none: it did not)
};

// How many unreadable lines are kept verbatim in CollectiveInput::unreadable_samples.
constexpr size_t kMaxUnreadableSamples = 5;

// Records one unreadable line (count, and the text while fewer than kMaxUnreadableSamples kept).
void note_unreadable(CollectiveInput* in, long long line_no, const std::string& text);

}  // namespace denpex
