// TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints: "Rank A is running [inconsistent] collective:
// CollectiveFingerPrint(SequenceNumber=N, OpType=X, TensorShape=[..], TensorDtypes=Y, ...)",
// one or two per line (both sides of a two-rank report), SequenceNumber absent before 2.1.
#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

std::string_view token_after(std::string_view s, std::string_view key, std::string_view stops) {
  size_t k = s.find(key);
  if (k == std::string_view::npos) return {};
  size_t b = k + key.size(), e = b;
  while (e < s.size() && stops.find(s[e]) == std::string_view::npos) ++e;
  return s.substr(b, e - b);
}

// Product of the first tensor's dimensions: "[195812480]", "[4, 1024]"; -1 when absent.
long long numel_of(std::string_view body) {
  std::string_view shape = token_after(body, "TensorShape=", ")");
  if (shape.empty()) return -1;
  size_t close = shape.find(']');
  if (close != std::string_view::npos) shape = shape.substr(0, close);
  size_t b = shape.find('[');
  if (b == std::string_view::npos) return -1;
  shape = shape.substr(b + 1);
  long long numel = 1;
  bool any = false;
  size_t i = 0;
  while (i < shape.size()) {
    long long d;
    size_t n;
    if (parse_dec(shape.substr(i), &d, &n)) {
      any = true;
      if (numel < (1LL << 40)) numel *= d;
      i += n;
    } else {
      ++i;
    }
  }
  return any ? numel : -1;
}

// "CollectiveFingerPrint(...)" as printed, from `at` (its first byte) to the parenthesis that
// closes it (TensorOptions(...) nests), or to ", but Rank" or the end when the line was cut.
std::string_view fingerprint_text(std::string_view t, size_t at) {
  size_t open = t.find('(', at);
  if (open == std::string_view::npos) return t.substr(at);
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i] == '(') ++depth;
    if (t[i] == ')' && --depth == 0) return t.substr(at, i + 1 - at);
  }
  size_t but = t.find(", but Rank", at);
  return t.substr(at, but == std::string_view::npos ? std::string_view::npos : but - at);
}

// " of 129 elements", or "" when the fingerprint gave no shape.
std::string shape_words(long long numel) { return numel < 0 ? "" : fmt::format(" of {} elements", numel); }

}  // namespace

void read_fingerprint(const Hit& hit, Record& rec) {
  std::string_view t = rec.text;
  const Matcher& m = rec.r.matcher();
  int found = 0;
  size_t at = 0;
  Hit one;
  while (found < 8 && at < t.size() && m.match_entry(hit.index, t.substr(at), &one)) {
    long long r = to_ll(one.get(Field::rank));
    std::string_view body = one.get(Field::what);
    size_t next = static_cast<size_t>(one.get(Field::rank).data() - t.data());
    at = next + 1;
    if (r < 0 || r >= kMaxRank) continue;
    WatchRecord w;
    w.who = Who{-1, static_cast<int>(r), "", fmt::format("rank {}", r)};
    w.fingerprint = true;
    w.group = "TORCH_DISTRIBUTED_DEBUG=DETAIL";
    w.group_rank = static_cast<int>(r);
    size_t sq = body.find("SequenceNumber=");
    w.seq = sq == std::string_view::npos ? -1 : to_ll(body.substr(sq + 15));
    // "OpType=REDUCE" may follow the number without a comma (SequenceNumber=0OpType=REDUCE).
    w.op = std::string(token_after(body, "OpType=", " ,)"));
    std::string_view dtype = token_after(body, "TensorDtypes=", " ,)");
    if (!dtype.empty()) w.op += " " + std::string(dtype);
    w.numel_in = w.numel_out = numel_of(body);
    size_t print = t.find("CollectiveFingerPrint(", next);
    if (print != std::string_view::npos) w.quote = std::string(fingerprint_text(t, print));
    w.evidence = rec.r.evidence(rec.st, t);
    w.evidence.signal = hit.signal->id;
    rec.r.add_watch(std::move(w));
    ++found;
  }
  if (found == 0) rec.r.bad(rec.st, t);
  // Both sides of one two-rank report at different positions, or without positions (before
  // PyTorch 2.1, where a report of another line may be another collective altogether), cannot be
  // aligned with anything: the report itself is the finding, naming both ranks and no culprit.
  size_t n = rec.r.watch.size();
  if (found == 2 && n >= 2 && (rec.r.watch[n - 1].seq != rec.r.watch[n - 2].seq || rec.r.watch[n - 1].seq < 0)) {
    const WatchRecord& a = rec.r.watch[n - 2];
    const WatchRecord& b = rec.r.watch[n - 1];
    Reported rep;
    rep.kind = Reported::Kind::pair_mismatch;
    rep.ranks = {a.group_rank, b.group_rank};
    rep.detail = a.seq < 0 && b.seq < 0
                     ? fmt::format("rank {} runs {}{} while rank {} runs {}{} (TORCH_DISTRIBUTED_DEBUG=DETAIL)", a.group_rank,
                                   a.op, shape_words(a.numel_in), b.group_rank, b.op, shape_words(b.numel_in))
                     : fmt::format("rank {} is at SequenceNumber {} {} while rank {} is at SequenceNumber {} {} "
                                   "(TORCH_DISTRIBUTED_DEBUG=DETAIL)",
                                   a.group_rank, a.seq, a.op, b.group_rank, b.seq, b.op);
    rep.evidence = a.evidence;
    rec.r.add_reported(std::move(rep));
  }
  // PyTorch 1.x's one-sided form, "Rank R is running inconsistent collective: ...", printed by
  // rank R itself (ProcessGroupWrapper prints its own rank and fingerprint) when its fingerprint
  // differs from another rank's: R is one side of the disagreement, not shown to be the odd one.
  if (found == 1 && n >= 1 && t.find("inconsistent collective") != std::string_view::npos &&
      t.find(", but Rank") == std::string_view::npos) {
    const WatchRecord& a = rec.r.watch[n - 1];
    Reported rep;
    rep.kind = Reported::Kind::pair_mismatch;
    rep.ranks = {a.group_rank};
    rep.detail = fmt::format("rank {} reports that its collective, {}, differs from another rank's, which the line does not "
                             "name (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
                             a.group_rank, a.op.empty() ? "of some kind" : a.op);
    rep.evidence = a.evidence;
    rec.r.add_reported(std::move(rep));
  }
}

}  // namespace denpex::evidence
