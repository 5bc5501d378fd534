#include "evidence/ras_json.h"

#include "compare/finding_codes.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/bounded_json.h"
#include "compare/fold.h"
#include "compare/ras_counts.h"

namespace denpex::evidence {
namespace {

using json = nlohmann::json;

template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : fallback;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : fallback;
  } else if (it->is_number_float()) {
    // A float past T's range (or NaN) would be undefined to convert: not a value RAS writes.
    double d = it->get<double>();
    return d >= static_cast<double>(std::numeric_limits<T>::min()) &&
                   d <= static_cast<double>(std::numeric_limits<T>::max())
               ? static_cast<T>(d)
               : fallback;
  } else {
    return it->is_number() ? it->get<T>() : fallback;
  }
}

RasRank rank_of(const json& r) {
  RasRank out;
  out.rank = get_or<int>(r, "rank", -1);
  out.host = get_or<std::string>(r, "host", "");
  out.pid = get_or<long long>(r, "pid", -1);
  out.cuda_dev = get_or<int>(r, "cuda_dev", -1);
  if (auto st = r.find("status"); st != r.end() && st->is_object()) {
    out.init_state = get_or<int>(*st, "init_state", 0);
    out.async_error = get_or<int>(*st, "async_error", 0);
    out.finalize_called = get_or<bool>(*st, "finalize_called", false);
    out.destroy_flag = get_or<bool>(*st, "destroy_flag", false);
    out.abort_flag = get_or<bool>(*st, "abort_flag", false);
  }
  if (auto c = r.find("collective_counts"); c != r.end() && c->is_object())
    for (auto it = c->begin(); it != c->end(); ++it)
      if (it.value().is_number_unsigned() || (it.value().is_number_integer() && it.value().get<long long>() >= 0))
        out.counts[it.key()] = it.value().get<unsigned long long>();
  return out;
}

RasCommunicator comm_of(const json& c) {
  RasCommunicator out;
  out.hash = get_or<std::string>(c, "hash", "");
  out.secondary_hash = get_or<std::string>(c, "secondary_hash", "");
  out.size = get_or<int>(c, "size", -1);
  if (auto rs = c.find("ranks"); rs != c.end() && rs->is_array())
    for (const json& r : *rs)
      if (r.is_object()) out.ranks.push_back(rank_of(r));
  if (auto ms = c.find("missing_ranks"); ms != c.end() && ms->is_array())
    for (const json& m : *ms) {
      if (!m.is_object()) continue;
      RasMissingRank x;
      x.rank = get_or<int>(m, "rank", -1);
      x.host = get_or<std::string>(m, "host", "");
      x.pid = get_or<long long>(m, "pid", -1);
      if (auto st = m.find("status"); st != m.end() && st->is_object()) {
        x.unresponsive = get_or<bool>(*st, "unresponsive", false);
        x.dead = get_or<bool>(*st, "considered_dead", false);
      }
      out.missing.push_back(x);
    }
  return out;
}

// What keeps a parsed document from being RAS output, "" when nothing does. The two keys the
// reader needs, with their types: "ras" and "communicators_count" (the footer and a count RAS
// writes too) are not needed, and a document without them (trimmed by a tool, or from a RAS
// version that did not write them) is read. The classifier (evidence/classify.cpp) sends a
// file here on "nccl_version", "communicators" and "cuda_runtime_version" in its head.
std::string ras_shape_problem(const json& j) {
  if (!j.is_object()) return fmt::format("the document is a JSON {}, not an object", j.type_name());
  std::vector<std::string> wrong;
  auto c = j.find("communicators");
  if (c == j.end()) wrong.push_back("no \"communicators\" key");
  else if (!c->is_array()) wrong.push_back(fmt::format("\"communicators\" is a JSON {}, not an array", c->type_name()));
  auto v = j.find("nccl_version");
  if (v == j.end()) wrong.push_back("no \"nccl_version\" key");
  else if (!v->is_string()) wrong.push_back(fmt::format("\"nccl_version\" is a JSON {}, not a string", v->type_name()));
  return fmt::format("{}", fmt::join(wrong, ", "));
}

}  // namespace

bool looks_like_ras_json(const std::string& text) {
  BoundedJson j = parse_bounded_json(text);
  return j.status == BoundedJsonStatus::ok && ras_shape_problem(j.value).empty();
}

