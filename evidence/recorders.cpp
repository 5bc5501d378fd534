#include "evidence/recorders.h"

#include <fmt/format.h>

#include "evidence/fr_analyse.h"
#include "evidence/inspector.h"
#include "evidence/input_source.h"
#include "evidence/ras_json.h"

namespace denpex::evidence {
namespace {

// The whole of a small JSON input (RAS output is a few MB at most for 100,000 ranks).
bool read_small(const std::string& path, size_t cap, std::string* text, std::string* problem) {
  OpenedInput in = open_input(path);
  if (in.status != OpenedInput::Status::ok) {
    *problem = in.message;
    return false;
  }
  std::string buf(1 << 16, '\0'), error;
  for (;;) {
    long n = in.source->read(&buf[0], buf.size(), &error);
    if (n < 0) {
      *problem = error;
      return false;
    }
    if (n == 0) return true;
    if (text->size() + static_cast<size_t>(n) > cap) {
      *problem = fmt::format("{}: more than {} MiB: larger than NCCL RAS output is", path, cap >> 20);
      return false;
    }
    text->append(buf.data(), static_cast<size_t>(n));
  }
}

void read_ras(const std::string& path, RecorderEvidence* out) {
  std::string text, problem;
  if (!read_small(path, size_t{256} << 20, &text, &problem)) {
    out->problems.push_back(problem);
    return;
  }
  RasReport r = read_ras_json(text, path);
  if (r.status != RasReport::Status::ok) {
    out->problems.push_back(r.message);
    return;
  }
  ++out->ras_reports;
  for (Finding& f : judge_ras(r)) {
    FrFinding ff;
    ff.evidence.push_back(FrEvidence{path, -1, fmt::format("NCCL RAS {} at {}: {}", r.nccl_version, r.timestamp, f.message)});
    ff.finding = std::move(f);
    out->findings.push_back(std::move(ff));
  }
}

void read_inspector_file(const std::string& path, RecorderEvidence* out) {
  OpenedInput in = open_input(path);
  if (in.status != OpenedInput::Status::ok) {
    out->problems.push_back(in.message);
    return;
  }
  InspectorInput r = read_inspector(in.source.get(), path);
  if (r.status != InspectorInput::Status::ok) {
    out->problems.push_back(r.message);
    return;
  }
  if (!r.message.empty()) out->warnings.push_back(r.message);
  ++out->inspector_files;
  out->sequences.insert(out->sequences.end(), r.sequences.begin(), r.sequences.end());
}

}  // namespace

RecorderEvidence read_recorders(const std::vector<ClassifiedInput>& inputs) {
  RecorderEvidence out;
  std::vector<std::string> dumps;
  for (const ClassifiedInput& c : inputs) {
    if (c.kind == InputKind::fr_dump) dumps.push_back(c.path);
    if (c.kind == InputKind::ras_json) read_ras(c.path, &out);
    if (c.kind == InputKind::inspector) read_inspector_file(c.path, &out);
  }
  if (!dumps.empty()) {
    FrAnalysis a = analyse_fr_dumps(dumps);
    out.fr_dumps = a.dumps;
    out.bytes = a.bytes;
    out.problems.insert(out.problems.end(), a.problems.begin(), a.problems.end());
    out.warnings.insert(out.warnings.end(), a.warnings.begin(), a.warnings.end());
    out.positions = std::move(a.judgement.positions);
    for (FrFinding& f : a.judgement.findings) out.findings.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> describe_positions(const std::vector<FrRankPosition>& positions, size_t max_lines) {
  std::vector<std::string> out;
  for (const FrRankPosition& p : positions) {
    if (out.size() == max_lines) {
      out.push_back(fmt::format("... {} more", positions.size() - max_lines));
      break;
    }
    out.push_back(fmt::format("rank {} {} collective #{} ({}) of process group {}{}{}", p.rank,
                              p.in_flight ? "is in flight in" : "last recorded", p.seq, p.op, p.group,
                              p.stack.empty() ? "" : ", at ", p.stack));
  }
  return out;
}

}  // namespace denpex::evidence
