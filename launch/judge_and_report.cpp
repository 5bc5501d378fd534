#include "compare/terminal_text.h"
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
#include "launch/report_output.h"
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

  ReportOutput out = report_output_of(o);
  // mpirun hands ranks a pseudo-terminal even when its own output goes to a file, and torchrun's
  // rank 0 shares the agent's terminal with its log lines: isatty() cannot be trusted there.
  out.tty_color = job.mode != "mpi" && job.mode != "torchrun";
  std::string text = o.quiet ? "" : render_human(report, false);
  if (!text.empty() && text.back() != '\n') text += '\n';
  for (const auto& n : job.notes) text += "note: " + n + "\n";
  // The notes belong to the text report: --brief keeps to the verdict and lead lines.
  if (int written = emit_report(out, report_json(report), text); written != 0) return written;
  std::string error;
  if (!o.write_baseline.empty()) {
    if (report.configurations.empty()) {
      std::fprintf(stderr, "denpex-probe: --write-baseline %s: no rank reported, nothing to pin\n",
                   terminal_text(o.write_baseline).c_str());
      return 2;
    }
    if (!write_baseline(o.write_baseline, baseline_from_group(report.configurations.front()),
                        &error)) {
      std::fprintf(stderr, "denpex-probe: --write-%s\n", terminal_text(error).c_str());
      return 2;
    }
  }
  if (!o.prometheus.empty() &&
      !write_file_atomically(o.prometheus, prometheus_text(report), &error)) {
    std::fprintf(stderr, "denpex-probe: --prometheus %s\n", terminal_text(error).c_str());
    return 2;
  }
  return code;
}

}  // namespace denpex
