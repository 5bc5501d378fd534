#include "compare/report.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compare/config_diff.h"
#include "compare/facts.h"
#include "compare/fold.h"
#include "compare/text_paint.h"

namespace denpex {

using nlohmann::json;

ClusterReport make_report(std::vector<ConfigGroup> configurations,
                          std::vector<MissingRank> missing, std::vector<Finding> findings,
                          int nranks, bool strict) {
  ClusterReport report;
  normalize_groups(&configurations);
  sort_findings(&findings);
  std::set<std::string> hosts;
  for (const auto& g : configurations)
    for (const auto& h : g.hosts)
      if (!h.empty()) hosts.insert(h);
  for (const auto& m : missing)
    if (!m.host.empty()) hosts.insert(m.host);
  report.nranks = nranks;
  report.nhosts = static_cast<int>(hosts.size());
  report.verdict = rejects(findings, strict) ? "reject" : "pass";
  report.findings = std::move(findings);
  report.configurations = std::move(configurations);
  return report;
}

namespace {

std::size_t count(const std::vector<Finding>& findings, Severity s) {
  return static_cast<std::size_t>(std::count_if(
      findings.begin(), findings.end(), [s](const Finding& f) { return f.severity == s; }));
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// One line describing a configuration: what decides whether ranks can talk to each other.
std::string configuration_line(const ConfigGroup& g) {
  const RankRecord& r = g.record;
  std::string nccl;
  if (nccl_found(r.nccl)) {
    nccl = fmt::format("NCCL {}{} {}", nccl_version_of(r.nccl),
                       r.nccl.cuda_build.empty() ? "" : "+cuda" + r.nccl.cuda_build, r.nccl.path);
  } else {
    nccl = fmt::format("NCCL {}", to_string(r.nccl.status));
  }
  // An image's CPU is unknown: a glibc-hwcaps copy of NCCL is what some CPUs get.
  if (!r.nccl.depends_on_cpu.empty())
    nccl += fmt::format(" (depends on the CPU: {})", fmt::join(r.nccl.depends_on_cpu, "; "));
  // A PyTorch that is there but unreadable is not "no torch".
  std::string torch = r.torch.status == TorchStatus::ok      ? fmt::format("torch {}", r.torch.version)
                      : r.torch.status == TorchStatus::error ? std::string("torch unreadable")
                                                             : std::string("no torch");
  // A CPU build loads no NCCL: the NCCL shown is the system's, not PyTorch's.
  if (r.torch.status == TorchStatus::ok && r.torch.build == "cpu") {
    torch = fmt::format("PyTorch {}, CPU build: uses no NCCL", r.torch.version);
    if (nccl_found(r.nccl)) nccl += " (not used by PyTorch)";
  }
  std::string driver;
  if (r.cuda_driver.status == DriverStatus::ok) {
    driver = fmt::format("driver {}{}", r.cuda_driver.library_version,
                         r.cuda_driver.cuda_version.empty()
                             ? ""
                             : " (CUDA " + r.cuda_driver.cuda_version + ")");
  } else {
    driver = fmt::format("driver {}", to_string(r.cuda_driver.status));
  }
  // Two lines: who (bounded by rank_phrase), then what; a long rank list never hides the versions.
  // An image is read on another machine: name the architecture it was judged for.
  std::string arch;
  if (r.mode == "static")
    arch = r.arch.empty() ? "architecture unknown (" + r.arch_source + "); " : r.arch + " image; ";
  // An image's settings that name devices are said here: they can only be checked on the nodes.
  std::string baked;
  if (r.mode == "static" && !r.devices.settings.empty()) {
    std::vector<std::string> set;
    for (const auto& c : r.devices.settings) set.push_back(c.variable + "=" + c.value);
    baked = fmt::format("; sets {} (checked against each node's devices when the gate runs there)",
                        fmt::join(set, ", "));
  }
  return fmt::format("{}, {}: {}\n      {}{}; {}; {}{}",
                     plural(g.ranks.size(), "rank", "ranks"), plural(g.hosts.size(), "host", "hosts"),
                     rank_phrase(g.ranks, g.hosts), arch, nccl, torch, driver, baked);
}

// "unlike [2]: NCCL_PROTO unset": what configuration i has that another lacks, so that two
// configurations whose summary lines read the same are still told apart. The largest is set
// against the second, every other against the largest. Bounded to one line.
std::string apart_line(const std::vector<ConfigGroup>& configurations, std::size_t i) {
  std::size_t other = i == 0 ? 1 : 0;
  std::vector<std::string> phrases =
      what_sets_apart(configurations[i].record, configurations[other].record);
  if (phrases.empty()) return "";
  std::string text = fmt::format("{}", fmt::join(phrases, "; "));
  constexpr std::size_t kMax = 200;
  if (text.size() > kMax) {
    std::size_t cut = text.rfind("; ", kMax);
    text = text.substr(0, cut == std::string::npos ? kMax : cut) + "; ... (see --json)";
  }
  return fmt::format("\n      unlike [{}]: {}", other + 1, text);
}

}  // namespace

json report_json(const ClusterReport& report) {
  json j;
  j["schema"] = "denpex.report.v1";
  j["verdict"] = report.verdict;
  j["nranks"] = report.nranks;
  j["nhosts"] = report.nhosts;
  j["errors"] = count(report.findings, Severity::error);
  j["warnings"] = count(report.findings, Severity::warning);
  j["findings"] = report.findings;
  json configurations = json::array();
  for (const auto& g : report.configurations) {
    configurations.push_back({{"ranks", g.ranks},
                              {"hosts", g.hosts},
                              {"digest", fmt::format("{:016x}", g.digest)},
                              {"record", g.record}});
  }
  j["configurations"] = std::move(configurations);
  if (!report.ranks.empty()) j["ranks"] = report.ranks;
  if (report.bytes_at_root >= 0) j["bytes_at_root"] = report.bytes_at_root;
  if (!report.mode.empty()) j["mode"] = report.mode;
  return j;
}

std::string render_human(const ClusterReport& report, bool color) {
  std::size_t errors = count(report.findings, Severity::error);
  std::size_t warnings = count(report.findings, Severity::warning);
  bool pass = report.verdict == "pass";
  std::string out;
  out += fmt::format("denpex-probe: {}  {}, {}  ({} on {})\n",
                     pass ? "PASS" : "REJECT",
                     plural(errors, "error", "errors"), plural(warnings, "warning", "warnings"),
                     plural(static_cast<std::size_t>(report.nranks), "rank", "ranks"),
                     plural(static_cast<std::size_t>(report.nhosts), "host", "hosts"));

  std::size_t shown = std::min(report.findings.size(), kMaxFindingsShown);
  for (std::size_t i = 0; i < shown; ++i) {
    const Finding& f = report.findings[i];
    bool error = f.severity == Severity::error;
    out += fmt::format("\n{} {}\n", error ? "error  " : "warning", code_name(f.code));
    out += fmt::format("  {}\n", f.message);
    if (!f.expected.empty() || !f.found.empty()) {
      out += fmt::format("  expected: {}   found: {}\n", f.expected.empty() ? "-" : f.expected,
                         f.found.empty() ? "-" : f.found);
    }
    if (!f.fix.empty()) out += fmt::format("  fix: {}\n", f.fix);
    if (!f.verify.text.empty()) out += fmt::format("  verify: {}\n", f.verify.text);
  }
  if (report.findings.size() > shown) {
    out += fmt::format("\n... and {} more (see --json)\n", report.findings.size() - shown);
  }

  if (!report.configurations.empty()) {
    out += fmt::format("\n{}\n", plural(report.configurations.size(), "configuration:", "configurations:"));
    std::size_t nconf = std::min(report.configurations.size(), kMaxConfigurationsShown);
    for (std::size_t i = 0; i < nconf; ++i) {
      out += fmt::format("  [{}] {}{}\n", i + 1, configuration_line(report.configurations[i]),
                         report.configurations.size() > 1 ? apart_line(report.configurations, i) : "");
    }
    if (report.configurations.size() > nconf) {
      out += fmt::format("  ... and {} more (see --json)\n", report.configurations.size() - nconf);
    }
  }
  return color ? paint_report(out) : out;
}

}  // namespace denpex
