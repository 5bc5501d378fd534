// Majority voting over configuration groups: which value of an attribute (NCCL version, a
// variable's setting...) is the job's reference, and who holds each other value.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compare/group.h"

namespace denpex {

// Who weighs in a vote: ranks (most rules), or distinct hosts (host-wide properties such as the
// driver, where a host with 8 ranks is still one installation).
enum class VoteBy { ranks, hosts };

// One distinct value and the ranks and hosts that have it.
struct VoteValue {
  std::string value;
  std::vector<int> ranks;          // sorted, unique
  std::vector<std::string> hosts;  // sorted, unique, no empty names
  std::size_t weight = 0;          // ranks.size() or hosts.size(), per VoteBy
};

struct VoteResult {
  std::vector<VoteValue> values;  // by weight descending, then lowest rank
  // Index into `values` of the reference: the value with strictly more weight than any other.
  // -1 when fewer than two values exist (nothing to compare) or the top weights tie.
  int reference = -1;
  bool tie() const { return values.size() > 1 && reference < 0; }
};

// The one majority rule of the project, for votes over configuration groups (vote() below),
// collective calls and watchdog states (compare/collectives.h): the index of the weight strictly
// greater than every other, or -1 when the top weights tie or `weights` is empty.
int strict_majority(const std::vector<std::size_t>& weights);

// The group that group `g` is judged against: the majority when there is one (`majority` >= 0),
// else (a tie) the first group that is not `g`. Needs at least two groups when `majority` < 0.
std::size_t judged_against(int majority, std::size_t g);

// Reads the attribute from each group's representative. `value_of` returns false to leave the
// group out of the vote (the attribute does not apply, e.g. no PyTorch). Never fails.
VoteResult vote(const std::vector<ConfigGroup>& groups,
                const std::function<bool(const RankRecord&, std::string*)>& value_of,
                VoteBy by);

}  // namespace denpex
