// The readers: every record format of issue 10 item 1, from repaired lines (line_repair.h) to
// typed events (events.h) and streamed collective calls (coll_stream.h).
//
// Hot path: each line is tested for a few literals with memmem before anything is parsed, and
// fields are parsed by hand; no std::regex. A line is held in memory only while it is read (cut
// at kMaxLine), so memory does not grow with file size.
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include "diagnose/coll_stream.h"
#include "diagnose/events.h"

namespace denpex::diag {

// Longest line kept; the rest of a longer line is skipped (counted as unreadable when it looks
// like a record).
constexpr size_t kMaxLine = 64 * 1024;
constexpr size_t kMaxSamples = 5;
constexpr size_t kEvidenceChars = 300;
// Events of one kind kept beyond this are counted, not stored (a 2 GB log of timeouts).
constexpr size_t kMaxEvents = 20000;

struct Process {
  std::string key;     // "rank 3", "10.72.7.6:615", "node01:1234", "task 1", "file x.log"
  std::string host;
  long long pid = -1;
  int rank = -1;       // job-wide rank, -1 unknown
  bool rank_weak = true;  // learned from a PG rank of an old watchdog line or an Init line
};

struct CommNote {
  std::string text;    // e.g. "matched by nranks=16 only (no Init COMPLETE lines)"
};

class LogReader {
 public:
  LogReader();

  // Reads one input (a file's contents or standard input). `name` names it in evidence.
  // Returns false and sets *error when the stream cannot be read at all. Never throws on bad
  // content: binary data, long lines and huge numbers are counted as unreadable.
  bool read(std::FILE* in, const std::string& name, std::string* error);
  // For tests and the fuzzer: reads a string as if it were a file.
  void read_text(const std::string& text, const std::string& name);

  // Ends reading: resolves ranks learned late into every event, finishes the collective stream.
  void finish();

  std::vector<Fact> facts;
  std::vector<Failure> failures;
  std::vector<WatchRecord> watch;
  std::vector<Reported> reported;
  std::vector<LauncherEntry> launcher;
  Unreadable unreadable;
  CollResult coll;                    // after finish()
  std::vector<std::string> notes;     // how communicators were matched, lines lost, ...
  std::vector<std::string> files;
  std::vector<Process> processes;
  long long lines = 0;
  long long records = 0;              // lines that gave an event or a call
  long long coll_calls = 0;
  long long events_dropped = 0;

 private:
  struct FileState;
  void line(std::string* raw, FileState& st);
  void segment(std::string_view text, const LineLabel& lab, FileState& st, std::string_view whole);
  void nccl_record(std::string_view rec, const LineLabel& lab, FileState& st);
  void other_records(std::string_view text, const LineLabel& lab, FileState& st);
  bool block_line(std::string_view text, const LineLabel& lab, FileState& st);
  int process_for(const LineLabel& lab, std::string_view host, long long pid);
  Who who_of(int proc) const;
  // True when `proc` indexes `processes` (-1 means the line named no process).
  bool valid_process(int proc) const {
    return proc >= 0 && static_cast<size_t>(proc) < processes.size();
  }
  Evidence evidence(const FileState& st, std::string_view text) const;
  void bad(const FileState& st, std::string_view text);

  CollStream stream_;
  std::map<std::string, int> proc_index_;
  // (process, comm pointer) -> (stream comm index, member index)
  std::map<std::pair<int, unsigned long long>, std::pair<int, int>> comm_of_;
  // (process, comm pointer) -> identity and rank from Init COMPLETE
  struct Init { std::string id; int rank = -1; int nranks = -1; };
  std::map<std::pair<int, unsigned long long>, Init> init_;
  std::map<std::pair<int, std::string>, int> unnamed_count_;  // ambiguity of nranks-only matching
  std::map<int, int> init_rank_world_;  // proc -> (rank, from the widest communicator), resolved at finish
  std::map<int, std::pair<int, int>> widest_init_;  // proc -> (nranks, rank)
  int file_index_ = -1;
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
  struct PairHash {
    size_t operator()(const std::pair<int, unsigned long long>& p) const {
      return std::hash<unsigned long long>()(p.second * 0x9E3779B97F4A7C15ULL ^ static_cast<unsigned long long>(p.first));
    }
  };
  std::unordered_map<std::pair<int, unsigned long long>, std::pair<int, int>, PairHash> comm_cache_;
};

}  // namespace denpex::diag
