#include "launch/prometheus.h"

#include <ctime>
#include <map>

#include <fmt/format.h>

namespace denpex {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_text(const ClusterReport& report) {
  std::string t;
  t += "# HELP denpex_verdict 1 when the last denpex-probe run rejected, 0 when it passed.\n";
  t += "# TYPE denpex_verdict gauge\n";
  t += fmt::format("denpex_verdict{{mode=\"{}\"}} {}\n", esc(report.mode),
                   report.verdict == "reject" ? 1 : 0);
  t += "# HELP denpex_last_run_timestamp_seconds When denpex-probe last ran.\n";
  t += "# TYPE denpex_last_run_timestamp_seconds gauge\n";
  t += fmt::format("denpex_last_run_timestamp_seconds {}\n", static_cast<long long>(std::time(nullptr)));
  t += "# HELP denpex_findings Findings of the last run by code and severity.\n";
  t += "# TYPE denpex_findings gauge\n";
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const auto& f : report.findings) counts[{code_name(f.code), to_string(f.severity)}]++;
  for (const auto& [k, n] : counts)
    t += fmt::format("denpex_findings{{code=\"{}\",severity=\"{}\"}} {}\n", esc(k.first),
                     esc(k.second), n);
  t += "# HELP denpex_configuration_info Versions found, one series per configuration.\n";
  t += "# TYPE denpex_configuration_info gauge\n";
  for (const auto& g : report.configurations) {
    const RankRecord& r = g.record;
    t += fmt::format(
        "denpex_configuration_info{{nccl_version=\"{}\",nccl_path=\"{}\",nccl_status=\"{}\","
        "torch_version=\"{}\",driver_version=\"{}\",cuda_driver_status=\"{}\"}} {}\n",
        esc(r.nccl.version), esc(r.nccl.path), to_string(r.nccl.status), esc(r.torch.version),
        esc(r.cuda_driver.library_version), to_string(r.cuda_driver.status), g.ranks.size());
  }
  return t;
}

}  // namespace denpex
