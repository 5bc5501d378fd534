#include "evidence/recorders.h"

#include <fmt/format.h>

#include "evidence/fr_analyse.h"
#include "evidence/inspector.h"
#include "evidence/input_source.h"
#include "evidence/ras_json.h"

namespace denpex::evidence {
namespace {

void add_unreadable(long long n, const std::vector<std::string>& samples, const std::string& path,
                    RecorderEvidence* out) {
  out->unreadable += n;
  for (const std::string& u : samples)
    if (out->unreadable_samples.size() < kFrUnreadableSamples) out->unreadable_samples.push_back(FrEvidence{path, -1, u});
  if (n > 0)
    out->warnings.push_back(fmt::format("{}: {} record{} not read: a number out of range (first: {})", path, n,
                                        n == 1 ? "" : "s", samples.front()));
}

void read_ras(const std::string& path, const DecodeLimits& decode, RecorderEvidence* out) {
  OpenedInput in = open_input(path, decode);
  if (in.status != OpenedInput::Status::ok) {
    out->problems.push_back(in.message);
    if (in.cut.why != InputCut::Why::none) out->cuts.push_back(in.cut);
    return;
  }
  RasReport r = read_ras_json(in.source.get(), path);
  if (r.status != RasReport::Status::ok) {
    out->problems.push_back(r.message);
    if (r.cut.why != InputCut::Why::none) out->cuts.push_back(r.cut);
    return;
  }
  ++out->ras_reports;
  add_unreadable(r.unreadable, r.unreadable_samples, path, out);
  for (Finding& f : judge_ras(r)) {
    FrFinding ff;
    ff.evidence.push_back(FrEvidence{path, -1, fmt::format("NCCL RAS {} at {}: {}", r.nccl_version, r.timestamp, f.message)});
    ff.finding = std::move(f);
    out->findings.push_back(std::move(ff));
  }
}

void read_inspector_file(const std::string& path, const DecodeLimits& decode, RecorderEvidence* out) {
  OpenedInput in = open_input(path, decode);
  if (in.status != OpenedInput::Status::ok) {
    out->problems.push_back(in.message);
    if (in.cut.why != InputCut::Why::none) out->cuts.push_back(in.cut);
    return;
  }
  InspectorInput r = read_inspector(in.source.get(), path);
  if (InputCut c = in.source->cut(); c.why != InputCut::Why::none) {
    // Call sequences read in part would show ranks behind where they were.
    out->problems.push_back(c.message + "; the Inspector records are not read: a part of them would show ranks behind");
    out->cuts.push_back(std::move(c));
    return;
  }
  if (r.status != InspectorInput::Status::ok) {
    out->problems.push_back(r.message);
    return;
  }
  if (!r.message.empty()) out->warnings.push_back(r.message);
  ++out->inspector_files;
  out->sequences.insert(out->sequences.end(), r.sequences.begin(), r.sequences.end());
}

}  // namespace

RecorderEvidence read_recorders(const std::vector<ClassifiedInput>& inputs, const DecodeLimits& decode) {
  RecorderEvidence out;
  std::vector<std::string> dumps;
  for (const ClassifiedInput& c : inputs) {
    if (c.kind == InputKind::fr_dump) dumps.push_back(c.path);
    if (c.kind == InputKind::ras_json) read_ras(c.path, decode, &out);
    if (c.kind == InputKind::inspector) read_inspector_file(c.path, decode, &out);
  }
  if (!dumps.empty()) {
    FrAnalysis a = analyse_fr_dumps(dumps, PickleLimits{}, 2, decode);
    out.fr_dumps = a.dumps;
    out.bytes = a.bytes;
    out.problems.insert(out.problems.end(), a.problems.begin(), a.problems.end());
    out.warnings.insert(out.warnings.end(), a.warnings.begin(), a.warnings.end());
    out.cuts.insert(out.cuts.end(), a.cuts.begin(), a.cuts.end());
    out.unreadable += a.unreadable;
    for (const FrEvidence& u : a.unreadable_samples)
      if (out.unreadable_samples.size() < kFrUnreadableSamples) out.unreadable_samples.push_back(u);
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
