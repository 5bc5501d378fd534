#include "diagnose/input_cuts.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/finding_codes.h"

namespace denpex::diag {
namespace {

using evidence::CutInput;
using evidence::InputCut;
using nlohmann::json;

// The later of two times (an unknown one loses).
void keep_later(const When& w, When* t) {
  if (w.known() && (!t->known() || When::compare(w, *t) > 0)) *t = w;
}

// How far in time a cut log was read: its lines' last stamp, or a later event read from it.
When read_to(const LogReader& r, const CutInput& c) {
  When t = c.read_to;
  for (const Failure& f : r.failures)
    if (f.evidence.file == c.cut.file) keep_later(f.when, &t);
  for (const LauncherEntry& e : r.launcher)
    if (e.evidence.file == c.cut.file) keep_later(e.when, &t);
  return t;
}

bool holds_line_of(const Party& p, const std::string& file) {
  return std::any_of(p.evidence.begin(), p.evidence.end(), [&](const Evidence& e) { return e.file == file; });
}

const char* what_to_do(const InputCut& c) {
  switch (c.why) {
    case InputCut::Why::size_limit: return "raise --max-decoded-size to read it whole";
    case InputCut::Why::ratio_limit: return "raise --max-decoded-ratio to read it whole";
    default: break;
  }
  return "copy it again from where the job wrote it";
}

}  // namespace

std::string blame_past_cut(const LogReader& r, const BlameResult& b) {
  if (!b.found) return "";
  for (const CutInput& c : r.cuts) {
    if (!c.log || holds_line_of(b.initiating, c.cut.file)) continue;
    When t = read_to(r, c);
    if (b.initiating.when.known() && t.known() && When::compare(t, b.initiating.when) >= 0) continue;
    return fmt::format("{} failed first of what was read ({}), but {} was cut at line {}{}, {}: a failure in the "
                       "part not read could have come first: {}",
                       party_subject(b.initiating), b.initiating.what, c.cut.file, c.cut.line,
                       t.known() ? " (read to " + t.text() + ")" : "",
                       b.initiating.when.known() ? "before that time" : "and no time tells which came first",
                       what_to_do(c.cut));
  }
  return "";
}

void cut_findings(const LogReader& r, const std::string& withheld, std::vector<DxFinding>* out) {
  if (r.cuts.empty()) return;
  const size_t n = r.cuts.size();
  DxFinding x;
  x.f.code = FindingCode::input_cut;
  x.f.severity = Severity::warning;
  x.f.found = fmt::format("{} input{} cut", n, n == 1 ? "" : "s");
  x.f.message = fmt::format("{} input{} ended early (damaged, or past a decoding limit): a log is judged up to where it "
                            "stopped, a recorder output is not read, and no rank is blamed for what was cut{}",
                            n, n == 1 ? "" : "s", withheld.empty() ? "" : "; " + withheld);
  x.f.fix = fmt::format("for each input named: {}", what_to_do(r.cuts.front().cut));
  for (const CutInput& c : r.cuts)
    x.evidence.push_back(Evidence{c.cut.file, static_cast<long long>(c.cut.line), c.cut.message});
  // The same inputs read again, once copied again or with the limit lifted (0 = none); "-"
  // stands for the inputs this run was given (verify_lines.h).
  std::vector<std::string> argv = {"denpex-probe", "diagnose"};
  auto cut_by = [&](InputCut::Why why) {
    return std::any_of(r.cuts.begin(), r.cuts.end(), [&](const CutInput& c) { return c.cut.why == why; });
  };
  if (cut_by(InputCut::Why::size_limit)) argv.insert(argv.end(), {"--max-decoded-size", "0"});
  if (cut_by(InputCut::Why::ratio_limit)) argv.insert(argv.end(), {"--max-decoded-ratio", "0"});
  argv.push_back("-");
  x.verify = command_or(argv, "");
  out->push_back(std::move(x));
}

json cuts_json(const LogReader& r) {
  json all = json::array();
  for (const CutInput& c : r.cuts)
    all.push_back({{"file", c.cut.file},
                   {"why", evidence::to_string(c.cut.why)},
                   {"compressed_offset", c.cut.compressed_offset},
                   {"decoded_bytes", c.cut.decoded_bytes},
                   {"line", c.cut.line},
                   {"read", c.log ? "up to the cut" : "not read"},
                   {"message", c.cut.message}});
  return all;
}

std::string cuts_text(const LogReader& r) {
  std::string out;
  for (const CutInput& c : r.cuts) out += fmt::format("cut: {}\n", c.cut.message);
  return out;
}

}  // namespace denpex::diag
