// Finding the first collective where the ranks of a communicator diverged.
//
// Input is per-rank call sequences (from libdenpex-trace.so traces or NCCL logs, read by
// collect/) and PyTorch watchdog states; output is contract findings (collective-mismatch,
// collective-args-mismatch, collective-missing). Knows nothing of files, logs or MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/finding.h"

namespace denpex {

enum class CollKind { all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv, unknown };

// "AllReduce", ... (NCCL's spelling, as in its logs and our traces).
const char* to_string(CollKind k);
// Parses NCCL's spelling; CollKind::unknown for anything else.
CollKind parse_coll_kind(const std::string& name);
// "float32", ... for ncclDataType_t values; "datatype <n>" for values NCCL does not define.
std::string datatype_name(int datatype);
// "sum", ... for ncclRedOp_t values; "op <n>" beyond the built-in ones (user-defined PreMulSum).
std::string redop_name(int op);

struct CollectiveCall {
  CollKind kind = CollKind::unknown;
  std::string op_name;            // the name as recorded, kept for kinds we do not know
  unsigned long long count = 0;   // NCCL's count argument (sendcount for AllGather, recvcount for ReduceScatter)
  int datatype = -1;
  int redop = -1;                 // reductions only, else -1
  int root = -1;                  // Broadcast/Reduce only, else -1
  int peer = -1;                  // Send/Recv only, else -1
  long long trace_seq = -1;       // the source's own position (recorder seq or log line number)
};

// One rank's calls on one communicator, in call order.
struct CommSequence {
  std::string comm;        // identity shared by all ranks of the communicator
  int rank = -1;           // rank inside the communicator
  int nranks = -1;         // communicator size, -1 if unknown
  int global_rank = -1;    // job-wide rank from the launcher, -1 if unknown
  std::string host;
  long long pid = -1;
  std::string source;      // file the sequence came from, for messages
  std::vector<CollectiveCall> calls;
};

// What PyTorch's ProcessGroupNCCL watchdog said about one rank of one process group.
struct WatchdogState {
  std::string group;                 // process group name ("0(default_pg)", "PG 1", ...)
  int rank = -1;                     // rank in the process group
  int global_rank = -1;              // from the launcher prefix, -1 if unknown
  std::string host;
  std::string source;
  long long seq = -1;                // WorkNCCL SeqNum of the timed-out work, -1 if not printed
  std::string op_type;               // WorkNCCL OpType
  long long numel_in = -1, numel_out = -1;
  long long last_enqueued = -1, last_completed = -1;  // -1 if not printed
};

// "AllReduce(count=1024, float32, sum)", "Broadcast(count=8, float32, root=0)", "none".
std::string describe(const CollectiveCall& c);

// The first divergence in every communicator: collectives (AllReduce..Reduce) are aligned by
// position in each rank's sequence; Send/Recv are left out of the alignment because pipeline
// stages legitimately make different numbers of them, and are instead matched pairwise (the k-th
// Send from a to b against the k-th Recv on b from a). Findings blame the minority; with no strict
// majority every group is named. Ranks of a communicator with no sequence at all get a
// `collective-ranks-absent` warning (the input may simply not include them).
// `seq` in the findings is the 0-based position among the communicator's collectives.
// Never fails; an empty input gives no findings.
std::vector<Finding> analyse_sequences(const std::vector<CommSequence>& sequences);

// Ranks of a process group whose watchdog reports a different SeqNum, OpType or size from the
// majority, or a different last enqueued work. Never fails.
std::vector<Finding> analyse_watchdog(const std::vector<WatchdogState>& states);

}  // namespace denpex
