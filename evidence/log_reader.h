// The room's reader: every line of every input, repaired (line_repair.h), split into records
// (NCCL headers glued onto each other are split), matched against the signal library
// (matcher.h) and handed to the family reader its entry names (families.h), which turns it into
// typed events (events.h) and streamed collective calls (coll_stream.h).
//
// A line is held only while it is read (cut at kMaxLine), so memory does not grow with file
// size.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "evidence/coll_stream.h"
#include "evidence/events.h"
#include "evidence/input_source.h"
#include "evidence/line_reader.h"
#include "evidence/read_ras.h"

namespace denpex::evidence {

class Matcher;
struct FileState;
struct Record;
struct Hit;

constexpr size_t kMaxSamples = 5;
constexpr size_t kEvidenceChars = 300;
// Events of one kind kept per process, and in all: past them events are counted
// (events_not_kept in the report), not stored. Per process first, so that a flood of one rank's
// lines (a 2 GB log of timeouts) cannot push out another rank's first error; the total bounds
// memory whatever the count of processes.
constexpr size_t kMaxEventsPerProcess = 256;
constexpr size_t kMaxEvents = 200000;

// An input that ended early, and the last time its lines gave before the cut (unknown when
// none gave one): what was cut comes after it.
struct CutInput {
  InputCut cut;
  When read_to;
  bool log = true;  // a log read up to the cut; false: a recorder output, not read
};

struct Process {
  std::string key;     // "rank 3", "10.72.7.6:615", "node01:1234", "task 1", "file x.log"
  std::string host;
  long long pid = -1;
  int rank = -1;       // job-wide rank, -1 unknown
  bool rank_weak = true;  // learned from a PG rank of an old watchdog line or an Init line
  int file = -1;       // the input it was first seen in
};

// Every call of one communicator member, in order, when the reader keeps them all (collectives).
struct MemberCalls {
  std::string comm;
  int proc = -1;
  int rank_in_comm = -1;
  int nranks = -1;
  // In chunks of fixed capacity (256 calls, doubling up to 8192): growing copies nothing and
  // wastes at most the last chunk, and each chunk is freed whole once converted (large ones are
  // returned to the system at once), so the reader's copy and the analyser's are never both held.
  std::vector<std::vector<CollCall>> calls;
  size_t count = 0;
  void add(const CollCall& call);
};

class LogReader {
 public:
  // `keep_all_calls`: every COLL call is kept per communicator member (for `collectives`, which
  // compares whole sequences) instead of streamed and settled (for `diagnose`).
  explicit LogReader(bool keep_all_calls = false);
  ~LogReader();

  // Reads one input. `name` names it in evidence. Returns false and sets *error when the input
  // breaks off (what was read before counts). Never throws on bad content: binary data, long
  // lines and huge numbers are counted as unreadable.
  bool read(ByteSource* in, const std::string& name, std::string* error);
  // How many threads read() uses: 2 (the default where there are two cores or more) reads,
  // decodes and repairs lines (line_feed.h) on a thread beside the one that judges them; 1 does
  // all on the caller's. What is read is the same either way.
  void set_read_threads(int n) { read_threads_ = n; }
  // For tests and the fuzzer: reads a string as if it were a file.
  void read_text(const std::string& text, const std::string& name);

  // Ends reading: resolves ranks learned late into every event, finishes the collective stream.
  void finish();

  std::vector<Fact> facts;
  std::vector<Failure> failures;
  std::vector<WatchRecord> watch;
  std::vector<Reported> reported;
  std::vector<RasTextFinding> ras_text;  // NCCL RAS text reports, judged as their JSON form is
  std::vector<LauncherEntry> launcher;
  Unreadable unreadable;
  CollResult coll;                    // after finish()
  std::vector<MemberCalls> all_calls; // keep_all_calls only
  std::vector<long long> hits;        // per signal table entry: records it read
  std::vector<std::string> notes;     // how communicators were matched, lines lost, ...
  // Inputs that ended early (damaged, or past a decoding limit): logs are read up to the cut.
  // The caller adds the cuts of inputs read elsewhere (recorder outputs, not read at all, and
  // compressed logs damaged before their first line) before judging.
  std::vector<CutInput> cuts;
  std::vector<std::string> files;
  std::map<std::string, int> file_year;  // the year the first dated line of each file gives
  std::vector<Process> processes;
  long long lines = 0;
  long long records = 0;              // lines that gave an event or a call
  long long coll_calls = 0;
  long long unattributed_calls = 0;   // keep_all_calls: calls on communicators without an Init line
  long long events_dropped = 0;       // events past kMaxEventsPerProcess or kMaxEvents

