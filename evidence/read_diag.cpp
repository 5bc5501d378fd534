// NCCL's diagnostics report lines (the formats: evidence/read_diag.h). Each line stands alone
// but for the NCCL environment's value lines, which belong to the mismatch line before them; what
// a line says is kept in FileState::diag and turned into events at the end of the input, when the
// communicator whose ranks are job ranks is known.
#include "evidence/read_diag.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/finding_codes.h"
#include "compare/fold.h"

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

bool diag_rank_set(std::string_view s, std::vector<int>* ranks, int* listed) {
  s = trim(s);
  size_t close = s.find('}');
  if (s.empty() || s[0] != '{' || close == std::string_view::npos) return false;
  *ranks = int_list(s.substr(1, close - 1));
  *listed = static_cast<int>(ranks->size());
  size_t n = s.find("(N=", close);
  if (n != std::string_view::npos) {
    long long total = to_ll(s.substr(n + 3));
    if (total >= static_cast<long long>(ranks->size()) && total < kMaxRank) *listed = static_cast<int>(total);
  }
  return true;
}

std::vector<int> diag_odd_ranks(const DiagItem& item) {
  std::vector<int> out;
  bool listed_few = item.nranks > 0 && 2 * item.listed < item.nranks;
  bool listed_many = item.nranks > 0 && 2 * item.listed > item.nranks;
  if (!listed_many) out = item.ranks;
  if (!listed_few && item.ref_rank >= 0) out.push_back(item.ref_rank);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

int small_int(std::string_view s) {
  long long v = to_ll(s);
  return v >= 0 && v < kMaxRank ? static_cast<int>(v) : -1;
}

void keep(Record& rec, DiagItem item) {
  std::vector<DiagItem>& items = rec.st.diag.items;
  if (items.size() >= kMaxEvents) return;
  items.push_back(std::move(item));
  ++rec.r.records;
}

// The line's rank set into `item`; a line whose set cannot be read is counted as unreadable.
bool rank_set(const Hit& hit, Record& rec, DiagItem* item) {
  if (diag_rank_set(hit.get(Field::ranks), &item->ranks, &item->listed)) return true;
  rec.r.bad(rec.st, rec.text);
  return false;
}

// "=== ... ===", "[OK] ..." and the lines no finding follows from: read, nothing kept; the
// active diagnostics' completed line gives its P2P lines their communicator's size.
void report_line(Record& rec) {
  ++rec.r.records;
  std::string_view t = rec.text;
  size_t at = t.find("NCCL diagnostics completed in ");
  size_t across = t.find(" across ", at == std::string_view::npos ? 0 : at);
  if (at == std::string_view::npos || across == std::string_view::npos) return;
  int n = small_int(t.substr(across + 8));
  for (DiagItem& x : rec.st.diag.items)
    if (x.kind == DiagItem::Kind::p2p && x.nranks < 0) x.nranks = n;
}

}  // namespace

void read_diag(const Hit& hit, Record& rec) {
  const std::string& kind = hit.signal->kind;
  DiagState& s = rec.st.diag;
  DiagItem item;
  item.evidence = rec.r.evidence(rec.st, rec.text);
  item.evidence.signal = hit.signal->id;
  item.when = rec.lab.when;
  item.comm = std::string(hit.get(Field::comm));
  item.nranks = small_int(hit.get(Field::nranks));
  item.check = std::string(trim(hit.get(Field::what)));
  if (kind == "diag_env_mismatch") {
    s.env_comm = item.comm;
    s.env_nranks = item.nranks;
    ++rec.r.records;
    return;
  }
  if (kind == "diag_env") {
    item.kind = DiagItem::Kind::env;
    item.comm = s.env_comm;
    item.nranks = s.env_nranks;
    item.name = std::string(hit.get(Field::name));
    item.value = std::string(hit.get(Field::value));
    if (rank_set(hit, rec, &item)) keep(rec, std::move(item));
  } else if (kind == "diag_version" || kind == "diag_ecc") {
    item.kind = kind == "diag_ecc" ? DiagItem::Kind::ecc : DiagItem::Kind::version;
    item.ref_rank = small_int(hit.get(Field::rank));
    item.value = std::string(hit.get(Field::value));
    item.count = to_ll(hit.get(Field::count));
    if (rank_set(hit, rec, &item)) keep(rec, std::move(item));
  } else if (kind == "diag_xid") {
    item.kind = DiagItem::Kind::xid;
    item.host = std::string(cut(hit.get(Field::host), 128));
    keep(rec, std::move(item));
  } else if (kind == "diag_incomplete") {
    item.kind = DiagItem::Kind::incomplete;
    item.count = to_ll(hit.get(Field::count));
    keep(rec, std::move(item));
  } else if (kind == "diag_p2p") {
    // The P2P check's lines name the source rank and the destination (the group_rank field).
    item.kind = DiagItem::Kind::p2p;
    int src = small_int(hit.get(Field::rank)), dst = small_int(hit.get(Field::group_rank));
    if (src < 0 || dst < 0) {
      rec.r.bad(rec.st, rec.text);
      return;
    }
    item.ranks = {src};
    item.listed = 1;
    item.ref_rank = dst;
    item.value = std::string(hit.get(Field::path));
    keep(rec, std::move(item));
  } else {
    report_line(rec);
  }
}

