// The on-disk layout of a libdenpex-trace.so trace, schema "denpex.trace.v2", shared by the
// writer (recorder/trace.cpp) and the reader (evidence/collective_trace.cpp) so the two cannot
// drift. Header-only, plain integers, no dependencies: the preloaded recorder includes it.
//
// A trace is one file per process, created at its full size and mapped MAP_SHARED by the
// recorder, so every store is in the page cache at once and survives SIGKILL of the process:
//
//   [0, kHeaderBytes)              one JSON line, space-padded, '\n' as its last byte:
//                                  {"schema":"denpex.trace.v2","host":..,"pid":..,"rank":..,"slots":N,...}
//   [kHeaderBytes, kRingOffset)    TraceControl (binary, little-endian, the host's layout)
//   [kRingOffset, + N*kSlotBytes)  the ring: TraceSlot[N], N a power of two
//
// Call number q (1-based, per process) lives in slot (q-1) mod N. A writer first stores seq = 0
// into the slot, then the fields, then seq = q (release): a slot whose process was killed in the
// middle of writing reads as seq 0 (torn), never as a mix of two calls. t_return stays 0 until the
// call returns: a slot with seq != 0 and t_return == 0 is a call in flight.
//
// Version 1 traces (JSON lines, "denpex.trace.v1", an in-memory buffer) are still read.
#pragma once

#include <cstdint>

namespace denpex {
namespace trace_format {

constexpr const char* kSchemaV2 = "denpex.trace.v2";
constexpr char kMagic[8] = {'D', 'N', 'P', 'X', 'T', 'R', 'C', '2'};
constexpr uint32_t kVersion = 2;
constexpr uint64_t kHeaderBytes = 4096;
constexpr uint64_t kRingOffset = 8192;
constexpr uint32_t kSlotBytes = 128;

// Ring size: DENPEX_TRACE_SLOTS, rounded up to a power of two and clamped to [kMinSlots,
// kMaxSlots]. The default holds 262,144 calls in 32 MiB per process.
constexpr uint64_t kDefaultSlots = uint64_t{1} << 18;
constexpr uint64_t kMinSlots = 1024;
constexpr uint64_t kMaxSlots = uint64_t{1} << 24;

// What a slot records. Values are part of the format: append, never renumber.
enum Op : int32_t {
  kOpNone = 0,
  // Collectives (numbered per communicator by coll_seq).
  kOpAllReduce = 1, kOpAllGather = 2, kOpReduceScatter = 3, kOpBroadcast = 4, kOpReduce = 5,
  kOpAlltoAll = 8, kOpGather = 9, kOpScatter = 10,
  kOpBcast = 11,  // the legacy in-place ncclBcast; read as Broadcast
  // Point-to-point.
  kOpSend = 6, kOpRecv = 7,
  // Groups: depth is the nesting level opened (GroupStart) or closed (GroupEnd), 1 = outermost.
  kOpGroupStart = 20, kOpGroupEnd = 21,
  // Communicator life cycle. comm is the communicator created or ended.
  kOpCommInitRank = 30, kOpCommInitRankConfig = 31, kOpCommInitAll = 32, kOpCommSplit = 33,
  kOpCommInitRankScalable = 34, kOpCommShrink = 35, kOpCommFinalize = 36, kOpCommDestroy = 37,
  kOpCommAbort = 38, kOpCommRevoke = 39,
};

enum SlotFlags : uint32_t {
  kFlagCommKnown = 1u << 0,  // comm is a cross-rank identity; else it is the process-local handle
};

enum ProcessState : uint32_t {
  kStateRunning = 0,   // never closed: killed by SIGKILL (OOM killer, scancel, time limit) or still running
  kStateExited = 1,    // exit() or return from main ran the recorder's destructor
  kStateSignalled = 2, // a fatal or terminating signal reached the recorder's handler
};

// At kHeaderBytes. 512 bytes, the rest of the page is zero.
struct TraceControl {
  char magic[8];
  uint32_t version;
  uint32_t slot_bytes;
  uint64_t slots;
  uint64_t ring_offset;
  uint64_t next;          // calls claimed so far: the last seq written; overwritten = next - slots
  uint32_t state;         // ProcessState
  int32_t signal;         // the signal when state == kStateSignalled
  uint64_t ended_ns;      // CLOCK_REALTIME of exit or signal, 0 while running
  uint64_t created_ns;
  int32_t pid;
  int32_t rank;           // from the launcher's environment, -1 if none
  uint64_t dropped;       // calls seen but not recorded (no ring: the file could not be made)
  char nccl_mapped[256];  // a loaded NCCL (libnccl.so*, else libtorch_cuda.so) from /proc/self/maps
  char reserved[176];
};
static_assert(sizeof(TraceControl) == 512, "TraceControl layout is part of the format");

struct TraceSlot {
  uint64_t seq;       // 1-based call number in this process; 0 = empty or being written
  uint64_t t_return;  // CLOCK_REALTIME_COARSE ns at return; 0 while the call is in flight
  uint64_t t_enter;   // CLOCK_REALTIME_COARSE ns at entry, before the real NCCL function runs
  uint64_t comm;      // communicator identity (kFlagCommKnown) or the ncclComm_t value
  int64_t comm_seq;   // collectives and point-to-point calls on comm so far (0-based); -1 otherwise
  int64_t coll_seq;   // collectives on comm so far (0-based); -1 for other calls
  uint64_t count;
  uint64_t parent;    // CommSplit/CommShrink: the parent communicator's identity
  int32_t op;         // Op
  int32_t status;     // ncclResult_t, valid once t_return != 0
  int32_t dtype;
  int32_t redop;
  int32_t root;
  int32_t peer;
  int32_t rank;       // rank in comm, -1 if unknown (a split's until it returns)
  int32_t nranks;
  int32_t tid;
  int32_t depth;      // ncclGroupStart nesting level (see Op)
  uint32_t flags;     // SlotFlags
  int32_t aux;        // CommSplit: colour; CommShrink: ranks excluded; InitRankScalable: nId
  uint64_t reserved[2];
};
static_assert(sizeof(TraceSlot) == kSlotBytes, "TraceSlot layout is part of the format");

}  // namespace trace_format
}  // namespace denpex
