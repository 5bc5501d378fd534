// ProcessGroupNCCL's watchdog lines, every format since 1.x: "[Rank r]" or "[PG ID i PG GUID
// g(name) Rank r]" / "[PG i (name) Rank r]" tags, WorkNCCL(SeqNum, OpType[, NumelIn, NumelOut]),
// "Timeout at NCCL work: N, last enqueued NCCL work: M, last completed NCCL work: K".
#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

// The process group and the rank in it from the line's tag; group "" for the old "[Rank r]".
void pg_tag(std::string_view t, WatchRecord* w) {
  size_t tag = t.find("[PG ");
  size_t rk = t.find("Rank ", tag == std::string_view::npos ? 0 : tag);
  if (tag != std::string_view::npos) {
    size_t close = t.find(']', tag);
    std::string_view inside = t.substr(tag + 1, close == std::string_view::npos ? 0 : close - tag - 1);
    size_t guid = inside.find("GUID ");
    std::string_view g = guid != std::string_view::npos ? inside.substr(guid + 5)
                         : inside.size() > 3             ? inside.substr(3)
                                                         : std::string_view();
    size_t r = g.find(" Rank ");
    if (r != std::string_view::npos) g = g.substr(0, r);
    w->group = fmt::format("PG {}", trim(g));
  }
  if (rk != std::string_view::npos) {
    long long r = to_ll(t.substr(rk + 5));
    if (r >= 0 && r < kMaxRank) w->group_rank = static_cast<int>(r);
  }
}

}  // namespace

void read_watchdog(const Hit& hit, Record& rec) {
  std::string_view t = rec.text;
  WatchRecord w;
  w.who = rec.r.who_of(rec.proc);
  w.evidence = rec.r.evidence(rec.st, t);
  w.evidence.signal = hit.signal->id;
  pg_tag(t, &w);
  bool work = t.find("WorkNCCL(") != std::string_view::npos;
  w.seq = to_ll(hit.get(Field::seq));
  w.op = std::string(hit.get(Field::op));
  w.numel_in = to_ll(hit.get(Field::numel_in));
  w.numel_out = to_ll(hit.get(Field::numel_out));
  w.last_enqueued = to_ll(hit.get(Field::last_enqueued));
  w.last_completed = to_ll(hit.get(Field::last_completed));
  if (w.seq < 0) w.seq = to_ll(hit.get(Field::value));
  if (work && w.op.empty() && w.seq < 0) {
    rec.r.bad(rec.st, t);
    return;
  }
  // The old format names no group and its "[Rank r]" is the rank in the process group; with
  // nothing better it is taken as the job-wide rank of a one-group job.
  if (rec.r.valid_process(rec.proc)) {
    Process& p = rec.r.processes[static_cast<size_t>(rec.proc)];
    if (w.group.empty() && w.group_rank >= 0 && p.rank < 0) {
      p.rank = w.group_rank;
      p.rank_weak = true;
      w.who.rank = p.rank;
    }
  }
  Failure f;
  f.kind = Failure::Kind::timeout;
  f.who = rec.r.who_of(rec.proc);
  f.when = rec.lab.when;
  f.group = w.group;
  f.seq = w.seq;
  f.ran_ms = to_ll(hit.get(Field::time));
  f.what = w.op.empty() ? fmt::format("watchdog timeout at work {}", w.seq)
                        : fmt::format("watchdog timeout in {} (SeqNum {})", w.op, w.seq);
  // The same record of a collective that failed with an NCCL error instead of timing out
  // ("raised the following async exception"): the call ended, so it is no wait of its own.
  if (hit.signal->kind == "aborted") {
    f.kind = Failure::Kind::aborted;
    f.ran_ms = -1;
    f.what = fmt::format("NCCL error in {} (SeqNum {}): {}", w.op.empty() ? "a collective" : w.op, w.seq,
                         short_what(hit.get(Field::what)));
  }
  f.evidence = w.evidence;
  rec.r.add_watch(std::move(w));
  --rec.r.records;  // one record, two events
  rec.r.add_failure(std::move(f));
}

}  // namespace denpex::evidence
