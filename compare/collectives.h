// Finding the first collective where the ranks of a communicator diverged.
//
// Input is per-rank call sequences (from libdenpex-trace.so traces or NCCL logs, read by
// collect/) and PyTorch watchdog states; output is contract findings (collective-mismatch,
// collective-args-mismatch, collective-missing), and, from recorder traces that say which calls
// were entered and never returned, the rank a hung job is stuck on (rank-stuck,
// collective-in-flight, collective-rank-unseen). Knows nothing of files, logs or MPI.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compare/finding.h"
#include "compare/op_name.h"

namespace denpex {

// One byte each (as CallState): CollectiveCall is held by the million.
enum class CollKind : std::uint8_t {
  all_reduce, all_gather, reduce_scatter, broadcast, reduce, send, recv, all_to_all, gather, scatter, unknown
};

// Whether a call returned, from a recorder that stamps entry and return (trace v2); `unknown` for
// inputs that only say a call was made (trace v1, NCCL logs).
enum class CallState : std::uint8_t { unknown, returned, in_flight };

// "AllReduce", ... (NCCL's spelling, as in its logs and our traces).
const char* to_string(CollKind k);
// Parses NCCL's spelling; CollKind::unknown for anything else.
CollKind parse_coll_kind(std::string_view name);
// "float32", ... for ncclDataType_t values; "datatype <n>" for values NCCL does not define.
std::string datatype_name(int datatype);
// "sum", ... for ncclRedOp_t values; "op <n>" beyond the built-in ones (user-defined PreMulSum).
std::string redop_name(int op);

// Members ordered for packing (72 bytes): a 64-rank log of 20,000 steps is 1.28 M calls.
struct CollectiveCall {
  CollKind kind = CollKind::unknown;
  // Recorder v2 only (unknown / false otherwise), here for packing:
  CallState state = CallState::unknown;
  bool in_group = false;          // made inside ncclGroupStart/End; in flight when the group's End is
  int datatype = -1;
  OpName op_name;                 // the name as recorded, kept for kinds we do not know
  unsigned long long count = 0;   // NCCL's count argument (sendcount for AllGather, recvcount for ReduceScatter)
  int redop = -1;                 // reductions only, else -1
  int root = -1;                  // Broadcast/Reduce only, else -1
  int peer = -1;                  // Send/Recv only, else -1
  int status = -1;                // recorder v2: ncclResult_t once returned
  long long trace_seq = -1;       // the source's own position (recorder seq or log line number)
  // Recorder v2 only (-1 otherwise):
  long long coll_seq = -1;        // collectives on this communicator before this one: aligns rings that wrapped
  long long entered_ns = -1;      // wall clock at entry, ns since the epoch (1-4 ms resolution)
  long long returned_ns = -1;     // at return, -1 while in flight
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
  // Recorder v2 only:
  bool truncated = false;  // the ring overwrote this process's oldest calls: `calls` starts late
  // Its input ended early (a damaged compressed file, or one past a decoding limit): `calls`
  // ends where reading stopped, so a sequence shorter than the others' is not a rank that
  // stopped calling and is not blamed for it.
  bool cut = false;
  // Communicator life-cycle calls (op_name "CommInitRank", "CommSplit", "CommDestroy", ...,
  // kind unknown), kept apart from `calls` because ranks need not agree on them (Abort).
  std::vector<CollectiveCall> comm_calls;
};

// What one recorder trace (v2) says about its process as a whole.
struct TracedProcess {
  enum class End { unknown, killed_or_running, exited, signalled };
  std::string source;
  std::string host;
  long long pid = -1;
  int global_rank = -1;         // from the launcher, -1 if none
  long long calls = 0;          // intercepted calls the process entered (all kinds)
  long long recorded = 0;       // of those, still in the ring
  long long overwritten = 0;    // the oldest, overwritten by the ring
  long long torn = 0;           // slots a kill cut while they were written
  long long dropped = 0;        // seen but not recorded (the trace file had no ring)
  long long in_flight = 0;      // calls entered and not returned
  std::vector<std::string> in_flight_unattributed;  // in flight on a communicator of unknown identity
  std::map<std::string, long long> ops;  // recorded calls per operation ("AllReduce", "GroupEnd", "CommInitAll", ...)
  std::string nccl_mapped;      // an NCCL library mapped in the process, "" if none was seen
  End end = End::unknown;
  int signal = 0;               // when end == signalled
  long long ended_ns = -1;
};

// "exited", "signalled", "killed-or-running" or "unknown": the report key inputs[].process.end.
const char* to_string(TracedProcess::End e);

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
  // The work in the user's own words (a DETAIL fingerprint's "CollectiveFingerPrint(...)"), shown
  // in findings in place of the fields read from it; "" when there is none.
  std::string text;
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
// Where calls carry coll_seq (recorder v2), collectives are aligned by it rather than by position,
// from the latest first call of any rank, so rings that wrapped at different points still line up;
// Send/Recv are not matched on a communicator where a ring wrapped.
// Where calls carry a CallState, a rank whose call was entered and never returned while others
// of its communicator went past it is `rank-stuck` (error), naming the rank, the call, since when,
// and where the others are; ranks that wait in a call a rank of the communicator never entered
// give `collective-in-flight` naming the rank that is not there (error), or, when no rank in the
// input is behind, all the waiting ranks (warning). A rank whose sequence ends in a call in
// flight is stuck there, not missing the next call: no `collective-missing` for it.
// Never fails; an empty input gives no findings.
std::vector<Finding> analyse_sequences(const std::vector<CommSequence>& sequences);

// Processes whose trace shows NCCL mapped but no intercepted call (NCCL linked statically or
// called through a private dlopen handle, or killed before its first call): warning
// `collective-rank-unseen`, pointing to that rank's logs; skipped when another trace of the same
// launcher rank has calls (a forked worker). In-flight calls on communicators the recorder could
// not identify are reported as `rank-stuck` from here. Never fails.
std::vector<Finding> analyse_traced_processes(const std::vector<TracedProcess>& processes);

// "2026-12-01 10:22:03 UTC" for CLOCK_REALTIME nanoseconds; "unknown time" for a negative value.
std::string utc_time(long long ns);

// Ranks of a process group whose watchdog reports a different SeqNum, OpType or size from the
// majority, or a different last enqueued work. Never fails.
std::vector<Finding> analyse_watchdog(const std::vector<WatchdogState>& states);

}  // namespace denpex
