// The generic family readers: one line, one event, its fields named by the table entry's
// pattern (failures, installation facts, reports, launcher exits), and the registry of readers.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"
#include "probe/record.h"

namespace denpex::evidence {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string_view cut(std::string_view s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

std::string short_what(std::string_view what) {
  what = trim(what);
  if (what.size() <= 120) return std::string(what);
  size_t cut_at = std::string_view::npos;
  for (size_t i = what.find(". "); i != std::string_view::npos && i < 120; i = what.find(". ", i + 1)) cut_at = i + 1;
  if (cut_at == std::string_view::npos || cut_at < 30) return std::string(what.substr(0, 117)) + "...";
  return std::string(what.substr(0, cut_at));
}

std::vector<int> int_list(std::string_view s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size() && out.size() < 4096) {
    if (s[i] >= '0' && s[i] <= '9') {
      long long v;
      size_t n;
      if (parse_dec(s.substr(i), &v, &n) && v < kMaxRank) out.push_back(static_cast<int>(v));
      i += n;
    } else {
      ++i;
    }
  }
  return out;
}

long long to_ll(std::string_view s, long long fallback) {
  bool neg = !s.empty() && s[0] == '-';
  long long v;
  size_t n;
  if (!parse_dec(neg ? s.substr(1) : s, &v, &n)) return fallback;
  return neg ? -v : v;
}

bool collateral_text(std::string_view t) {
  static const std::string_view kWords[] = {
      "Watchdog caught collective operation timeout", "timed out", "Timed out", "timeout",
      "Timeout", "aborted", "Aborted", "abort", "remote process exited", "Connection reset",
      "Connection closed", "closed by remote", "Broken pipe", "ncclRemoteError", "remote peer",
      "DistNetworkError", "Socket Timeout", "heartbeat", "closing signal", "SIGTERM"};
  for (auto w : kWords)
    if (t.find(w) != std::string_view::npos) return true;
  return false;
}

namespace {

Evidence evidence_of(const Hit& hit, Record& rec) {
  Evidence e = rec.r.evidence(rec.st, rec.text);
  e.signal = hit.signal->id;
  return e;
}

const std::map<std::string, Failure::Kind>& failure_kinds() {
  static const std::map<std::string, Failure::Kind> kinds = {
      {"oom", Failure::Kind::oom}, {"own_error", Failure::Kind::own_error},
      {"nccl_warn", Failure::Kind::nccl_warn}, {"timeout", Failure::Kind::timeout},
      {"aborted", Failure::Kind::aborted}, {"killed", Failure::Kind::killed},
      {"never_joined", Failure::Kind::never_joined}, {"finished", Failure::Kind::finished},
      {"pointed_to", Failure::Kind::pointed_to}};
  return kinds;
}

bool failure_kind(const std::string& k, Failure::Kind* out) {
  const auto& kinds = failure_kinds();
  auto it = kinds.find(k);
  if (it == kinds.end()) return false;
  *out = it->second;
  return true;
}

const std::map<std::string, Fact::Kind>& fact_kinds() {
  static const std::map<std::string, Fact::Kind> kinds = {
      {"nccl_version", Fact::Kind::nccl_version}, {"driver_cuda", Fact::Kind::driver_cuda},
      {"plugin_loaded", Fact::Kind::plugin_loaded}, {"plugin_missing", Fact::Kind::plugin_missing},
      {"plugin_unloadable", Fact::Kind::plugin_unloadable},
      {"nccl_env", Fact::Kind::nccl_env}, {"undefined_symbol", Fact::Kind::undefined_symbol},
      {"driver_stub", Fact::Kind::driver_stub}, {"driver_too_old", Fact::Kind::driver_too_old},
      {"nvml_mismatch", Fact::Kind::nvml_mismatch}, {"nccl_missing", Fact::Kind::nccl_missing},
      {"torch_nccl", Fact::Kind::torch_nccl}, {"nccl_wheel", Fact::Kind::nccl_wheel},
      {"nccl_path", Fact::Kind::nccl_path}};
  return kinds;
}

bool fact_kind(const std::string& k, Fact::Kind* out) {
  const auto& kinds = fact_kinds();
  auto it = kinds.find(k);
  if (it == kinds.end()) return false;
  *out = it->second;
  return true;
}

const std::map<std::string, Reported::Kind>& report_kinds() {
  static const std::map<std::string, Reported::Kind> kinds = {
      {"nccl_mismatch", Reported::Kind::nccl_mismatch}, {"nccl_version", Reported::Kind::nccl_version},
      {"net_mismatch", Reported::Kind::net_mismatch}, {"truncated", Reported::Kind::truncated},
      {"shape_mismatch", Reported::Kind::shape_mismatch}, {"pair_mismatch", Reported::Kind::pair_mismatch},
      {"device_shared", Reported::Kind::device_shared}};
  return kinds;
}

bool report_kind(const std::string& k, Reported::Kind* out) {
  const auto& kinds = report_kinds();
  auto it = kinds.find(k);
  if (it == kinds.end()) return false;
  *out = it->second;
  return true;
}

bool looks_like_version(std::string_view v) {
  return v.size() >= 3 && v[0] >= '0' && v[0] <= '9' && v.find('.') != std::string_view::npos;
}

// The two facts a version field gives: "2.21.5" (+ its CUDA build).
void version_fact(const Hit& hit, Record& rec, Fact::Kind kind) {
  std::string v(hit.get(Field::version));
  if (!looks_like_version(v)) return;
  rec.r.add_fact(Fact{kind, rec.r.who_of(rec.proc), v, std::string(hit.get(Field::cuda)), evidence_of(hit, rec)});
}

std::string fact_a(const Hit& hit, Fact::Kind kind) {
  switch (kind) {
    case Fact::Kind::driver_cuda: {
      long long d = to_ll(hit.get(Field::version));
      return d > 0 && d < 1000000 ? fmt::format("{}.{}", d / 1000, d % 1000 / 10) : std::string();
    }
    case Fact::Kind::undefined_symbol: return std::string(hit.get(Field::symbol));
    case Fact::Kind::nccl_env: return std::string(hit.get(Field::name));
    case Fact::Kind::torch_nccl: {
      std::vector<int> parts = int_list(hit.get(Field::version));
      return parts.size() == 3 ? fmt::format("{}.{}.{}", parts[0], parts[1], parts[2]) : std::string();
    }
    case Fact::Kind::plugin_loaded:
      return std::string(hit.has(Field::path) ? hit.get(Field::path) : trim(hit.get(Field::name)));
    case Fact::Kind::driver_stub: case Fact::Kind::nccl_path: return std::string(hit.get(Field::path));
    case Fact::Kind::nccl_version: case Fact::Kind::nccl_wheel: return std::string(hit.get(Field::version));
    default: return std::string(cut(trim(hit.has(Field::what) ? hit.get(Field::what) : hit.text), 200));
  }
}

std::string fact_b(const Hit& hit, Fact::Kind kind) {
  switch (kind) {
    case Fact::Kind::nccl_version: return std::string(hit.get(Field::cuda));
    case Fact::Kind::nccl_env: return std::string(hit.get(Field::value));
    case Fact::Kind::undefined_symbol: return std::string(hit.get(Field::library));
    case Fact::Kind::nccl_wheel: return std::string(hit.get(Field::name));
    case Fact::Kind::plugin_loaded: {
      long long v = to_ll(hit.get(Field::version));
      return v > 0 && v < 100 ? fmt::format("ncclNetPlugin_v{}", v) : std::string();
    }
    case Fact::Kind::nvml_mismatch: return std::string(hit.get(Field::version));
    default: return {};
  }
}

Failure failure_of(const Hit& hit, Record& rec, Failure::Kind kind) {
  Failure f;
  f.kind = kind;
  f.who = rec.r.who_of(rec.proc);
  // A line without a launcher label of its own that names a host and a pid names the process
  // it is about better than the lines before it or the file it is in: UCX's "[host:pid:0:tid]"
  // names the process that printed it, Ray's raylet the worker that died. Named as NCCL's header
  // and Ray's label name a process ("host:pid"), so that process's other lines are the same one.
  long long pid = to_ll(hit.get(Field::pid));
  bool unlabelled = rec.lab.rank < 0 && rec.lab.task < 0 && rec.lab.worker.empty();
  if (hit.has(Field::host) && pid >= 0 && (unlabelled || (f.who.rank < 0 && (f.who.proc.empty() || f.who.proc.rfind("file ", 0) == 0)))) {
    std::string host(cut(hit.get(Field::host), 128));
    int idx = rec.r.process_by_key(fmt::format("{}:{}", host, pid), -1);
    Process& p = rec.r.processes[static_cast<size_t>(idx)];
    if (p.host.empty()) p.host = host;
    if (p.pid < 0) p.pid = pid;
    f.who = rec.r.who_of(idx);
  }
  // A line that names its own rank ("Rank 4 completed") where no launcher label does.
  long long named = to_ll(hit.get(Field::rank));
  if (f.who.rank < 0 && named >= 0 && named < kMaxRank) {
    f.who.rank = static_cast<int>(named);
    f.who.proc = fmt::format("rank {}", named);
  }
  if (f.who.host.empty() && hit.has(Field::host)) f.who.host = std::string(cut(hit.get(Field::host), 128));
  f.peer = std::string(cut(hit.get(Field::peer), 128));
  std::string_view what = hit.has(Field::what) ? hit.get(Field::what) : hit.text;
  f.what = (rec.nccl ? "NCCL WARN " : "") + short_what(what);
  f.when = rec.lab.when;
  f.hint = std::string(hit.get(Field::value));
  f.evidence = evidence_of(hit, rec);
  return f;
}

// Whether this line's process already printed a timeout of its own: a rank that gets stuck after
// it timed out hangs in the abort that followed, not before the others.
bool timed_out_before(const Record& rec) {
  if (rec.proc < 0) return false;
  for (const auto& f : rec.r.failures)
    if (f.kind == Failure::Kind::timeout && f.who.index == rec.proc) return true;
  return false;
}

}  // namespace

// A watchdog line names its rank in its process group ("[PG ID 2 PG GUID 3 Rank 0]"): in the
// default group (PG 0, or none printed by old releases) that is the job-wide rank; in another
// group it is only the rank there, so the process is named by it and keeps no job-wide rank.
void learn_group_rank(const Hit& hit, Record& rec) {
  long long gr = to_ll(hit.get(Field::group_rank));
  if (gr < 0 || gr >= kMaxRank || !rec.r.valid_process(rec.proc)) return;
  Process& p = rec.r.processes[static_cast<size_t>(rec.proc)];
  if (p.rank >= 0) return;
  std::string_view g = hit.get(Field::group);
  if (g.empty() || g == "0") {
    p.rank = static_cast<int>(gr);
    p.rank_weak = true;
  } else if (p.key.rfind("file ", 0) == 0) {
    p.key = fmt::format("rank {} of PG {}", gr, g);
  }
}

void read_failure(const Hit& hit, Record& rec) {
  learn_group_rank(hit, rec);
  Failure::Kind kind = Failure::Kind::own_error;
  failure_kind(hit.signal->kind, &kind);
  // A generic error whose text says it follows a peer's is collateral.
  std::string_view what = hit.has(Field::what) ? hit.get(Field::what) : hit.text;
  const std::string& role = hit.signal->role;
  if ((kind == Failure::Kind::own_error || kind == Failure::Kind::nccl_warn) && role == "initiating" &&
      collateral_text(what) && hit.signal->family != "cuda")
    kind = Failure::Kind::aborted;
  if (role == "hang" && timed_out_before(rec)) kind = Failure::Kind::aborted;
  if (hit.has(Field::version)) version_fact(hit, rec, Fact::Kind::nccl_version);
  Failure f = failure_of(hit, rec, kind);
  f.shared_fault = role == "fault" || role == "fabric" || role == "build";
  f.far_end = role == "fabric" || role == "build";
  f.cause = role == "cause";
  rec.r.add_failure(std::move(f));
}

void read_fact(const Hit& hit, Record& rec) {
  Fact::Kind kind;
  if (!fact_kind(hit.signal->kind, &kind)) return;
  std::string a = fact_a(hit, kind);
  if (a.empty() && kind != Fact::Kind::driver_stub) {
    rec.r.bad(rec.st, rec.text);
    return;
  }
  rec.r.add_fact(Fact{kind, rec.r.who_of(rec.proc), a, fact_b(hit, kind), evidence_of(hit, rec)});
  if (kind == Fact::Kind::nvml_mismatch) env_driver_facts(rec, hit.signal);
  // Errors that stop the process are also its failure (the installation fact explains it).
  if (kind == Fact::Kind::undefined_symbol || kind == Fact::Kind::driver_too_old || kind == Fact::Kind::driver_stub ||
      kind == Fact::Kind::nvml_mismatch || kind == Fact::Kind::nccl_missing)
    rec.r.add_failure(failure_of(hit, rec, Failure::Kind::own_error));
}

void read_report(const Hit& hit, Record& rec) {
  Reported r;
  if (!report_kind(hit.signal->kind, &r.kind)) return;
  r.who = rec.r.who_of(rec.proc);
  r.evidence = evidence_of(hit, rec);
  long long a = to_ll(hit.get(Field::rank)), b = to_ll(hit.get(Field::group_rank));
  if (a >= 0 && a < kMaxRank) r.ranks.push_back(static_cast<int>(a));
  if (b >= 0 && b < kMaxRank) r.ranks.push_back(static_cast<int>(b));
  r.detail = std::string(cut(trim(hit.has(Field::what) ? hit.get(Field::what) : hit.text), 160));
  if (r.kind == Reported::Kind::nccl_version) {
    // "rank 0 version 22703 rank 1 version 22602": NCCL's own comparison of two ranks.
    std::string_view codes[2] = {hit.get(Field::version), hit.get(Field::value)};
    for (size_t i = 0; i < r.ranks.size() && i < 2; ++i) {
      std::string v = nccl_version_from_code(static_cast<int>(std::min<long long>(to_ll(codes[i], 0), 1 << 30)));
      rec.r.add_fact(Fact{Fact::Kind::nccl_version, Who{-1, r.ranks[i], "", fmt::format("rank {}", r.ranks[i])}, v, "", r.evidence});
    }
  }
  rec.r.add_reported(std::move(r));
}

void read_ranks(const Hit& hit, Record& rec) {
  Failure::Kind kind = Failure::Kind::never_joined;
  failure_kind(hit.signal->kind, &kind);
  for (int rank : int_list(hit.get(Field::ranks))) {
    Failure f;
    f.kind = kind;
    f.who = Who{-1, rank, "", fmt::format("rank {}", rank)};
    // A line that points at a rank is another rank's: its words are not this rank's own error.
    f.what = kind == Failure::Kind::pointed_to ? "named by another rank's error: " + short_what(hit.text)
                                               : short_what(hit.text);
    f.evidence = evidence_of(hit, rec);
    rec.r.add_failure(std::move(f));
  }
  // The rank that points at another waited on it: it only followed.
  if (kind == Failure::Kind::pointed_to && rec.r.valid_process(rec.proc))
    rec.r.add_failure(failure_of(hit, rec, Failure::Kind::aborted));
}

void read_pair(const Hit& hit, Record& rec) { read_report(hit, rec); }

void read_none(const Hit&, Record&) {}

namespace {

const std::string& name_of(const std::string& kind) { return kind; }
template <typename V>
const std::string& name_of(const std::pair<const std::string, V>& kind) { return kind.first; }

// Kinds are a map's keys or a set's members.
template <typename Kinds>
std::string not_in(const Kinds& kinds, std::string_view reader, const std::string& kind) {
  if (kinds.count(kind)) return {};
  std::string known;
  for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + name_of(k);
  return fmt::format("unknown kind '{}' for reader {} (it knows: {})", kind, reader, known);
}

}  // namespace

std::string unknown_kind(std::string_view reader, const std::string& kind) {
  if (reader == "failure" || reader == "ranks") return not_in(failure_kinds(), reader, kind);
  if (reader == "fact") return not_in(fact_kinds(), reader, kind);
  if (reader == "report" || reader == "pair") return not_in(report_kinds(), reader, kind);
  // The readers that branch on `kind` in their own code (read_env_report, read_diag, ...), or
  // take one kind only: the kinds each knows, so that a typo fails the load instead of a line
  // read as nothing.
  static const std::map<std::string_view, std::set<std::string>> kOwnKinds = {
      {"env", {"api_mismatch", "cdll", "cuda_runtime", "driver_kernel",
               "driver_smi", "driver_user", "nccl_file", "nccl_package",
               "pip_show", "prompt", "symbol_probe", "sys_module_open",
               "torch_cuda", "torch_nccl_open", "torch_version"}},
      {"diag", {"diag_ecc", "diag_env", "diag_env_mismatch", "diag_incomplete",
                "diag_p2p", "diag_report", "diag_version", "diag_xid"}},
      {"launcher", {"exit", "kill"}},
      {"ras", {"ras_counts", "ras_report"}},
      {"watchdog", {"aborted", "timeout"}},
      {"horovod", {"missing", "ready"}},
      {"desync", {"never_joined"}},
      {"none", {"none"}},
      {"coll", {"call"}},
      {"init", {"init"}},
      {"fingerprint", {"fingerprint"}},
      {"fr_trace", {"fr_errors"}},
      {"horovod_stall", {"missing"}},
      {"slurm_oom", {"oom"}},
      {"slurm_task", {"oom"}},
      {"torchrun", {"claim"}},
      {"mpirun_first", {"exit"}},
  };
  auto own = kOwnKinds.find(reader);
  if (own != kOwnKinds.end()) return not_in(own->second, reader, kind);
  return fmt::format("unknown reader '{}'", reader);
}

FamilyRead family_reader(std::string_view name) {
  static const std::map<std::string_view, FamilyRead> readers = {
      {"coll", read_coll}, {"init", read_init}, {"failure", read_failure}, {"fact", read_fact},
      {"report", read_report}, {"launcher", read_launcher}, {"ranks", read_ranks}, {"pair", read_pair},
      {"none", read_none}, {"watchdog", read_watchdog}, {"fingerprint", read_fingerprint},
      {"desync", read_desync}, {"horovod", read_horovod}, {"fr_trace", read_fr_trace}, {"ras", read_ras},
      {"torchrun", read_torchrun}, {"env", read_env}, {"horovod_stall", read_horovod_stall},
      {"slurm_oom", read_slurm_oom}, {"slurm_task", read_slurm_task},
      {"diag", read_diag}, {"mpirun_first", read_mpirun_first}};
  auto it = readers.find(name);
  return it == readers.end() ? nullptr : it->second;
}

}  // namespace denpex::evidence