namespace {

Who rank_who(int rank) { return Who{-1, rank, "", fmt::format("rank {}", rank)}; }

Failure failure_of(const DiagItem& x, Who who, std::string what) {
  Failure f;
  f.kind = Failure::Kind::own_error;
  f.who = std::move(who);
  f.what = std::move(what);
  f.when = x.when;
  f.evidence = x.evidence;
  return f;
}

// The events that name job ranks or hosts: facts and failures, as the other readers give them.
void diag_events(LogReader& r, const DiagItem& x, int world, std::set<std::string>* seen) {
  // A P2P line whose report was cut before its completed line gives no size: its ranks are
  // taken as the job's only when no line names a larger communicator.
  bool job_ranks = x.nranks == world || (x.kind == DiagItem::Kind::p2p && x.nranks < 0 && world < 0);
  if (x.kind == DiagItem::Kind::xid) {
    if (seen->insert("xid " + x.check).second)
      r.add_failure(failure_of(x, Who{-1, -1, x.host, ""}, fmt::format("NCCL's RAS diagnostics: {}", x.check)));
    return;
  }
  if (!job_ranks) return;
  if (x.kind == DiagItem::Kind::env) {
    for (int rank : x.ranks) r.add_fact(Fact{Fact::Kind::nccl_env, rank_who(rank), x.name, x.value, x.evidence});
  } else if (x.kind == DiagItem::Kind::ecc) {
    for (int rank : x.ranks)
      if (seen->insert(fmt::format("ecc {}", rank)).second)
        r.add_failure(failure_of(x, rank_who(rank),
                                 fmt::format("NCCL's RAS diagnostics: uncorrected volatile ECC errors on the GPU of "
                                             "rank {} (worst {} on one GPU)",
                                             rank, x.count)));
  } else if (x.kind == DiagItem::Kind::p2p) {
    // One line names both ends of the pair: blame takes them together.
    std::string what = fmt::format("NCCL's P2P check failed from rank {} to rank {} (path {}): {}", x.ranks.front(),
                                   x.ref_rank, x.value, x.check);
    r.add_failure(failure_of(x, rank_who(x.ranks.front()), what));
    r.add_failure(failure_of(x, rank_who(x.ref_rank), what));
  }
}

Finding version_finding(const DiagItem& x) {
  Finding f;
  f.code = FindingCode::cuda_driver_version_mismatch;
  f.severity = Severity::warning;
  f.comm = x.comm;
  f.ranks = diag_odd_ranks(x);
  std::string listed = rank_subject(x.ranks);
  if (x.listed > static_cast<int>(x.ranks.size())) listed += fmt::format(" and {} more", x.listed - static_cast<int>(x.ranks.size()));
  f.expected = fmt::format("one {} on every rank", x.check);
  f.found = fmt::format("rank {}: {}; {}: another", x.ref_rank, x.value, listed);
  f.message = fmt::format("NCCL's RAS diagnostics: the {} differs across the {} ranks of communicator {}: {} differ "
                          "from rank {} ({})",
                          x.check, x.nranks, x.comm, listed, x.ref_rank, x.value);
  f.fix = "install the same NVIDIA driver on every node of the job (nvidia-smi prints its version), or leave the "
          "nodes whose driver differs out of the job";
  return f;
}

Finding incomplete_finding(const DiagItem& x) {
  Finding f;
  f.code = FindingCode::collective_ranks_absent;
  f.severity = Severity::warning;
  f.comm = x.comm;
  long long missing = x.nranks > 0 && x.count >= 0 ? x.nranks - x.count : -1;
  f.found = fmt::format("{} of {} ranks answered", x.count, x.nranks);
  f.message = fmt::format("NCCL's RAS diagnostics ({}) gathered {} of the {} ranks of communicator {}: {} did not "
                          "answer, and the report does not name {}",
                          x.check, x.count, x.nranks, x.comm,
                          missing == 1 ? std::string("1 rank") : fmt::format("{} ranks", missing),
                          missing == 1 ? "it" : "them");
  f.fix = "run ncclras (STATUS) while the job is up: its report names the ranks RAS cannot reach and whether they are "
          "dead";
  return f;
}

}  // namespace

void end_diag(LogReader& r, FileState& st) {
  DiagState& s = st.diag;
  int world = -1;
  for (const DiagItem& x : s.items)
    if (x.kind != DiagItem::Kind::xid) world = std::max(world, x.nranks);
  std::set<std::string> seen;
  for (const DiagItem& x : s.items) {
    diag_events(r, x, world, &seen);
    if (x.kind != DiagItem::Kind::version && x.kind != DiagItem::Kind::incomplete) continue;
    // A report asked for again prints the same lines: one finding per communicator and check.
    if (!seen.insert(fmt::format("{} {} {}", static_cast<int>(x.kind), x.comm, x.check)).second) continue;
    RasTextFinding rf;
    rf.finding = x.kind == DiagItem::Kind::version ? version_finding(x) : incomplete_finding(x);
    rf.evidence = {x.evidence};
    r.ras_text.push_back(std::move(rf));
  }
  s = DiagState();
}

}  // namespace denpex::evidence
