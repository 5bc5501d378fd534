// NCCL RAS's JSON output (`ncclras -f json`, NCCL 2.28.7 and later): the communicators, each
// rank's status and collective counts, and the ranks RAS could not reach, as NCCL's
// src/ras/client_support.cc writes them; then judged: counts as laggards and leaders
// (compare/ras_counts.h), dead and unreachable ranks, ranks with an error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/finding.h"

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

struct RasReport {
  enum class Status { ok, malformed };
  Status status = Status::malformed;
  std::string message;  // one line naming the file, when malformed
  std::string source;
  std::string nccl_version;
  std::string timestamp;
  std::vector<RasCommunicator> communicators;
};

// Reads the JSON text (`name` in messages). Never throws.
RasReport read_ras_json(const std::string& text, const std::string& name);

// True when a parsed JSON document has RAS's shape (its top-level keys).
bool looks_like_ras_json(const std::string& text);

// Findings: per communicator and operation, the ranks behind (`collective-missing`); ranks RAS
// considers dead (`ras-rank-dead`, error) or could not reach (`collective-ranks-absent`,
// warning); ranks whose init or async state is an NCCL error (`ras-rank-error`, error). Ranks
// in findings are the communicator's. Never fails.
std::vector<Finding> judge_ras(const RasReport& report);

}  // namespace denpex::evidence
