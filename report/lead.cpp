#include "report/lead.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compare/fold.h"

namespace denpex {

using nlohmann::json;

namespace {

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

long long num(const json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

const json& arr(const json& j, const char* key) {
  static const json empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::vector<int> ints(const json& a) {
  std::vector<int> out;
  for (const auto& v : a)
    if (v.is_number_integer()) out.push_back(v.get<int>());
  return out;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& v : a)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string plural(long long n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string upper_verdict(const std::string& v) {
  if (v == "pass") return "PASS";
  if (v == "reject") return "REJECT";
  if (v == "inconclusive") return "INCONCLUSIVE";
  return v.empty() ? "UNKNOWN" : v;
}

long long count_severity(const json& report, const char* key, const char* severity) {
  if (report.is_object() && report.contains(key) && report[key].is_number_integer()) return report[key].get<long long>();
  const json& findings = arr(report, "findings");
  return std::count_if(findings.begin(), findings.end(), [&](const json& f) { return str(f, "severity") == severity; });
}

std::string verdict_line(const json& report, ReportKind kind) {
  std::string v = upper_verdict(str(report, "verdict"));
  long long errors = count_severity(report, "errors", "error");
  long long warnings = count_severity(report, "warnings", "warning");
  long long nranks = num(report, "nranks"), nhosts = num(report, "nhosts");
  switch (kind) {
    case ReportKind::diagnose:
      return fmt::format("denpex-probe diagnose: {} ({}, {}; {}, {})", v, plural(errors, "error", "errors"),
                         plural(warnings, "warning", "warnings"), plural(nranks, "rank", "ranks"),
                         plural(nhosts, "host", "hosts"));
    case ReportKind::collectives:
      return fmt::format("denpex-probe collectives: {} ({}; {}, {}, {})", v,
                         plural(static_cast<long long>(arr(report, "findings").size()), "finding", "findings"),
                         plural(nranks, "rank", "ranks"), plural(nhosts, "host", "hosts"),
                         plural(num(report, "communicators"), "communicator", "communicators"));
    case ReportKind::gate: break;
  }
  return fmt::format("denpex-probe: {}  {}, {}  ({} on {})", v, plural(errors, "error", "errors"),
                     plural(warnings, "warning", "warnings"), plural(nranks, "rank", "ranks"),
                     plural(nhosts, "host", "hosts"));
}

std::string party_line(const json& p) {
  std::string when = str(p, "when");
  return fmt::format("{}{}: {}", party_subject_of(p), when.empty() ? "" : " at " + when, str(p, "what"));
}

void diagnosis_lines(const json& d, Lead* out) {
  const json none;
  const json& init = d.is_object() && d.contains("initiating") ? d["initiating"] : none;
  const json& alike = d.is_object() && d.contains("met_alike") ? d["met_alike"] : none;
  std::vector<std::string> sides;
  size_t named = 0;
  for (const auto& p : arr(d, "disagreeing")) sides.push_back(party_subject_of(p)), named += arr(p, "ranks").size();
  out->lines.push_back(init.is_object()    ? "Started by: " + party_line(init)
                       : alike.is_object() ? "Started by: no single rank: " + party_line(alike)
                       : !sides.empty()    ? fmt::format("Started by: not decided from this input: {} {}, and nothing shows "
                                                         "which side went wrong first: add the other ranks' logs "
                                                         "(the side no other rank shares is the odd one)",
                                                         fmt::join(sides, "; "),
                                                         named == 1 ? "differs from a rank the input does not name" : "disagree")
                                           : "Started by: not decided from this input");
  std::vector<std::string> parts;
  for (const auto& c : arr(d, "collateral"))
    parts.push_back(fmt::format("{} ({})", party_subject_of(c), str(c, "what")));
  if (!parts.empty()) out->lines.push_back(fmt::format("Followed:   {}", fmt::join(parts, "; ")));
  else if (init.is_object()) out->lines.push_back("Followed:   no other rank's failure is in the input");
  const json& claim = d.is_object() && d.contains("launcher_claim") ? d["launcher_claim"] : none;
  if (claim.is_object()) {
    bool judged = claim.contains("correct") && claim["correct"].is_boolean();
    bool wrong = judged && !claim["correct"].get<bool>();
    out->lines.push_back(fmt::format("Launcher:   {}{}", str(claim, "what"),
                                     wrong     ? " -- WRONG: " + str(claim, "note")
                                     : judged  ? " (agrees)"
                                               : " (not judged: who started it is not decided)"));
  }
  std::string why = str(d, "inconclusive");
  if (!why.empty()) out->lines.push_back("could not decide: " + why);
}

void finding_lines(const json& report, Lead* out) {
  const json& findings = arr(report, "findings");
  std::size_t shown = 0;
  for (const auto& f : findings) {
    if (shown == kMaxLeadFindings) break;
    out->lines.push_back(fmt::format("{} {}: {}", str(f, "severity"), str(f, "code"), str(f, "message")));
    ++shown;
  }
  if (findings.size() > shown) out->lines.push_back(fmt::format("... and {} more findings", findings.size() - shown));
}

}  // namespace

ReportKind report_kind(const json& report) {
  if (!report.is_object()) return ReportKind::gate;
  if (report.contains("diagnosis") && report["diagnosis"].is_object()) return ReportKind::diagnose;
  if (report.contains("communicators")) return ReportKind::collectives;
  return ReportKind::gate;
}

std::string party_subject_of(const json& p) {
  std::vector<int> ranks = ints(arr(p, "ranks"));
  std::vector<std::string> hosts = strings(arr(p, "hosts"));
  std::vector<std::string> procs = strings(arr(p, "processes"));
  std::vector<std::string> parts;
  if (!ranks.empty()) parts.push_back(rank_phrase(ranks, hosts));
  if (!procs.empty()) {
    std::string list = fmt::format("{}", fmt::join(procs.begin(), procs.begin() + std::min<std::size_t>(procs.size(), 4), ", "));
    if (procs.size() > 4) list += fmt::format(" and {} more", procs.size() - 4);
    parts.push_back(fmt::format("{} {}", procs.size() == 1 ? "process" : "processes", list));
  }
  if (parts.empty()) return hosts.empty() ? "an unknown rank" : fmt::format("a rank on {}", fold_hosts(hosts));
  return fmt::format("{}", fmt::join(parts, " and "));
}

Lead lead_of(const json& report) {
  Lead out;
  ReportKind kind = report_kind(report);
  out.verdict = str(report, "verdict");
  out.verdict_line = verdict_line(report, kind);
  if (kind == ReportKind::diagnose) diagnosis_lines(report["diagnosis"], &out);
  else finding_lines(report, &out);
  return out;
}

std::string brief_text(const json& report) {
  Lead lead = lead_of(report);
  std::string out = lead.verdict_line + "\n";
  for (const auto& l : lead.lines) out += l + "\n";
  return out;
}

}  // namespace denpex
