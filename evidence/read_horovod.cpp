// Horovod's stall inspector: "name [missing ranks: 2, 5]" names the ranks that did not submit;
// the older "name [ready ranks: 5, 6, 3, 1, 4, 0]" names those that did, and the ranks absent
// from every such list (up to the highest rank named) are the missing ones.
#include <algorithm>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

void read_horovod(const Hit& hit, Record& rec) {
  std::vector<int> ranks = int_list(hit.get(Field::ranks));
  FileState& st = rec.st;
  Reported& r = st.horovod_report;
  if (!st.horovod) {
    r = Reported();
    r.kind = Reported::Kind::missing_ranks;
    r.who = rec.r.who_of(rec.proc);
    r.evidence = rec.r.evidence(st, rec.text);
    r.evidence.signal = hit.signal->id;
    r.op = std::string(cut(hit.get(Field::name), 120));
    st.horovod = true;
  }
  ++rec.r.records;
  if (hit.signal->kind == "missing") {
    for (int k : ranks)
      if (std::find(r.ranks.begin(), r.ranks.end(), k) == r.ranks.end()) r.ranks.push_back(k);
    r.detail = "Horovod stall report: missing ranks";
    return;
  }
  // Ready lists: a rank ready for one tensor is not missing for the report as a whole only if it
  // is ready in every list; keep the ranks seen ready in all of them.
  std::sort(ranks.begin(), ranks.end());
  if (st.ready.empty()) {
    st.ready = ranks;
  } else {
    std::vector<int> both;
    std::set_intersection(st.ready.begin(), st.ready.end(), ranks.begin(), ranks.end(), std::back_inserter(both));
    st.ready = both.empty() ? st.ready : both;
  }
  if (!ranks.empty()) r.world = std::max(r.world, ranks.back() + 1);
  r.detail = "Horovod stall report: ready ranks";
}

}  // namespace denpex::evidence
