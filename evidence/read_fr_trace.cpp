// The Flight Recorder analyser's report (fr_trace): a block that starts at "Collective sequence
// number: N has errors", "Collective N at entry M errors" or "Not all ranks joining collective"
// and goes on with "key: value" lines (group info, collective, missing ranks, world size, input
// sizes, error msg with the culprit ranks) up to a blank line or the next block.
#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

void culprits(std::string_view t, Reported* r) {
  size_t at = 0;
  while ((at = t.find("Culprit rank ", at)) != std::string_view::npos) {
    long long k = to_ll(t.substr(at + 13));
    if (k >= 0 && k < kMaxRank) r->ranks.push_back(static_cast<int>(k));
    at += 13;
  }
  size_t et = t.find("Error type: ");
  if (et != std::string_view::npos) r->detail = std::string(cut(trim(t.substr(et + 12)), 200));
}

}  // namespace

void read_fr_trace(const Hit& hit, Record& rec) {
  end_block(rec.r, rec.st);
  Reported& r = rec.st.report;
  r = Reported();
  r.kind = rec.text.find("Not all ranks") != std::string_view::npos ? Reported::Kind::fr_missing_ranks
                                                                    : Reported::Kind::fr_errors;
  r.seq = to_ll(hit.get(Field::seq));
  if (r.seq < 0) r.seq = to_ll(hit.get(Field::value));
  if (r.seq < 0) r.seq = to_ll(hit.get(Field::count));
  r.evidence = rec.r.evidence(rec.st, rec.text);
  r.evidence.signal = hit.signal->id;
  rec.st.block = "fr_trace";
  ++rec.r.records;
}

bool fr_trace_line(std::string_view t, Record& rec) {
  // The next report starts a block of its own.
  if (starts(t, "Collective ") || starts(t, "Not all ranks joining")) return false;
  Reported& r = rec.st.report;
  auto field = [&](std::string_view key) { return starts(t, key) ? trim(t.substr(key.size())) : std::string_view(); };
  std::string_view v;
  if (!(v = field("group info:")).empty()) r.group = std::string(cut(v, 120));
  else if (!(v = field("collective:")).empty()) r.op = std::string(cut(v, 120));
  else if (!(v = field("missing ranks:")).empty()) r.ranks = int_list(v);
  else if (!(v = field("world size:")).empty()) r.world = static_cast<int>(std::min<long long>(to_ll(v), kMaxRank));
  else if (!(v = field("input sizes:")).empty()) {
    if (r.detail.empty()) r.detail = fmt::format("input sizes {}", cut(v, 80));
  } else if (starts(t, "Culprit rank") || starts(t, "error msg:")) {
    culprits(t, &r);
  }
  // Other fields (output sizes, expected ranks, state, stack) are part of the block.
  return true;
}

}  // namespace denpex::evidence
