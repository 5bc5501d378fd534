// Reading libdenpex-trace.so traces into per-rank collective sequences for compare/collectives.h:
// "denpex.trace.v2" (the crash-safe ring, layout in collect/trace_format.h) and the older JSON-lines
// "denpex.trace.v1" (a CollectiveInput, evidence/collective_input.h). No MPI.
#pragma once

#include <string>
#include <vector>

#include "evidence/collective_input.h"

namespace denpex {

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
