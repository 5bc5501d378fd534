#include "diagnose/collectives_report.h"

#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/calls_around.h"
#include "compare/collectives.h"
#include "compare/finding_codes.h"
#include "compare/fold.h"

namespace denpex {

namespace {

using nlohmann::json;

// Two inputs claiming the same rank of a communicator are two jobs (or one file given twice):
// judging them together would blame ranks for someone else's calls.
std::string find_duplicate_impl(const CollectivesInputs& inputs) {
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


CollectivesSummary summarise(const CollectivesInputs& inputs) {
  std::set<std::string> ranks, hosts, comms;
  CollectivesSummary s;
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
  s.unreadable += inputs.recorded_unreadable;
  s.nranks = static_cast<int>(ranks.size());
  s.nhosts = static_cast<int>(hosts.size());
  s.communicators = comms.size();
  return s;
}

// What could not be used is reported as warnings, so that --strict refuses a partial judgement.
void input_findings(const CollectivesInputs& inputs, const CollectivesSummary& sum, std::vector<Finding>* out) {
  if (sum.unreadable > 0) {
    Finding f;
    f.code = FindingCode::collective_input_unreadable;
    f.severity = Severity::warning;
    std::string first;
    for (const auto& in : inputs.files)
      if (!in.unreadable_samples.empty()) {
        first = in.unreadable_samples.front();
        break;
      }
    if (first.empty() && !inputs.recorded_unreadable_samples.empty()) first = inputs.recorded_unreadable_samples.front();
    f.message = fmt::format("{} input lines look like NCCL or PyTorch records but could not be read; first: {}",
                            sum.unreadable, first);
    f.found = fmt::format("{} unreadable lines", sum.unreadable);
    f.fix = "check the log for wrapped or truncated lines; the judgement above ignores them";
    out->push_back(std::move(f));
  }
  if (sum.unattributed > 0) {
    Finding f;
    f.code = FindingCode::collective_calls_unattributed;
    f.severity = Severity::warning;
    f.message = fmt::format("{} calls are on communicators whose identity across ranks is unknown (no Init COMPLETE "
                            "line in the log, or created by a call the recorder does not intercept) and were not compared",
                            sum.unattributed);
    f.found = fmt::format("{} calls", sum.unattributed);
    f.fix = "capture the log from the start of the job (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL)";
    out->push_back(std::move(f));
  }
}

// Every input that ended early: the logs' (judged up to the cut) and the recorders' (not read).
std::vector<const evidence::InputCut*> cuts_of(const CollectivesInputs& inputs) {
  std::vector<const evidence::InputCut*> out;
  for (const auto& in : inputs.files)
    if (in.cut.why != evidence::InputCut::Why::none) out.push_back(&in.cut);
  for (const auto& c : inputs.recorded_cuts) out.push_back(&c);
  return out;
}

// A warning naming what was cut, so that --strict refuses a judgement made without it.
void cut_finding(const CollectivesInputs& inputs, std::vector<Finding>* out) {
  std::vector<const evidence::InputCut*> cuts = cuts_of(inputs);
  if (cuts.empty()) return;
  Finding f;
  f.code = FindingCode::input_cut;
  f.severity = Severity::warning;
  f.found = fmt::format("{} input{} cut", cuts.size(), cuts.size() == 1 ? "" : "s");
  f.message = fmt::format("{} input{} ended early and {} judged only up to where {} stopped (no rank is blamed for "
                          "what was cut); first: {}",
                          cuts.size(), cuts.size() == 1 ? "" : "s", cuts.size() == 1 ? "was" : "were",
                          cuts.size() == 1 ? "it" : "they", cuts.front()->message);
  f.fix = "copy the damaged files again from where the job wrote them, or raise --max-decoded-size / "
          "--max-decoded-ratio for a log larger or more compressible than the limits";
  out->push_back(std::move(f));
}

json cut_json(const evidence::InputCut& c) {
  return {{"file", c.file}, {"why", evidence::to_string(c.why)}, {"compressed_offset", c.compressed_offset},
          {"decoded_bytes", c.decoded_bytes}, {"line", c.line}, {"message", c.message}};
}

// What a v2 trace says about its process (report key inputs[].process, an extension).
json process_json(const TracedProcess& p) {
  return {{"host", p.host}, {"pid", p.pid}, {"rank", p.global_rank}, {"calls", p.calls},
          {"recorded", p.recorded}, {"overwritten", p.overwritten}, {"torn", p.torn}, {"dropped", p.dropped},
          {"in_flight", p.in_flight}, {"nccl_mapped", p.nccl_mapped}, {"end", to_string(p.end)},
          {"signal", p.signal}, {"ended_ns", p.ended_ns}};
}

json report_json(const CollectivesInputs& inputs, const CollectivesSummary& sum, const std::vector<Finding>& findings, bool reject) {
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
    if (in.cut.why != evidence::InputCut::Why::none) file["cut"] = cut_json(in.cut);
    files.push_back(std::move(file));
  }
  j["inputs"] = files;
  std::vector<const evidence::InputCut*> cuts = cuts_of(inputs);
  if (!cuts.empty()) {
    json all = json::array();
    for (const auto* c : cuts) all.push_back(cut_json(*c));
    j["inputs_cut"] = all;
  }
  return j;
}

std::string human_text(const CollectivesSummary& sum, const std::vector<Finding>& findings, bool reject) {
  auto plural = [](size_t n, const char* word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  std::string out = fmt::format("denpex-probe collectives: {} ({}; {}, {}, {})\n", reject ? "REJECT" : "PASS",
                                plural(findings.size(), "finding"), plural(sum.nranks, "rank"),
                                plural(sum.nhosts, "host"), plural(sum.communicators, "communicator"));
  for (const auto& f : findings) {
    std::string where = f.comm.empty() ? std::string() : fmt::format("  comm {}  step {}", f.comm, f.seq);
    // Ranged and abbreviated as the gate's report names ranks; --json keeps every rank.
    out += fmt::format("\n{} {}  {}{}\n  {}\n", to_string(f.severity), code_name(f.code),
                       ranks_subject(f), where, f.message);
    if (!f.expected.empty() || !f.found.empty())
      out += fmt::format("  called: {}\n  others: {}\n", f.found, f.expected);
    out += fmt::format("  fix: {}\n", f.fix);
  }
  return out;
}


}  // namespace

std::string find_duplicate(const CollectivesInputs& inputs) { return find_duplicate_impl(inputs); }

CollectivesVerdict judge_collectives(CollectivesInputs* inputs, bool strict) {
  CollectivesVerdict v;
  v.summary = summarise(*inputs);
  // Moved, not copied: a full recorder ring is 262,144 calls (about 30 MB) per rank.
  std::vector<CommSequence>& sequences = v.sequences;
  std::vector<WatchdogState> watchdog;
  std::vector<TracedProcess> processes;
  for (auto& in : inputs->files) {
    std::move(in.sequences.begin(), in.sequences.end(), std::back_inserter(sequences));
    in.sequences.clear();
    watchdog.insert(watchdog.end(), in.watchdog.begin(), in.watchdog.end());
    processes.insert(processes.end(), in.processes.begin(), in.processes.end());
  }
  std::move(inputs->recorded_sequences.begin(), inputs->recorded_sequences.end(), std::back_inserter(sequences));
  inputs->recorded_sequences.clear();
  std::vector<Finding> process_findings = analyse_traced_processes(processes);
  bool recorded = !inputs->recorded_findings.empty();
  for (auto& f : inputs->recorded_findings) process_findings.push_back(std::move(f));
  inputs->recorded_findings.clear();
  if (sequences.empty() && watchdog.empty() && !recorded) {
    // Nothing to compare; a trace that shows why (NCCL mapped, no call seen) says so.
    std::string why;
    for (const auto& f : process_findings) why += "; " + f.message;
    // An input cut before anything was read is why, when it is: said in the one line.
    std::vector<const evidence::InputCut*> cuts = cuts_of(*inputs);
    if (!cuts.empty()) why += "; " + cuts.front()->message;
    v.nothing = fmt::format("{}: no NCCL collective calls or PyTorch watchdog records found{}",
                            inputs->files.size() == 1 && inputs->recorded_files == 0
                                ? inputs->files.front().path
                                : fmt::format("{} input files", inputs->files.size() + inputs->recorded_files),
                            why);
    return v;
  }
  v.findings = analyse_sequences(sequences);
  v.findings.insert(v.findings.end(), process_findings.begin(), process_findings.end());
  std::vector<Finding> wd = analyse_watchdog(watchdog);
  v.findings.insert(v.findings.end(), wd.begin(), wd.end());
  input_findings(*inputs, v.summary, &v.findings);
  cut_finding(*inputs, &v.findings);
  sort_findings(&v.findings);
  v.reject = rejects(v.findings, strict);
  return v;
}

json collectives_json(const CollectivesInputs& inputs, const CollectivesVerdict& v) {
  json report = report_json(inputs, v.summary, v.findings, v.reject);
  attach_calls_around(v.sequences, &report);
  return report;
}

std::string collectives_text(const CollectivesVerdict& v) { return human_text(v.summary, v.findings, v.reject); }

}  // namespace denpex
