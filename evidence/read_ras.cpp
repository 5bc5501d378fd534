// NCCL's RAS client report: "Communicator ranks have different AllGather operation counts",
// then "N ranks have launched up to operation M" per group and the outliers one by one: "Rank R
// has launched up to operation M -- GPU g managed by process p on node h", or (2.26) "Rank R --
// GPU g managed by process p on node h" under the count line of their group.
#include <algorithm>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

long long count_after(std::string_view t) {
  size_t k = t.find("up to operation ");
  return k == std::string_view::npos ? 0 : to_ll(t.substr(k + 16));
}

}  // namespace

void read_ras(const Hit& hit, Record& rec) {
  end_block(rec.r, rec.st);
  Reported& r = rec.st.report;
  r = Reported();
  r.kind = Reported::Kind::ras_counts;
  r.who = rec.r.who_of(rec.proc);
  r.evidence = rec.r.evidence(rec.st, rec.text);
  r.evidence.signal = hit.signal->id;
  r.op = std::string(hit.get(Field::op));
  rec.st.block = "ras";
  ++rec.r.records;
}

bool ras_line(std::string_view t, Record& rec) {
  Reported& r = rec.st.report;
  if (starts(t, "Rank ") && (has(t, "launched") || has(t, " -- GPU "))) {
    long long k = to_ll(t.substr(5));
    // The count is on the line, or on the group line above it ("2 ranks have launched up to ...").
    long long n = has(t, "not launched") ? 0 : has(t, "up to operation") ? count_after(t) : rec.st.block_count;
    if (k >= 0 && k < kMaxRank && r.ranks.size() < 4096) {
      r.ranks.push_back(static_cast<int>(k));
      r.counts.push_back(n);
    }
    ++rec.r.records;
    return true;
  }
  if (has(t, "ranks have launched up to operation") || has(t, "ranks have not launched any operations") ||
      has(t, "rank has launched up to operation")) {
    long long k = to_ll(t);
    long long m = has(t, "not launched") ? 0 : count_after(t);
    if (k > r.majority_ranks) {
      r.majority_ranks = static_cast<int>(std::min<long long>(k, kMaxRank));
      r.majority_count = m;
    }
    // The outliers listed under this line have this count.
    rec.st.block_count = m;
    ++rec.r.records;
    return true;
  }
  return false;
}

}  // namespace denpex::evidence
