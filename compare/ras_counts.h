// NCCL RAS's collective counts per rank, judged as laggards and leaders: the ranks that launched
// the most operations of a kind are ahead, and a rank that is ahead is never the culprit; the
// ranks below them are behind, and those furthest behind are where to look. (In one real RAS
// paste 2 ranks had launched op 641 and 30 had launched op 640: the 30 are behind, the 2 only
// wait for them.) A pure function, for the RAS JSON reader (evidence/ras_json.h) and for the
// readers of RAS's text layout alike.
#pragma once

#include <string>
#include <vector>

#include "compare/finding.h"

namespace denpex {

struct RasOpCount {
  int rank = -1;                 // the communicator's rank
  unsigned long long count = 0;  // operations of one kind it has launched
  std::string host;              // "" if unknown
};

struct RasCountVerdict {
  bool agree = true;                    // every rank has the same count (or fewer than two ranks)
  unsigned long long leader_count = 0;  // the highest count
  std::vector<int> leaders;             // ranks at it: ahead, never blamed; sorted
  std::vector<int> behind;              // every rank below it; sorted
  unsigned long long lowest_count = 0;
  std::vector<int> furthest_behind;     // ranks at the lowest count; sorted
  std::vector<std::string> behind_hosts;  // hosts of the ranks behind, sorted, unique
};

// Never fails; an empty input agrees.
RasCountVerdict judge_ras_counts(const std::vector<RasOpCount>& counts);

// The finding for a verdict that does not agree: `collective-missing` (error) blaming the ranks
// behind, `comm` the communicator, `op` the operation ("AllReduce"). Returns false (and leaves
// *out alone) when the verdict agrees.
bool ras_count_finding(const RasCountVerdict& v, const std::string& comm, const std::string& op,
                       Finding* out);

}  // namespace denpex