  // What the family readers use (families.h).
  Who who_of(int proc) const;
  bool valid_process(int proc) const { return proc >= 0 && static_cast<size_t>(proc) < processes.size(); }
  Evidence evidence(const FileState& st, std::string_view text) const;
  void bad(const FileState& st, std::string_view text);
  int process_for(const LineLabel& lab, std::string_view host, long long pid);
  int process_by_key(const std::string& key, int rank);
  // The process of that key ("host:pid", "rank 3"); -1 when none is known yet.
  int find_process(const std::string& key) const;
  void add_failure(Failure f);
  void add_fact(Fact f);
  void add_watch(WatchRecord w);
  void add_reported(Reported r);
  void add_launcher(LauncherEntry e);
  void add_call(int proc, unsigned long long comm_ptr, long long nranks, const CollCall& call);
  // The cross-rank id of a communicator this process created ("" when unknown).
  std::string comm_id(int proc, unsigned long long ptr) const;
  void add_init(int proc, unsigned long long comm_ptr, const std::string& id, int rank, int nranks, bool complete);
  const Matcher& matcher() const { return matcher_; }

 private:
  void line(std::string* raw, FileState& st);
  // A repaired line: `indented` when it began with a blank before repair, `starts` where its NCCL
  // records start (line_feed.h).
  void repaired(std::string_view text, const LineLabel& lab, bool indented, const size_t* starts, size_t nstarts,
                FileState& st);
  bool join_wrapped(bool indented, std::string_view text, const LineLabel& lab, FileState& st);
  void segment(std::string_view text, const LineLabel& lab, FileState& st);
  void segment(std::string_view text, const LineLabel& lab, FileState& st, const size_t* starts, size_t nstarts);
  void nccl_record(std::string_view rec, const LineLabel& lab, FileState& st);
  void nccl_level(std::string_view rec, std::string_view level_body, const LineLabel& lab, int proc, FileState& st);
  void other_record(std::string_view text, const LineLabel& lab, FileState& st);
  int line_process(std::string_view t, const LineLabel& lab, FileState& st);
  int header_process(std::string_view hdr, const LineLabel& lab);
  bool dispatch(const Hit& hit, Record& rec);
  void end_file(FileState& st);
  void resolve_identities();
  void unify_host_names();
  void tie_quoted_warn(std::string_view text, int proc);
  void date_events();

  const Matcher& matcher_;
  bool keep_all_calls_;
  int read_threads_ = 1;
  int coll_entry_ = -1;
  CollStream stream_;
  std::map<std::string, int> proc_index_;
  // True when an event of `kind` (0..4, one per list) from process `proc` (-1: none) is kept,
  // `kept` being how many of that kind are; else counts it in events_dropped.
  bool keep_event(int kind, int proc, size_t kept);
  struct Init { std::string id; int rank = -1; int nranks = -1; };
  std::map<std::pair<int, unsigned long long>, Init> init_;
  // (process, comm pointer) -> (stream comm index, member index) or all_calls index
  std::map<std::pair<int, unsigned long long>, std::pair<int, int>> comm_of_;
  std::map<std::pair<int, std::string>, int> unnamed_count_;
  std::map<int, std::pair<int, int>> widest_init_;  // proc -> (nranks, rank)
  // srun --label task numbers are ranks when each task is one process, nodes when a task runs
  // torchrun (then "[rankN]:" labels with other numbers appear under it).
  std::map<int, std::set<int>> task_procs_;
  bool tasks_are_nodes_ = false;
  bool unmatched_comms_ = false;
  bool ambiguous_comms_ = false;
  // NCCL header ("host:pid:tid") -> process, for lines without a launcher label: the hot path
  // of a COLL log, so looked up without building a key.
  std::unordered_map<std::string, int> hdr_proc_;
  std::string hdr_key_;
  static constexpr int kNoSlot = -2;  // process_for gives -1 for "no process": a real answer
  struct HeaderSlot {
    std::string hdr;
    int proc = kNoSlot;
  };
  std::vector<HeaderSlot> hdr_slots_ = std::vector<HeaderSlot>(4096);
  // Per process (index + 1): the communicator pointer it used last and where its calls go.
  struct LastComm {
    unsigned long long ptr = 0;
    std::pair<int, int> at;
    bool set = false;
  };
  std::vector<LastComm> last_comm_;
  void store_call(std::pair<int, int> at, const CollCall& call);
  std::unordered_map<long long, uint32_t> events_per_proc_;  // (kind, process) -> kept
  std::unordered_set<std::string> hosts_seen_;
  // NCCL WARN texts -> the process that printed them, while its rank is unknown: a rank's
  // "Last error:" quoting one ties that NCCL process to the rank (bounded).
  std::unordered_map<std::string, int> warn_text_proc_;
};

}  // namespace denpex::evidence
