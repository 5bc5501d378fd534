// NCCL RAS's JSON output (`ncclras -f json`, NCCL 2.28.7 and later): the communicators, each
// rank's status and collective counts, and the ranks RAS could not reach, as NCCL's
// src/ras/client_support.cc writes them; then judged: counts as laggards and leaders
// (compare/ras_counts.h), dead and unreachable ranks, ranks with an error.
//
// Read with nlohmann's SAX parser straight into RasReport, streamed from its source: no document
// tree is built (a 100 MB output took 2.4 GB as one), and nothing is sized by a count the input
// states. What is kept is charged as it is allocated (each vector's growth, spare capacity
// included, each string past the short-string buffer, each collective count's map node), and an
// output that would keep more than RasLimits::max_kept_per_byte (6) bytes per byte read, plus
// kept_slack_bytes (1 MiB), is refused as too_large: RAS's own indented output keeps up to 2
// bytes per byte, the same made compact (jq -c) up to 3 (20,000 ranks with six counts each), and
// a list of empty records 40 and more. So a RAS output of B bytes holds at most 6 B + 1 MiB in
// RasReport, and twice that while a vector moves, read 64 KiB at a time.
// A number that does not fit its field (a rank outside 0 .. kMaxRank-1, an int past 32 bits, a
// pid past 64, a communicator size past kMaxRank) is refused, never wrapped: the rank (or the
// communicator, for its size) is not kept and is counted with a sample.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compare/finding.h"
#include "evidence/input_source.h"

namespace denpex::evidence {

// One collective count of a rank: `op` indexes RasReport::ops, where each operation's name
// ("AllReduce", ...) is kept once for the whole report, not once per rank.
struct RasCount {
  uint32_t op = 0;
  unsigned long long n = 0;
};

struct RasRank {
  int rank = -1;  // in the communicator
  std::string host;
  long long pid = -1;
  int cuda_dev = -1;
  int init_state = 0;   // 0 ncclSuccess, 7 ncclInProgress, else an error
  int async_error = 0;  // what ncclGetAsyncError would return
  bool finalize_called = false, destroy_flag = false, abort_flag = false;
  std::vector<RasCount> counts;  // operations launched, one per operation (set_ras_count)
};

struct RasMissingRank {
  int rank = -1;
  std::string host;
  long long pid = -1;
  bool unresponsive = false;
  bool dead = false;  // considered_dead
};

struct RasCommunicator {
  std::string hash;            // "0xae94..."
  std::string secondary_hash;
  int size = -1;
  std::vector<RasRank> ranks;
  std::vector<RasMissingRank> missing;
};

struct RasLimits {
  uint64_t max_input_bytes = uint64_t{256} << 20;  // RAS output is a few MB for 100,000 ranks
  uint64_t max_kept_per_byte = 6;  // bytes kept per byte read (the header says why)
  uint64_t kept_slack_bytes = uint64_t{1} << 20;
};

struct RasReport {
  enum class Status { ok, malformed, too_large };
  Status status = Status::malformed;
  std::string message;  // one line naming the file, when not ok
  std::string source;
  std::string nccl_version;
  std::string timestamp;
  std::vector<RasCommunicator> communicators;
  std::vector<std::string> ops;  // the operation names counts refer to, each once
  long long unreadable = 0;  // ranks and communicators refused: a number out of range
  std::vector<std::string> unreadable_samples;  // the first few: "communicator 0x..: rank 4294967296 ..."
  InputCut cut;              // the source ended early: status malformed, not read
};

// Sets rank `r`'s count of operation `op` to `n` (`op` named in report->ops, added there once).
void set_ras_count(RasReport* report, RasRank* r, const std::string& op, unsigned long long n);
// Removes rank `r`'s count of `op`, if it has one.
void erase_ras_count(const RasReport& report, RasRank* r, const std::string& op);
// Rank `r`'s count of `op` in *n; false when it has none.
bool ras_count(const RasReport& report, const RasRank& r, const std::string& op, unsigned long long* n);

// Reads the JSON text (`name` in messages). Never throws; malformed (not JSON, or not RAS's
// shape: the message names what is wrong), too_large (past the bound on what is kept).
RasReport read_ras_json(const std::string& text, const std::string& name, const RasLimits& limits = RasLimits{});
// The same, streamed from `source`: also malformed when it breaks off or ends early (`cut` set:
// a part of RAS's output would show ranks missing that are not), too_large past max_input_bytes.
RasReport read_ras_json(ByteSource* source, const std::string& name, const RasLimits& limits = RasLimits{});

// True when the text reads as RAS output (read_ras_json's status ok).
bool looks_like_ras_json(const std::string& text);

// Findings: per communicator and operation, the ranks behind (`collective-missing`); ranks RAS
// considers dead (`ras-rank-dead`, error) or could not reach (`collective-ranks-absent`,
// warning); ranks whose init or async state is an NCCL error (`ras-rank-error`, error). Ranks
// in findings are the communicator's. Never fails.
std::vector<Finding> judge_ras(const RasReport& report);

}  // namespace denpex::evidence
