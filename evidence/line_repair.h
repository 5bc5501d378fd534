// Line repair: what a launcher, a terminal or a paste tool did to a log line, undone before any
// reader looks at it. Pure string work on one line at a time (plus the join of a line a terminal
// wrapped), no files.
//
// Prefixes stripped, outermost first, any number of them in any order:
//   paste-tool counters "[80746] ", "[rank3]:", Open MPI "[1,3]<stdout>:", srun --label "11: ",
//   Ray "(RayTrainWorker pid=615, ip=10.0.0.6) " (ANSI colour codes anywhere are dropped first),
//   "host [stderr] ", IP labels "10.0.0.3: ", pdsh's "gpu-a01: " (HostLabels),
//   "node01 | 2024-05-14 10:12:05 | ",
//   "[RANK 3] 2024-05-14 10:12:05 [ERROR] ", leading timestamps with or without seconds.
// What they said (rank, host, worker, time) is kept in a LineLabel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::evidence {

// Ranks and counts above this are not believed (a rank count of 2^31 from the input is a bad
// record, not a reason to allocate).
constexpr long long kMaxRank = 1 << 22;
// A rank, a communicator size, a root or a peer read from a record: -1 (absent, or "none") up to
// kMaxRank. Outside, the record is unreadable: wrapped into an int it would name a rank that is
// not there, and a size of 2^31-1 is no communicator.
constexpr bool rank_like(long long v) { return v >= -1 && v < kMaxRank; }

// A point in time as far as a line tells it. Years are ignored (a job spans hours, and glog
// headers carry no year); `us` counts microseconds from January 1st.
struct When {
  long long us = -1;        // -1: the line carries no time
  long long precision = 0;  // microseconds the stamp is rounded to (60 s for "12:54")
  int year = 0;             // 0: the stamp gives none (glog's "E0321 02:07:08")
  bool known() const { return us >= 0; }
  // -1 a before b, 1 after, 0 equal or indistinguishable at the coarser precision.
  static int compare(const When& a, const When& b);
  // "03-21 02:07:08" (month-day and time; seconds left out when the stamp has none).
  std::string text() const;
  // ISO 8601: "2024-03-21T02:07:08"; without a year the truncated "--03-21T02:07:08". "" when
  // unknown.
  std::string iso() const;
};

struct LineLabel {
  int rank = -1;            // job-wide rank from "[rankN]:", "[1,N]<stdout>:", "[RANK N]"
  int task = -1;            // srun --label task number (a rank, or a node under torchrun)
  std::string host;         // from "host [stderr]", an IP label, "host | ts |", Ray's ip=
  std::string worker;       // Ray "ip:pid": one process, whatever it prints
  When when;                // the first timestamp found in a prefix
  bool wrapped = false;     // the line ended with a terminal's wrap marker ('$') that was removed
  int counter = -1;         // a leading "[N] " taken for a paste tool's counter (a rank in some reports)
};

// Host names one input has used as pdsh-style labels ("gpu-a01: ", what pdsh, clush and
// DeepSpeed's multi-node launcher put before every line). "name: " alone is also how programs
// speak ("python3: error while loading ..."), so a name becomes a label the first time it stands
// before something line repair knows (another label, a time stamp, the NCCL header of the same
// host, the "NCCL version" line that opens NCCL's RAS report); from then on every "name: " line
// of that input is that host's, an empty one ("name: " alone, a blank line of the host) too.
struct HostLabels {
  std::vector<std::string> names;
};

// Strips launcher, paste and timestamp prefixes from `line` (in place: returns the rest as a
// view into `*line`, which may have been rewritten to drop ANSI escapes) and fills *label.
// `learned` (optional, one per input) is read and added to (HostLabels); without it a pdsh-style
// label is taken only where it stands before a known prefix. Never fails: a line without
// prefixes comes back unchanged. Numbers too large to be ranks ("1732900000123: ") are stripped
// as labels but give no rank.
std::string_view repair_line(std::string* line, LineLabel* label, HostLabels* learned = nullptr);

// Reads a timestamp at the start of `s`: "2025-02-18 12:54", "2025-02-18T12:54:22.123",
// "2024-05-14_10:12:05" (torchrun), glog "E0321 02:07:08.408271" (with its level letter) and
// "[E321 02:07:08.408271257". Returns the characters used (0: none) and sets *w.
size_t parse_timestamp(std::string_view s, When* w);

// Parses a decimal number at the start of `s` (no sign); false when there is none or it does not
// fit in 63 bits. *used = digits consumed (also when too large).
bool parse_dec(std::string_view s, long long* out, size_t* used);
// Same for hexadecimal (an optional "0x").
bool parse_hex(std::string_view s, unsigned long long* out, size_t* used);

}  // namespace denpex::evidence
