#include "launch/judge_and_report.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/atomic_file.h"
#include "compare/report.h"
#include "launch/prometheus.h"

namespace denpex {

bool load_baseline_option(const Options& o, Baseline* out, bool* have, std::string* error) {
  *have = false;
  if (o.baseline.empty()) return true;
  BaselineLoad b = load_baseline(o.baseline);
  if (b.status != BaselineStatus::ok) {
    *error = b.error;
    return false;
  }
  *out = b.baseline;
  *have = true;
  return true;
}

namespace {

bool use_color(const Options& o, const std::string& mode, int fd) {
  if (o.color == "always") return true;
  if (o.color == "never") return false;
  // mpirun hands ranks a pseudo-terminal even when its own output goes to a file, so isatty()
  // cannot be trusted there; torchrun's rank 0 shares the agent's terminal with its log lines.
  if (mode == "mpi" || mode == "torchrun") return false;
  const char* term = std::getenv("TERM");
  return ::isatty(fd) && !std::getenv("NO_COLOR") && !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

int judge_and_report(const Options& o, const Baseline* baseline, JobResult job) {
  JudgeOptions jo;
  jo.require_gpu = o.require_gpu;
  jo.baseline = baseline;
  std::vector<Finding> findings = judge(job.groups, job.missing, jo);
  ClusterReport report =
      make_report(job.groups, job.missing, std::move(findings), job.nranks, o.strict);
  report.ranks = std::move(job.full_records);
  report.bytes_at_root = job.bytes_at_root;
  report.mode = job.mode;
  int code = report.verdict == "reject" ? 1 : 0;

  const bool json_stdout = o.json_path == "-";
  if (!o.quiet) {
    FILE* human = json_stdout ? stderr : stdout;
    std::string text = render_human(report, use_color(o, job.mode, ::fileno(human)));
    if (!text.empty() && text.back() != '\n') text += '\n';
    for (const auto& n : job.notes) text += "note: " + n + "\n";
    std::fputs(text.c_str(), human);
    std::fflush(human);
  }
  std::string error;
  // Non-UTF-8 bytes (a library path, an NCCL_* value) become U+FFFD rather than an exception
  // that would abort the probe.
  if (!o.json_path.empty() &&
      !write_file_atomically(o.json_path,
                       report_json(report).dump(2, ' ', false,
                                                nlohmann::json::error_handler_t::replace) +
                           "\n",
                       &error)) {
    std::fprintf(stderr, "denpex-probe: --json %s\n", error.c_str());
    return 2;
  }
  if (!o.write_baseline.empty()) {
    if (report.configurations.empty()) {
      std::fprintf(stderr, "denpex-probe: --write-baseline %s: no rank reported, nothing to pin\n",
                   o.write_baseline.c_str());
      return 2;
    }
    if (!write_baseline(o.write_baseline, baseline_from_group(report.configurations.front()),
                        &error)) {
      std::fprintf(stderr, "denpex-probe: --write-%s\n", error.c_str());
      return 2;
    }
  }
  if (!o.prometheus.empty() &&
      !write_file_atomically(o.prometheus, prometheus_text(report), &error)) {
    std::fprintf(stderr, "denpex-probe: --prometheus %s\n", error.c_str());
    return 2;
  }
  return code;
}

}  // namespace denpex
