// NCCL RAS's JSON output (`ncclras -f json`, NCCL 2.28.7 and later): the communicators, each
// rank's status and collective counts, and the ranks RAS could not reach, as NCCL's
// src/ras/client_support.cc writes them; then judged: counts as laggards and leaders
// (compare/ras_counts.h), dead and unreachable ranks, ranks with an error.
//
// Read with nlohmann's SAX parser straight into RasReport, streamed from its source: no document
// tree is built (a 100 MB output took 2.4 GB as one), and nothing is sized by a count the input
// states. What is kept is charged as it is kept (each rank, missing rank and communicator its
// struct, each string and count its bytes); an output that would keep more than
// RasLimits::max_kept_per_byte bytes per byte read (plus kept_slack_bytes) is refused: RAS writes
// about 400 bytes of JSON per rank, which keeps about 250. So a RAS output of B bytes holds at
// most 4 B + 1 MiB in RasReport (up to twice that while a vector grows), read 64 KiB at a time.
// A number that does not fit its field (a rank outside 0 .. kMaxRank-1, an int past 32 bits, a
// pid past 64) is refused, never wrapped: the rank (or the communicator, for its size) is not
// kept and is counted with a sample.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/finding.h"
#include "evidence/input_source.h"

namespace denpex::evidence {

struct RasRank {
  int rank = -1;  // in the communicator
  std::string host;
  long long pid = -1;
  int cuda_dev = -1;
  int init_state = 0;   // 0 ncclSuccess, 7 ncclInProgress, else an error
  int async_error = 0;  // what ncclGetAsyncError would return
  bool finalize_called = false, destroy_flag = false, abort_flag = false;
  std::map<std::string, unsigned long long> counts;  // "AllReduce" -> operations launched
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
  uint64_t max_kept_per_byte = 4;
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
  long long unreadable = 0;  // ranks and communicators refused: a number out of range
  std::vector<std::string> unreadable_samples;  // the first few: "communicator 0x..: rank 4294967296 ..."
  InputCut cut;              // the source ended early: status malformed, not read
};

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
