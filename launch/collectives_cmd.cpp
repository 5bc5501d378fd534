#include "launch/collectives_cmd.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "collect/bounded_line.h"
#include "collect/collective_trace.h"
#include "collect/nccl_log.h"
#include "compare/atomic_file.h"
#include "compare/calls_around.h"
#include "compare/collectives.h"
#include "compare/finding.h"
#include "compare/fold.h"

namespace denpex {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitPass = 0, kExitReject = 1, kExitCannotJudge = 2;

struct Inputs {
  std::vector<CollectiveInput> files;
  std::string error;  // one line, set when the inputs cannot be judged
};

// Expands directories and reads every file, each as a trace or a log depending on its first line.
Inputs read_inputs(const std::vector<std::string>& paths) {
  Inputs out;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file(ec)) in_dir.push_back(e.path().string());
      if (in_dir.empty()) {
        out.error = fmt::format("{}: directory holds no files", p);
        return out;
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      out.error = fmt::format("{}: no such file or directory", p);
      return out;
    }
  }
  for (const auto& f : files) {
    std::ifstream probe(f);
    std::string first;
    if (!probe) {
      out.error = fmt::format("{}: cannot open file", f);
      return out;
    }
    // Hostile-input fix (issue 6): std::getline read a 2 GB file without a newline whole into
    // memory before anything was judged. A first line this long is no trace header and no log.
    bool cut = false;
    get_bounded_line(probe, &first, &cut, kMaxInputLine, /*skip_rest=*/false);
    if (cut) {
      out.error = fmt::format("{}: line 1 is longer than {} KiB: not a trace or an NCCL/PyTorch log",
                              f, kMaxInputLine / 1024);
      return out;
    }
    bool trace = first.rfind("{\"schema\":\"denpex.trace", 0) == 0 || is_collective_trace(first);
    CollectiveInput in = trace ? read_collective_trace(f) : read_nccl_log(f);
    if (in.status != CollectiveInput::Status::ok) {
      out.error = fmt::format("{}: {}", f, in.error);
      return out;
    }
    out.files.push_back(std::move(in));
  }
  return out;
}

// Two inputs claiming the same rank of a communicator are two jobs (or one file given twice):
// judging them together would blame ranks for someone else's calls.
std::string find_duplicate(const Inputs& inputs) {
  std::map<std::pair<std::string, int>, std::string> seen;
  for (const auto& in : inputs.files)
    for (const auto& s : in.sequences) {
      auto r = seen.emplace(std::make_pair(s.comm, s.rank), in.path);
      if (!r.second)
        return fmt::format("{}: rank {} of communicator {} is also in {} (inputs from different jobs, or a file given twice?)",
                           in.path, s.rank, s.comm, r.first->second);
    }
  return {};
}

struct Summary {
  int nranks = 0;
  int nhosts = 0;
  long long unreadable = 0;
  long long unattributed = 0;
  size_t communicators = 0;
};

Summary summarise(const Inputs& inputs) {
  std::set<std::string> ranks, hosts, comms;
  Summary s;
  for (const auto& in : inputs.files) {
    for (const auto& q : in.sequences) {
      ranks.insert(q.global_rank >= 0 ? fmt::format("r{}", q.global_rank) : fmt::format("{}:{}:{}", q.host, q.pid, q.rank));
      comms.insert(q.comm);
    }
    for (const auto& w : in.watchdog)
      ranks.insert(w.global_rank >= 0 ? fmt::format("r{}", w.global_rank) : fmt::format("{}:{}", w.group, w.rank));
    hosts.insert(in.hosts.begin(), in.hosts.end());
    s.unreadable += in.unreadable;
    s.unattributed += in.unattributed_calls;
  }
  s.nranks = static_cast<int>(ranks.size());
  s.nhosts = static_cast<int>(hosts.size());
  s.communicators = comms.size();
  return s;
}

// What could not be used is reported as warnings, so that --strict refuses a partial judgement.
void input_findings(const Inputs& inputs, const Summary& sum, std::vector<Finding>* out) {
  if (sum.unreadable > 0) {
    Finding f;
    f.code = "collective-input-unreadable";
    f.severity = Severity::warning;
    std::string first;
    for (const auto& in : inputs.files)
      if (!in.unreadable_samples.empty()) {
        first = in.unreadable_samples.front();
        break;
      }
    f.message = fmt::format("{} input lines look like NCCL or PyTorch records but could not be read; first: {}",
                            sum.unreadable, first);
    f.found = fmt::format("{} unreadable lines", sum.unreadable);
    f.fix = "check the log for wrapped or truncated lines; the judgement above ignores them";
    out->push_back(std::move(f));
  }
  if (sum.unattributed > 0) {
    Finding f;
    f.code = "collective-calls-unattributed";
    f.severity = Severity::warning;
    f.message = fmt::format("{} calls are on communicators whose identity across ranks is unknown (no Init COMPLETE "
                            "line in the log, or created by a call the recorder does not intercept) and were not compared",
                            sum.unattributed);
    f.found = fmt::format("{} calls", sum.unattributed);
    f.fix = "capture the log from the start of the job (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL)";
    out->push_back(std::move(f));
  }
}

