#include "launch/diagnose_ticket.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compare/evidence_cut.h"
#include "evidence/input_source.h"
#include "evidence/line_reader.h"
#include "evidence/log_reader.h"

namespace denpex {

namespace {

using Where = std::pair<std::string, long long>;

// About two terminal lines: room for both sides of a one-line mismatch and their context.
constexpr std::size_t kDifferenceWidth = 220;

std::vector<EvidenceLine> lines_of(const std::vector<diag::Evidence>& ev) {
  std::vector<EvidenceLine> out;
  for (const auto& e : ev) out.push_back(EvidenceLine{e.file, e.line, e.text});
  return out;
}

// The evidence cut as cut_evidence does, kept as diag::Evidence (the signal of the first
// evidence at the same place is kept).
// A finding with both sides cuts around them; one without (an exception, a crash) keeps as much
// of each line as the readers keep, cut at a word boundary.
std::vector<diag::Evidence> cut(const std::vector<diag::Evidence>& ev, const std::string& found,
                                const std::string& expected) {
  const bool sides = !found.empty() && !expected.empty();
  std::vector<diag::Evidence> out;
  for (const auto& l : sides ? cut_evidence(lines_of(ev), found, expected, kDifferenceWidth)
                             : cut_evidence(lines_of(ev), "", "", evidence::kEvidenceChars)) {
    std::string signal;
    for (const auto& e : ev)
      if (e.file == l.file && e.line == l.line) {
        signal = e.signal;
        break;
      }
    out.emplace_back(l.file, l.line, l.text, signal);
  }
  return out;
}

// The evidence of both members of a pair, each place once (the first member's text), in order.
std::vector<diag::Evidence> joined(const std::vector<diag::Evidence>& a, const std::vector<diag::Evidence>& b) {
  std::vector<diag::Evidence> out;
  std::set<std::pair<Where, std::string>> seen;
  for (const auto* side : {&a, &b})
    for (const auto& e : *side) {
      // Placed evidence is known by its place, evidence without a line by its text.
      Where at = e.line > 0 ? Where{e.file, e.line} : Where{e.file, -1};
      if (seen.insert({at, e.line > 0 ? std::string() : e.text}).second) out.push_back(e);
    }
  return out;
}

}  // namespace

void restore_evidence_lines(diag::Diagnosis* d, const evidence::DecodeLimits& decode) {
  std::map<std::string, std::set<long long>> wanted;
  auto want = [&](const std::vector<diag::Evidence>& ev) {
    for (const auto& e : ev)
      if (e.text.size() >= evidence::kEvidenceChars && !e.file.empty() && e.file != "-" && e.line > 0)
        wanted[e.file].insert(e.line);
  };
  for (const auto& x : d->findings) want(x.evidence);
  want(d->blame.initiating.evidence);
  std::map<Where, std::string> got;
  for (const auto& [file, lines] : wanted) {
    evidence::OpenedInput in = evidence::open_input(file, decode);
    if (in.status != evidence::OpenedInput::Status::ok) continue;
    evidence::LineReader reader(in.source.get());
    std::string text;
    bool was_cut = false;
    const long long last = *lines.rbegin();
    while (reader.line_number() < last && reader.next(&text, &was_cut))
      if (lines.count(reader.line_number())) got[{file, reader.line_number()}] = text;
  }
  auto put = [&](std::vector<diag::Evidence>* ev) {
    for (auto& e : *ev) {
      auto it = got.find({e.file, e.line});
      // The reader's text is the line's start (a prefix such as "[rank1]: " may have been taken
      // off): the whole line replaces it only when it holds what was kept.
      if (it != got.end() && it->second.size() > e.text.size() &&
          it->second.find(e.text.substr(0, 64)) != std::string::npos)
        e.text = it->second;
    }
  };
  for (auto& x : d->findings) put(&x.evidence);
  put(&d->blame.initiating.evidence);
}

void shape_for_ticket(diag::Diagnosis* d) {
  std::vector<Finding> plain;
  for (const auto& x : d->findings) plain.push_back(x.f);
  std::vector<MergedFinding> merged = merge_mirror_images(plain);
  std::vector<diag::DxFinding> out;
  for (const auto& m : merged) {
    diag::DxFinding x;
    x.f = m.finding;
    x.verify = d->findings[m.sources.front()].verify;
    x.verify_or = d->findings[m.sources.front()].verify_or;
    x.verify_note = d->findings[m.sources.front()].verify_note;
    // Each member's evidence is cut around its own found/expected (the merged finding has no
    // expected), then the two are joined.
    for (std::size_t i : m.sources) {
      const diag::DxFinding& src = d->findings[i];
      x.evidence = joined(x.evidence, cut(src.evidence, src.f.found, src.f.expected));
      if (m.sources.size() > 1 && d->blame.found && d->blame.initiating.what == src.f.message)
        d->blame.initiating.what = m.finding.message;
    }
    out.push_back(std::move(x));
  }
  d->findings = std::move(out);
  // The blame's evidence shows a line as the findings do, once.
  std::map<Where, std::string> shown;
  for (const auto& x : d->findings)
    for (const auto& e : x.evidence)
      if (e.line > 0) shown.emplace(Where{e.file, e.line}, e.text);
  auto& ev = d->blame.initiating.evidence;
  for (auto& e : ev) {
    auto it = shown.find({e.file, e.line});
    if (it != shown.end()) e.text = it->second;
  }
  ev = joined(ev, {});
}

}  // namespace denpex
