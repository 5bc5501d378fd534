// NCCL Inspector records (the profiler plugin of NCCL's plugins/profiler/inspector, files
// <NCCL_INSPECTOR_DUMP_DIR>/<host>-pid<pid>.log): one JSON object per line and per completed
// operation, with the communicator (header.id, rank, n_ranks), the process (metadata.hostname,
// pid) and the operation (coll_perf: coll, coll_sn, coll_msg_size_bytes; p2p_perf: p2p, p2p_sn,
// p2p_peer). Read into compare/collectives.h call sequences per communicator and rank, aligned by
// the sequence number: a second source of call sequences beside the recorder and the COLL logs.
// The plugin records only operations of at least NCCL_INSPECTOR_DUMP_MIN_SIZE_BYTES (8 KiB by
// default), the same ones on every rank, so sequence numbers may skip but ranks still align.
#pragma once

#include <string>
#include <vector>

#include "compare/collectives.h"
#include "evidence/input_source.h"

namespace denpex::evidence {

struct InspectorInput {
  enum class Status { ok, malformed };
  Status status = Status::malformed;
  std::string message;          // one line naming the file, when not ok or when lines were bad
  std::string source;
  std::vector<CommSequence> sequences;  // one per communicator and rank, calls in sn order
  long long lines = 0;
  long long records = 0;        // operations read
  long long unreadable = 0;     // lines that are not Inspector records
  std::string version;          // metadata.inspector_output_format_version ("v4.0")
};

// True when `first_block` (the start of a file) begins with an Inspector record.
bool looks_like_inspector(const std::string& first_block);

// Reads one Inspector file to its end; lines over 64 KiB are unreadable. Never throws.
InspectorInput read_inspector(ByteSource* source, const std::string& name);

}  // namespace denpex::evidence
