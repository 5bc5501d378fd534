// TORCH_NCCL_DESYNC_DEBUG reports: "[7] finished collective #182, but didn't join collective
// #183", "[3] joined but didn't finish collective #12", and the list of lagging ranks that never
// joined any collective.
#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

void read_desync(const Hit& hit, Record& rec) {
  std::vector<int> ranks = int_list(hit.get(Field::ranks));
  // "[7] finished collective ...": line repair took the "[7] " for a paste counter.
  long long one = hit.has(Field::rank) ? to_ll(hit.get(Field::rank)) : rec.lab.counter;
  if (one >= 0 && one < kMaxRank) ranks.push_back(static_cast<int>(one));
  std::string what = hit.has(Field::what) ? fmt::format("{} (TORCH_NCCL_DESYNC_DEBUG)", cut(trim(hit.get(Field::what)), 100))
                                          : "never joined any collective (TORCH_NCCL_DESYNC_DEBUG)";
  for (int r : ranks) {
    Failure f;
    f.kind = Failure::Kind::never_joined;
    f.who = Who{-1, r, "", fmt::format("rank {}", r)};
    f.what = what;
    f.evidence = rec.r.evidence(rec.st, rec.text);
    f.evidence.signal = hit.signal->id;
    rec.r.add_failure(std::move(f));
  }
}

}  // namespace denpex::evidence
