// The family readers: each turns a signal table entry's match into typed events. An entry names
// its reader ("reader: failure"); readers of records that span lines (fr_trace, RAS, torchrun's
// summary) also read the lines after the one that opened them. One file per family:
// read_nccl.cpp (coll, init), read_events.cpp (failure, fact, report, ranks, pair, none),
// read_launcher.cpp (launcher, mpirun_first), read_watchdog.cpp, read_fingerprint.cpp,
// read_desync.cpp, read_horovod.cpp, read_fr_trace.cpp, read_ras.cpp, read_torchrun.cpp,
// read_env_report.cpp, read_diag.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evidence/events.h"
#include "evidence/matcher.h"
#include "evidence/read_diag.h"
#include "evidence/read_ras.h"

namespace denpex::evidence {

class LogReader;

// What a reader knows while it reads one input.
struct FileState {
  std::string name;
  int index = 0;
  long long line_no = 0;
  // A line a terminal wrapped, waiting for its continuation.
  std::string wrapped;
  LineLabel wrapped_label;
  long long wrapped_line = 0;
  bool have_wrapped = false;
  // pdsh-style host labels this input has used (line_repair.h).
  HostLabels host_labels;
  // An NCCL COLL record cut short, waiting for its body on a later line.
  std::string pending_coll;
  LineLabel pending_label;
  long long pending_line = 0;
  int pending_age = 0;
  // The block a multi-line reader is inside ("" none), and what it gathers.
  std::string block;
  Reported report;
  RasTextState ras;  // NCCL RAS's text report being read (read_ras.h)
  DiagState diag;    // NCCL DIAG lines read, judged at the end of the input (read_diag.h)
  bool root_cause = false;
  bool have_entry = false;
  LauncherEntry entry;
  // Field names of torchrun's summary standing alone on their lines (a paste that lost its
  // layout): their values follow on later lines, in the same order.
  std::vector<std::string> entry_keys;
  // The last process a labelled line came from: a traceback's later lines carry no label.
  int last_proc = -1;
  // The line before said "Last error:": this one is NCCL's own text of the error, as the
  // process's NCCL WARN printed it.
  bool last_error_next = false;
  // Horovod's stall report being read: the ready list of each stalled tensor (sorted) and its name.
  bool horovod = false;
  std::vector<std::vector<int>> ready_lists;
  std::vector<std::string> ready_ops;
  Reported horovod_report;
  // Pasted environment reports (read_env_report.cpp): what a block waits to complete (a pip show
  // Name before its Version, a command before its output), the library a ctypes probe asks, and
  // Slurm's OOM-kill line until srun names the task (kept to the end of the input).
  std::string env_name;
  Evidence env_evidence;
  int env_proc = -1;
  std::string cdll;
  bool have_slurm_oom = false;
  bool slurm_oom_claimed = false;
  Failure slurm_oom;
};

// One record being read: the reader, its input, the launcher label, the process it is from.
struct Record {
  LogReader& r;
  FileState& st;
  const LineLabel& lab;
  int proc;
  std::string_view text;
  bool nccl = false;  // the body of an NCCL record (text is the whole record)
};

using FamilyRead = void (*)(const Hit& hit, Record& rec);

// For a reader that tells its entries apart by `kind:` through a table (failure, ranks, fact,
// report, pair): "" when `kind` is one of them, else one line naming the kinds it knows (a typo
// would otherwise read as the reader's default, or drop the line). "" for the other readers,
// which take their kind as data. Checked when the signal table loads.
std::string unknown_kind(std::string_view reader, const std::string& kind);

// The reader an entry names; nullptr for a name no reader has (the table test checks every
// entry's reader exists).
FamilyRead family_reader(std::string_view name);

// The readers of records that span lines: true when `t` belonged to the open block (then it is
// read), false when the block ended before it. Both end the block state in st when it ends.
bool block_line(std::string_view t, Record& rec);
// Ends whatever block is open (end of input, or a line that is no part of it).
void end_block(LogReader& r, FileState& st);

// Shared helpers of the readers.
std::string_view trim(std::string_view s);
std::string_view cut(std::string_view s, size_t n);
std::string short_what(std::string_view what);
// "{3, 4, 5}" / "[0, 1]" / "5, 6, 3" -> ranks (bounded).
std::vector<int> int_list(std::string_view s);
// Errors that follow from someone else's: the peer died, the communicator was torn down.
bool collateral_text(std::string_view t);
long long to_ll(std::string_view s, long long fallback = -1);

// The family readers (one per file, see above).
void read_coll(const Hit&, Record&);
// The same on the body of a COLL record (what read_coll reads of its Hit), for the reader's hot
// path: no Hit to make per line.
void read_coll_body(std::string_view body, Record& rec);
void read_init(const Hit&, Record&);
void read_failure(const Hit&, Record&);
void read_fact(const Hit&, Record&);
void read_report(const Hit&, Record&);
void read_launcher(const Hit&, Record&);
void read_ranks(const Hit&, Record&);
void read_pair(const Hit&, Record&);
void read_none(const Hit&, Record&);
void read_watchdog(const Hit&, Record&);
void read_fingerprint(const Hit&, Record&);
void read_desync(const Hit&, Record&);
void read_horovod(const Hit&, Record&);
// Ends Horovod's stall report: its ready lists judged into the missing ranks, the report kept.
void horovod_finish(LogReader& r, FileState& st);
void read_fr_trace(const Hit&, Record&);
void read_ras(const Hit&, Record&);
void read_torchrun(const Hit&, Record&);
void read_diag(const Hit&, Record&);
bool fr_trace_line(std::string_view t, Record& rec);
bool ras_line(std::string_view t, Record& rec);
// Judges the RAS text report read so far into r.ras_text and r.reported, and forgets it.
void ras_finish(LogReader& r, FileState& st);
bool torchrun_line(std::string_view t, Record& rec);
// Open MPI's "The first process to do so was:" block: the process's name opens it, its exit
// code on the next line completes the launcher entry (read_launcher.cpp).
void read_mpirun_first(const Hit&, Record&);
bool mpirun_line(std::string_view t, Record& rec);
// Pasted environment reports, Horovod's multi-line stall report, Slurm's OOM lines.
void read_env(const Hit&, Record&);
void read_horovod_stall(const Hit&, Record&);
void read_slurm_oom(const Hit&, Record&);
void read_slurm_task(const Hit&, Record&);
bool env_line(std::string_view t, Record& rec);
// The driver versions a line carries besides what the entry `except` read from it.
void env_driver_facts(Record& rec, const Signal* except);
// At the end of an input: a Slurm OOM-kill line no srun line claimed is the node's failure.
void end_env(LogReader& r, FileState& st);
// At the end of an input: the NCCL DIAG lines read into facts, failures and findings.
void end_diag(LogReader& r, FileState& st);

}  // namespace denpex::evidence
