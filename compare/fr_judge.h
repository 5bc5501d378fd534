// Judging a job's Flight Recorder dumps (read by evidence/fr_dump.h, compacted by
// evidence/fr_analyse.h into the plain structs below): the calls of every process group aligned
// by collective_seq_id (P2P calls by p2p_seq_id), and the checks PyTorch's fr_trace makes (type,
// size and dtype mismatches, ranks that did not join a collective), plus what it does not: a
// partial dump set names the ranks whose dump is missing and judges the rest; each finding
// carries the dump lines that prove it with the call's stack; the collective each rank is stuck
// in. Majorities are compare/vote.h's strict_majority; ranks are named by compare/fold.h. Knows
// nothing of files.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare/finding.h"

namespace denpex {

// Strings of the calls (operation, shapes, dtypes, stack summaries) kept once.
class FrStrings {
 public:
  uint32_t id(std::string_view s);
  const std::string& text(uint32_t id) const { return texts_[id]; }

 private:
  // Keys view the texts, which a deque never moves: a lookup allocates nothing.
  std::unordered_map<std::string_view, uint32_t> ids_;
  std::deque<std::string> texts_;
};

enum class FrCallState : uint8_t { unknown, scheduled, started, completed };

// One recorded call, compacted (40 bytes: a 1,000-rank job's 2 million calls fit in 80 MB).
struct FrCall {
  int64_t seq = -1;         // collective_seq_id, or p2p_seq_id for P2P calls
  int64_t time_ns = -1;     // time_created_ns
  uint32_t op = 0;          // FrStrings ids: "nccl:all_reduce"
  uint32_t shapes = 0;      // "[[4]] -> [[4]]"
  uint32_t dtypes = 0;      // "Float -> Float"
  uint32_t stack = 0;       // "all_reduce (distributed_c10d.py:2924) < step (train.py:42)"
  int32_t record_id = -1;
  FrCallState state = FrCallState::unknown;
  bool retired = false;     // torch finished with the work (its watchdog retired it)
  bool in_flight() const { return state != FrCallState::completed && !retired; }
};

// One rank's calls in one process group, in seq order.
struct FrRankCalls {
  int rank = -1;                 // global rank (the dump's)
  std::string source;            // the dump file
  std::vector<FrCall> collectives;
  std::vector<FrCall> p2p;
};

struct FrGroup {
  std::string name;              // the process group's name (shared by its ranks)
  std::string desc;              // "default_pg", ...
  std::vector<int> expected;     // its global ranks per pg_config (empty: unknown)
  std::vector<FrRankCalls> ranks;  // ranks whose dump has the group, by rank
};

struct FrJobDumps {
  FrStrings strings;
  std::vector<FrGroup> groups;
  std::vector<int> dumped_ranks;   // ranks with a readable dump, sorted
  std::vector<int> world;          // every rank the dumps' pg_config names, sorted
};

struct FrEvidence {
  std::string file;
  long long record = -1;  // the entry's record_id
  std::string text;
};

struct FrFinding {
  Finding finding;
  std::vector<FrEvidence> evidence;  // at most a few lines
};

// Where one rank's calls end in one group: the first call still in flight (what it is stuck
// in), else its last call.
struct FrRankPosition {
  int rank = -1;
  std::string group;
  int64_t seq = -1;
  std::string op;
  std::string state;   // "in flight (started)", "completed", ...
  std::string stack;
  bool in_flight = false;
};

struct FrJudgement {
  std::vector<FrFinding> findings;
  std::vector<FrRankPosition> positions;  // per group and rank
  std::vector<int> missing_ranks;         // named by pg_config, no dump read
};

// Never fails; dumps that agree give no findings (and positions only).
FrJudgement judge_fr_dumps(const FrJobDumps& job);

}  // namespace denpex
