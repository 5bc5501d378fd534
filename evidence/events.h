// What the room's readers found in a job's logs: typed events per process, each with the line
// that proves it. Plain structs; evidence/log_reader fills them, diagnose/blame and
// diagnose/diagnosis judge them without seeing a line format.
#pragma once

#include <string>
#include <vector>

#include "evidence/line_repair.h"

namespace denpex::evidence {

// An input line that proves something: where it is and what it said (cut to a few hundred bytes).
struct Evidence {
  Evidence() = default;
  Evidence(std::string f, long long l, std::string t, std::string s = {})
      : file(std::move(f)), line(l), text(std::move(t)), signal(std::move(s)) {}
  std::string file;
  long long line = 0;
  std::string text;
  std::string signal;  // the signal table entry that read it ("" for calls and judged facts)
};

// Who printed a line. `proc` is the process as far as the line tells it ("host:pid" from an NCCL
// header, a Ray worker "ip:pid", "rank 3" from a launcher label); `rank` the job-wide rank when
// known (-1 otherwise: an NCCL header's "[3]" is a CUDA device, not a rank).
struct Who {
  int index = -1;          // the reader's process index (ranks learned later are filled in)
  int rank = -1;
  std::string host;
  std::string proc;
  
};

// A fact about a process's installation, as the logs show it. Judged by compare/'s rules.
struct Fact {
  enum class Kind {
    nccl_version,     // a = "2.27.3", b = CUDA build "12.4" ("" when not printed)
    driver_cuda,      // a = "12.4" (cudaDriverVersion 12040)
    plugin_loaded,    // a = path or name, b = API version ("ncclNetPlugin_v8" or "")
    plugin_missing,   // a = what NCCL could not find
    plugin_unloadable,  // a = why a net plugin that is there did not load (the loader's error)
    nccl_env,         // a = NCCL_* name, b = value
    undefined_symbol, // a = symbol, b = the library that needs it
    driver_stub,      // a = the stub library path ("" when not printed)
    driver_too_old,   // a = what the message said
    nvml_mismatch,    // NVML: Driver/library version mismatch (a = message or NVML version)
    nccl_missing,     // no NCCL could be loaded (a = message)
    torch_nccl,       // a = the NCCL torch was built with ("2.19.3", torch.cuda.nccl.version())
    nccl_wheel,       // a = version, b = package ("nvidia-nccl-cu12")
    nccl_path,        // a = the libnccl file a binary resolves (ldd)
    // Pasted environment reports (collect_env, nvidia-smi, dpkg, file listings, ctypes probes):
    torch_version,    // a = PyTorch version ("2.4.1", "" when only the CUDA is printed), b = its CUDA build ("12.4")
    cuda_runtime,     // a = the CUDA toolkit on the host ("12.2.140"; not what PyTorch wheels run with)
    driver_version,   // a = NVIDIA driver version, b = where from: "kernel" (loaded module), "user" (libraries
                      // installed), "smi" (what NVML reported: the loaded module's)
    nccl_file,        // a = a libnccl file on disk or a conda package, b = its version ("" when unnamed)
    nccl_symbol_absent,  // a = an nccl* function a ctypes probe did not find, b = the library probed
  };
  Kind kind;
  Who who;
  std::string a, b;
  Evidence evidence;
};

// A rank that stopped: its own error, or an effect of someone else's.
struct Failure {
  enum class Kind {
    oom,             // CUDA out of memory
    own_error,       // an exception raised from the rank's own code, an NCCL/CUDA error
    nccl_warn,       // an NCCL WARN that is not a mismatch report
    timeout,         // watchdog timeout / exception detected by watchdog
    aborted,         // communicator aborted, remote peer gone, connection reset
    killed,          // stopped by the launcher (SIGTERM/SIGKILL after another rank failed)
    never_joined,    // the desync report / flight recorder says it did not join
    pointed_to,      // another rank's line names it only as the one to look at (a barrier's coordinator)
    finished,        // not a failure: the rank says it ended its work normally
  };
  Kind kind;
  Who who;
  std::string what;      // one line: "torch.OutOfMemoryError: CUDA out of memory. Tried ..."
  When when;
  std::string hint;      // OOM: the allocator setting the message suggests
  std::string group;     // process group, timeouts only
  long long seq = -1;    // SeqNum of the timed-out work, -1 when not printed
  long long ran_ms = -1; // timeouts: how long the work ran before the watchdog gave up, -1 when not printed
  // A fault of the node or the fabric (NET/IB completion errors, NVLS): every process using it
  // meets it alike, so which one printed it first says little.
  bool shared_fault = false;
  // A timeout of the fabric between hosts (the far end stopped answering), or a property of the
  // library build every process loading it meets: the process that printed it only met it, so
  // it is not blamed even when it is the only one to print it.
  bool far_end = false;
  // NCCL's own text of an error the lines before gave in general terms (the line after "Last
  // error:"): the cause, preferred over the general line of the same process.
  bool cause = false;
  // The far end a line says went away ("Call to recv from 10.1.2.3<N> failed : Broken pipe", a
  // flushed receive from a peer): its address or host as printed, "" when the line names none.
  std::string peer;
  Evidence evidence;
};

// One PyTorch watchdog record (WorkNCCL / "last enqueued"), or one side of a DETAIL fingerprint.
struct WatchRecord {
  Who who;
  std::string group;          // "" when the line names none (old format)
  int group_rank = -1;        // "[Rank r]" / "[PG i Rank r]"
  long long seq = -1;
  std::string op;             // OpType, fingerprints add the dtype
  long long numel_in = -1, numel_out = -1;
  long long last_enqueued = -1, last_completed = -1;
  bool fingerprint = false;   // from TORCH_DISTRIBUTED_DEBUG=DETAIL
  std::string quote;          // fingerprints: this rank's "CollectiveFingerPrint(...)" as printed
  Evidence evidence;
};

// A verdict some other analyser already printed: fr_trace, NCCL's own WARNs, RAS, desync debug.
struct Reported {
  enum class Kind {
    fr_missing_ranks,  // "Not all ranks joining collective", ranks = missing ranks
    fr_errors,         // "Collective N ... errors", ranks = culprits ("Culprit rank R") if printed
    nccl_mismatch,     // NCCL WARN "Mismatched collective detected ... at and around rank N"
    nccl_version,      // NCCL WARN "Mismatched NCCL version detected : rank a version x rank b version y"
    ras_counts,        // NCCL RAS "Communicator ranks have different AllReduce operation counts",
                       // ranks = the outliers RAS lists one by one, counts = their operation counts
    net_mismatch,      // NET/IB : collective mismatch error
    truncated,         // "Message truncated : received X bytes instead of Y"
    pair_mismatch,     // two ranks compared and differ (DDP's parameter check): ranks = both
    shape_mismatch,    // Horovod: tensors of one name with different shapes (ranks unnamed)
    missing_ranks,     // Horovod stall: ranks = the ranks that did not submit
    device_shared,     // NCCL's "Duplicate GPU detected": ranks = the two ranks on one GPU
  };
  Kind kind;
  Who who;
  std::vector<int> ranks;
  long long seq = -1;
  std::string group;   // "0:default_pg"
  std::string op;      // "nccl:all_reduce"
  std::string detail;  // error type, sizes, versions
  int world = -1;
  // Horovod stall: each rank listed misses other tensors (rank 0 a broadcast, rank 1 the
  // allreduces): they wait in different collectives, sides of a divergence rather than ranks
  // behind the rest. `detail` then names each rank's first tensor.
  bool sides = false;
  std::vector<long long> counts;     // RAS: operation count of each rank in `ranks`
  long long majority_count = -1;     // RAS: "N ranks have launched up to operation M" (largest N)
  int majority_ranks = 0;
  Evidence evidence;
};

// torchrun's ChildFailedError summary: one entry per failed local rank; `root_cause` marks the
// "Root Cause (first observed failure)" entry (and mpirun's "The first process to do so was").
struct LauncherEntry {
  int rank = -1;
  std::string host;
  When when;
  std::string exitcode;   // "1", "-6"
  std::string signal;     // "SIGTERM" ("" when not a signal)
  long long pid = -1;
  bool local = false;     // `rank` is a local rank (torchrun's local_rank, mp.spawn's index)
  bool root_cause = false;
  std::string launcher = "torchrun";  // whose claim a root_cause entry is: "torchrun", "mpirun"
  Evidence evidence;
};

// A line that looked like a record a reader knows but could not be read.
struct Unreadable {
  long long count = 0;
  std::vector<Evidence> samples;  // the first few
};

}  // namespace denpex::evidence
