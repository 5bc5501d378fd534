// An NCCL / PyTorch log as `denpex-probe collectives` compares it: every COLL call of every
// communicator member in order (named across ranks by its Init line) and each rank's watchdog
// state, read through the room's one reader (log_reader.h) with the signal library.
#pragma once

#include <string>

#include "evidence/collective_input.h"
#include "evidence/input_source.h"

namespace denpex::evidence {

// Reads one log from `in`; `path` names it. Never fails on content: lines that look like a
// record but do not parse are counted in `unreadable`; calls on communicators without an Init
// line are counted in unattributed_calls. status malformed with `error` when the input breaks off;
// `cut` set when it ended early (a damaged or limited compressed input: see InputCut).
// `read_threads`: as LogReader::set_read_threads (1: all on the caller's thread, for a caller
// that already reads other files on the other cores); 0 the reader's default.
CollectiveInput read_collective_log(ByteSource* in, const std::string& path, int read_threads = 0);
// Opens `path` through open_input() within `limits`; status missing or malformed with its
// one-line message. A compressed log that is damaged, or passes a limit, is read up to there and
// `cut` says so (status ok: damaged from its first bytes, it holds nothing).
CollectiveInput read_collective_log(const std::string& path, int read_threads = 0,
                                    const DecodeLimits& limits = DecodeLimits{});

}  // namespace denpex::evidence