RasReport read_ras_json(const std::string& text, const std::string& name) {
  RasReport out;
  out.source = name;
  BoundedJson j = parse_bounded_json(text);
  const std::string problem =
      j.status == BoundedJsonStatus::ok         ? ras_shape_problem(j.value)
      : j.status == BoundedJsonStatus::too_deep ? fmt::format("nested more than {} levels deep", kMaxJsonDepth)
                                                : std::string("not valid JSON");
  if (!problem.empty()) {
    out.message = fmt::format("{}: not NCCL RAS JSON output (ncclras -f json): {}", name, problem);
    return out;
  }
  out.status = RasReport::Status::ok;
  out.nccl_version = get_or<std::string>(j.value, "nccl_version", "");
  out.timestamp = get_or<std::string>(j.value, "timestamp", "");
  if (j.value["communicators"].is_array())
    for (const json& c : j.value["communicators"])
      if (c.is_object()) out.communicators.push_back(comm_of(c));
  return out;
}

namespace {

std::string comm_label(const RasCommunicator& c) { return c.hash.empty() ? std::string("(no hash)") : c.hash; }

void judge_counts(const RasCommunicator& c, std::vector<Finding>* out) {
  std::map<std::string, std::vector<RasOpCount>> by_op;
  for (const RasRank& r : c.ranks)
    for (const auto& [op, n] : r.counts) by_op[op].push_back(RasOpCount{r.rank, n, r.host});
  for (const auto& [op, counts] : by_op) {
    Finding f;
    if (ras_count_finding(judge_ras_counts(counts), comm_label(c), op, &f)) out->push_back(std::move(f));
  }
}

void judge_missing(const RasCommunicator& c, std::vector<Finding>* out) {
  std::vector<int> dead, unreachable;
  std::vector<std::string> dead_hosts, unreachable_hosts;
  for (const RasMissingRank& m : c.missing) {
    (m.dead ? dead : unreachable).push_back(m.rank);
    if (!m.host.empty() && m.host != "unknown") (m.dead ? dead_hosts : unreachable_hosts).push_back(m.host);
  }
  auto finding = [&](const char* code, Severity sev, std::vector<int> ranks, std::vector<std::string> hosts,
                     const char* what, const char* fix) {
    std::sort(ranks.begin(), ranks.end());
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    Finding f;
    f.code = code;
    f.severity = sev;
    f.comm = comm_label(c);
    f.message = fmt::format("{} of communicator {} {}", rank_phrase(ranks, hosts), comm_label(c), what);
    f.ranks = std::move(ranks);
    f.hosts = std::move(hosts);
    f.fix = fix;
    out->push_back(std::move(f));
  };
  if (!dead.empty())
    finding(code_name(FindingCode::ras_rank_dead), Severity::error, dead, dead_hosts,
            "is considered dead by NCCL's RAS: its process is gone, and the others wait for it",
            "read that rank's own log for why its process ended (a crash, the OOM killer, a node failure)");
  if (!unreachable.empty())
    finding("collective-ranks-absent", Severity::warning, unreachable, unreachable_hosts,
            "could not be reached by NCCL's RAS: their state is unknown",
            "look at those ranks' nodes and logs; run ncclras again to see whether they are dead");
}

void judge_errors(const RasCommunicator& c, std::vector<Finding>* out) {
  for (const RasRank& r : c.ranks) {
    bool init_bad = r.init_state != 0 && r.init_state != 7;
    bool async_bad = r.async_error != 0 && r.async_error != 7;
    if (!init_bad && !async_bad) continue;
    Finding f;
    f.code = code_name(FindingCode::ras_rank_error);
    f.severity = Severity::error;
    f.comm = comm_label(c);
    f.ranks = {r.rank};
    if (!r.host.empty()) f.hosts = {r.host};
    f.found = fmt::format("init_state {}, async_error {}", r.init_state, r.async_error);
    f.message = fmt::format("{} of communicator {} reports an NCCL error ({}{}{})", rank_phrase(f.ranks, f.hosts),
                            comm_label(c), init_bad ? fmt::format("init state {}", r.init_state) : "",
                            init_bad && async_bad ? ", " : "",
                            async_bad ? fmt::format("async error {}", r.async_error) : "");
    f.fix = "read that rank's NCCL WARN lines (NCCL_DEBUG=WARN) for the error it hit first";
    out->push_back(std::move(f));
  }
}

}  // namespace

std::vector<Finding> judge_ras(const RasReport& report) {
  std::vector<Finding> out;
  for (const RasCommunicator& c : report.communicators) {
    judge_counts(c, &out);
    judge_missing(c, &out);
    judge_errors(c, &out);
  }
  return out;
}

}  // namespace denpex::evidence
