#include "launch/collectives_cmd.h"

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/terminal_text.h"
#include "diagnose/collectives_report.h"
#include "evidence/classify.h"
#include "evidence/collective_log.h"
#include "evidence/collective_trace.h"
#include "evidence/recorders.h"
#include "launch/input_paths.h"

namespace denpex {

namespace {
// A message naming an input, as one line of stderr: the input's bytes shown, never obeyed.
std::string line(const std::string& s) { return terminal_text(s, LineBreaks::escape); }
}  // namespace

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitPass = 0, kExitReject = 1, kExitCannotJudge = 2;


// `trace`: classify() found a recorder trace as written (a compressed copy reads as a log).
CollectiveInput read_one(const std::string& f, bool trace, int read_threads, const evidence::DecodeLimits& decode) {
  if (trace) return read_collective_trace(f);
  return evidence::read_collective_log(f, read_threads, decode);
}

// Reads every file, each as a trace or a log, one reader per file on as many threads as there
// are cores; the results keep the order of the files. With fewer files than cores, each log's
// lines are also read and repaired on a thread beside its reader (evidence/line_feed.h). Files are told by content first: recorder
// outputs (Flight Recorder dumps, RAS JSON, Inspector records) go to *recorded, and a binary or
// unreadable file is the error, named. A compressed file damaged from its first bytes is an
// input that holds nothing (read_collective_log notes it as cut); the others are still judged.
CollectivesInputs read_inputs(const std::vector<std::string>& paths, const evidence::DecodeLimits& decode,
                              std::vector<evidence::ClassifiedInput>* recorded) {
  CollectivesInputs out;
  std::vector<std::string> skipped;
  std::vector<std::string> all = input_files(paths, DirectoryWalk::top, &out.error, &skipped);
  for (const auto& s : skipped) fmt::print(stderr, "denpex-probe collectives: skipped {}\n", line(s));
  if (!out.error.empty()) return out;
  std::vector<std::string> files;
  std::vector<char> traces;
  for (const auto& f : all) {
    evidence::ClassifiedInput kind = evidence::classify(f, decode);
    if (kind.kind == evidence::InputKind::unreadable && kind.cut.why == evidence::InputCut::Why::damaged) {
      files.push_back(f);
      traces.push_back(0);
      continue;
    }
    if (kind.kind == evidence::InputKind::unreadable) {
      out.error = kind.message;
      return out;
    }
    if (evidence::is_own_report(kind.kind))
      fmt::print(stderr, "denpex-probe collectives: skipped {}: a {} (an output of an earlier run), not an input\n",
                 line(f), evidence::to_string(kind.kind));
    else if (evidence::is_recorder(kind.kind))
      recorded->push_back(std::move(kind));
    else {
      files.push_back(f);
      traces.push_back(kind.kind == evidence::InputKind::recorder_trace && evidence::read_as_written(kind.encoding));
    }
  }
  out.files.resize(files.size());
  std::atomic<size_t> next{0};
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  int per_file = files.size() < cores ? 0 : 1;
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) out.files[i] = read_one(files[i], traces[i] != 0, per_file, decode);
  };
  size_t n = std::min(files.size(), cores);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& in : out.files)
    if (in.status != CollectiveInput::Status::ok) {
      out.error = in.error.rfind(in.path, 0) == 0 ? in.error : fmt::format("{}: {}", in.path, in.error);
      break;
    }
  return out;
}

int run(const CollectivesOptions& o) {
  if (o.paths.empty()) {
    fmt::print(stderr, "denpex-probe collectives: no input path given\n");
    return kExitCannotJudge;
  }
  std::vector<evidence::ClassifiedInput> recorded;
  CollectivesInputs inputs = read_inputs(o.paths, o.decode, &recorded);
  if (inputs.error.empty()) inputs.error = find_duplicate(inputs);
  if (!inputs.error.empty()) {
    fmt::print(stderr, "denpex-probe collectives: {}\n", line(inputs.error));
    return kExitCannotJudge;
  }
  evidence::RecorderEvidence rec = evidence::read_recorders(recorded, o.decode);
  for (const auto& p : rec.problems) fmt::print(stderr, "denpex-probe collectives: {}\n", line(p));
  for (const auto& w : rec.warnings) fmt::print(stderr, "denpex-probe collectives: {}\n", line(w));
  inputs.recorded_sequences = std::move(rec.sequences);
  inputs.recorded_cuts = std::move(rec.cuts);
  inputs.recorded_unreadable = rec.unreadable;
  for (const auto& u : rec.unreadable_samples)
    inputs.recorded_unreadable_samples.push_back(fmt::format("{}: {}", u.file, u.text));
  for (auto& f : rec.findings) inputs.recorded_findings.push_back(std::move(f.finding));
  inputs.recorded_files = recorded.size();
  CollectivesVerdict v = judge_collectives(&inputs, o.strict);
  if (!v.nothing.empty()) {
    fmt::print(stderr, "denpex-probe collectives: {}\n", line(v.nothing));
    return kExitCannotJudge;
  }
  int written = emit_report(o.output, collectives_json(inputs, v), o.quiet ? "" : collectives_text(v));
  if (written != 0) return written;
  return v.reject ? kExitReject : kExitPass;
}

}  // namespace

int run_collectives(const CollectivesOptions& options) {
  try {
    return run(options);
  } catch (const std::exception& e) {
    // Only allocation failure or a filesystem race can get here; still one line and code 2.
    fmt::print(stderr, "denpex-probe collectives: {}\n", line(e.what()));
    return kExitCannotJudge;
  }
}

}  // namespace denpex