// What a v2 trace says about its process (report key inputs[].process, an extension).
json process_json(const TracedProcess& p) {
  return {{"host", p.host}, {"pid", p.pid}, {"rank", p.global_rank}, {"calls", p.calls},
          {"recorded", p.recorded}, {"overwritten", p.overwritten}, {"torn", p.torn}, {"dropped", p.dropped},
          {"in_flight", p.in_flight}, {"nccl_mapped", p.nccl_mapped}, {"end", to_string(p.end)},
          {"signal", p.signal}, {"ended_ns", p.ended_ns}};
}

json report_json(const Inputs& inputs, const Summary& sum, const std::vector<Finding>& findings, bool reject) {
  json j = {{"schema", "denpex.report.v1"},
            {"verdict", reject ? "reject" : "pass"},
            {"nranks", sum.nranks},
            {"nhosts", sum.nhosts},
            {"findings", findings},
            {"communicators", sum.communicators}};
  json files = json::array();
  for (const auto& in : inputs.files) {
    json file = {{"path", in.path}, {"format", in.format}, {"lines", in.lines}, {"used", in.used},
                 {"unreadable", in.unreadable}, {"unreadable_samples", in.unreadable_samples},
                 {"unattributed_calls", in.unattributed_calls}};
    for (const auto& p : in.processes) file["process"] = process_json(p);
    files.push_back(std::move(file));
  }
  j["inputs"] = files;
  return j;
}

std::string human_text(const Summary& sum, const std::vector<Finding>& findings, bool reject) {
  auto plural = [](size_t n, const char* word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  std::string out = fmt::format("denpex-probe collectives: {} ({}; {}, {}, {})\n", reject ? "REJECT" : "PASS",
                                plural(findings.size(), "finding"), plural(sum.nranks, "rank"),
                                plural(sum.nhosts, "host"), plural(sum.communicators, "communicator"));
  for (const auto& f : findings) {
    std::string where = f.comm.empty() ? std::string() : fmt::format("  comm {}  step {}", f.comm, f.seq);
    // Ranged and abbreviated as the gate's report names ranks; --json keeps every rank.
    out += fmt::format("\n{} {}  {}{}\n  {}\n", to_string(f.severity), f.code,
                       f.ranks.empty() ? std::string("ranks -") : rank_subject(f.ranks), where, f.message);
    if (!f.expected.empty() || !f.found.empty())
      out += fmt::format("  called: {}\n  others: {}\n", f.found, f.expected);
    out += fmt::format("  fix: {}\n", f.fix);
  }
  return out;
}

int run(const CollectivesOptions& o) {
  if (o.paths.empty()) {
    fmt::print(stderr, "denpex-probe collectives: no input path given\n");
    return kExitCannotJudge;
  }
  Inputs inputs = read_inputs(o.paths);
  if (inputs.error.empty()) inputs.error = find_duplicate(inputs);
  if (!inputs.error.empty()) {
    fmt::print(stderr, "denpex-probe collectives: {}\n", inputs.error);
    return kExitCannotJudge;
  }
  Summary sum = summarise(inputs);
  // Moved, not copied: a full recorder ring is 262,144 calls (about 30 MB) per rank.
  std::vector<CommSequence> sequences;
  std::vector<WatchdogState> watchdog;
  std::vector<TracedProcess> processes;
  for (auto& in : inputs.files) {
    std::move(in.sequences.begin(), in.sequences.end(), std::back_inserter(sequences));
    in.sequences.clear();
    watchdog.insert(watchdog.end(), in.watchdog.begin(), in.watchdog.end());
    processes.insert(processes.end(), in.processes.begin(), in.processes.end());
  }
  std::vector<Finding> process_findings = analyse_traced_processes(processes);
  if (sequences.empty() && watchdog.empty()) {
    // Nothing to compare; a trace that shows why (NCCL mapped, no call seen) says so.
    std::string why;
    for (const auto& f : process_findings) why += "; " + f.message;
    fmt::print(stderr, "denpex-probe collectives: {}: no NCCL collective calls or PyTorch watchdog records found{}\n",
               inputs.files.size() == 1 ? inputs.files.front().path : fmt::format("{} input files", inputs.files.size()),
               why);
    return kExitCannotJudge;
  }
  std::vector<Finding> findings = analyse_sequences(sequences);
  findings.insert(findings.end(), process_findings.begin(), process_findings.end());
  std::vector<Finding> wd = analyse_watchdog(watchdog);
  findings.insert(findings.end(), wd.begin(), wd.end());
  input_findings(inputs, sum, &findings);
  sort_findings(&findings);
  bool reject = rejects(findings, o.strict);

  json report = report_json(inputs, sum, findings, reject);
  attach_calls_around(sequences, &report);
  int written = emit_report(o.output, report, o.quiet ? "" : human_text(sum, findings, reject));
  if (written != 0) return written;
  return reject ? kExitReject : kExitPass;
}

}  // namespace

int run_collectives(const CollectivesOptions& options) {
  try {
    return run(options);
  } catch (const std::exception& e) {
    // Only allocation failure or a filesystem race can get here; still one line and code 2.
    fmt::print(stderr, "denpex-probe collectives: {}\n", e.what());
    return kExitCannotJudge;
  }
}

}  // namespace denpex
