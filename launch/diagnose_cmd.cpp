#include "launch/diagnose_cmd.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collect/saved_reports.h"
#include "compare/terminal_text.h"
#include "diagnose/diagnosis.h"
#include "diagnose/verify_lines.h"
#include "evidence/classify.h"
#include "evidence/collective_trace.h"
#include "evidence/input_source.h"
#include "evidence/line_reader.h"
#include "evidence/log_reader.h"
#include "evidence/recorders.h"
#include "launch/diagnose_ticket.h"
#include "launch/input_paths.h"
#include "report/redact.h"

namespace denpex {

namespace {
// A message naming an input, as one line of stderr: the input's bytes shown, never obeyed.
std::string line(const std::string& s) { return terminal_text(s, LineBreaks::escape); }
}  // namespace

namespace {

namespace fs = std::filesystem;
constexpr int kExitCannotJudge = 2;

// The one line that ends a run before any report: with --redact, redacted by what it names
// itself (the report that would teach the mapping was never made).
void fatal(const DiagnoseOptions& o, const std::string& message) {
  std::string text = "denpex-probe diagnose: " + message;
  if (o.output.redact) text = Redactor().apply(text);
  fmt::print(stderr, "{}\n", line(text));
}


// Collective-call evidence carries file and line only (the line text is not kept while
// streaming): fetch those lines now, one pass per file.
void fill_evidence_text(diag::Diagnosis* d, const evidence::DecodeLimits& decode) {
  std::map<std::string, std::set<long long>> wanted;
  for (const auto& x : d->findings)
    for (const auto& e : x.evidence)
      if (e.text.empty() && !e.file.empty() && e.file != "-" && e.line > 0) wanted[e.file].insert(e.line);
  std::map<std::pair<std::string, long long>, std::string> got;
  for (const auto& [file, lines] : wanted) {
    evidence::OpenedInput in = evidence::open_input(file, decode);
    if (in.status != evidence::OpenedInput::Status::ok) continue;
    evidence::LineReader reader(in.source.get());
    std::string text;
    bool cut = false;
    long long last = *lines.rbegin();
    while (reader.line_number() < last && reader.next(&text, &cut))
      if (lines.count(reader.line_number())) got[{file, reader.line_number()}] = text.substr(0, evidence::kEvidenceChars);
  }
  for (auto& x : d->findings)
    for (auto& e : x.evidence)
      if (e.text.empty()) {
        auto it = got.find({e.file, e.line});
        // Only standard input cannot be read twice; evidence without a line is a whole input (a
        // recorder's trace or dump), and a file changed since it was read may have lost the line.
        e.text = it != got.end()  ? it->second
                 : e.file == "-"  ? "(line not kept: read from standard input)"
                 : e.line <= 0    ? "(the input as a whole)"
                                  : "(line not found again: the file changed since it was read)";
      }
}

// The recorders' findings (Flight Recorder dumps, NCCL RAS) as the diagnosis's findings.
std::vector<diag::DxFinding> recorder_findings(evidence::RecorderEvidence* rec) {
  std::vector<diag::DxFinding> out;
  for (auto& f : rec->findings) {
    diag::DxFinding x;
    for (const auto& e : f.evidence) x.evidence.push_back(diag::Evidence{e.file, 0, e.text});
    std::string dir = f.evidence.empty() ? "." : fs::path(f.evidence.front().file).parent_path().string();
    // The folder comes from the input: a word of the command, quoted; a name starting with '-'
    // would read as an option, so it is given as ./NAME.
    if (dir.empty()) dir = ".";
    if (dir[0] == '-') dir = "./" + dir;
    x.verify = command_or({"denpex-probe", "diagnose", dir}, "denpex-probe diagnose DIR (the folder of the dumps)");
    x.f = std::move(f.finding);
    out.push_back(std::move(x));
  }
  return out;
}

// What the inputs gave: the logs read into `reader`, and the inputs its readers do not take.
struct Inputs {
  diag::LogReader reader;
  std::vector<std::string> notes;  // stderr lines about the inputs, printed with the report (redacted with it)
  std::vector<CommSequence> traced;
  std::vector<std::string> saved;
  std::vector<evidence::ClassifiedInput> recorded;
};

// A compressed input damaged before any text decoded: noted as cut (the report says so), and
// the other inputs are still judged.
void damaged_input(const std::string& f, evidence::InputCut cut, Inputs* in) {
  cut.file = f;
  in->reader.cuts.push_back(evidence::CutInput{std::move(cut), evidence::When{}, true});
  in->reader.files.push_back(f);
}

// Reads one input by its kind. Returns false after printing the one line that ends the run.
bool read_input(const std::string& f, const DiagnoseOptions& o, Inputs* in) {
  std::string error;
  // Told by content first: recorder outputs go to their readers, unreadable files are named.
  evidence::ClassifiedInput kind = evidence::classify(f, o.decode);
  if (kind.kind == evidence::InputKind::unreadable && kind.cut.why == evidence::InputCut::Why::damaged) {
    damaged_input(f, std::move(kind.cut), in);
    return true;
  }
  if (kind.kind == evidence::InputKind::unreadable) {
    fatal(o, kind.message);
    return false;
  }
  // A report or page of an earlier run written into the log folder: not evidence of the job.
  if (evidence::is_own_report(kind.kind)) {
    in->notes.push_back(fmt::format("denpex-probe diagnose: skipped {}: a {} (an output of an earlier run), not an input",
                                    f, evidence::to_string(kind.kind)));
    return true;
  }
  if (evidence::is_recorder(kind.kind)) {
    in->recorded.push_back(std::move(kind));
    in->reader.files.push_back(f);
    return true;
  }
  // A recorder trace as written (read from the file itself: a compressed copy reads as text).
  bool trace = kind.kind == evidence::InputKind::recorder_trace && evidence::read_as_written(kind.encoding);
  if (!trace && kind.kind == evidence::InputKind::other_json) {
    in->saved.push_back(f);  // judged below by the live gate's rules, as `compare` would
    in->reader.files.push_back(f);
    return true;
  }
  if (trace) {
    CollectiveInput t = read_collective_trace(f);
    if (t.status != CollectiveInput::Status::ok) {
      fatal(o, f + ": " + t.error);
      return false;
    }
    in->reader.files.push_back(f);
    in->traced.insert(in->traced.end(), t.sequences.begin(), t.sequences.end());
    return true;
  }
  evidence::OpenedInput opened = evidence::open_input(f, o.decode);
  if (opened.status == evidence::OpenedInput::Status::corrupt) {
    damaged_input(f, std::move(opened.cut), in);
    return true;
  }
  if (opened.status != evidence::OpenedInput::Status::ok) {
    fatal(o, opened.message);
    return false;
  }
  // Standard input is told by content as a file is (open_input sniffed it): a pickle is a
  // Flight Recorder dump, never a log. Its rank comes from its file name only (torch names
  // each rank's dump), and standard input has none.
  if (f == "-" && opened.encoding.size() >= 6 && opened.encoding.compare(opened.encoding.size() - 6, 6, "pickle") == 0) {
    fmt::print(stderr,
               "denpex-probe diagnose: standard input: is a PyTorch Flight Recorder dump ({}), "
               "not a log; a dump's rank is read from its file name: give the dump files "
               "(nccl_trace_rank_<rank>) or their directory instead\n",
               opened.encoding);
    return false;
  }
  if (!in->reader.read(opened.source.get(), f, &error)) {
    fatal(o, f + ": " + error);
    return false;
  }
  return true;
}

// The recorders' outputs, read beside the logs: their call sequences, their cuts and refused
// records go where the logs' do; their findings are returned for the diagnosis.
evidence::RecorderEvidence add_recorders(const DiagnoseOptions& o, Inputs* in) {
  evidence::RecorderEvidence rec = evidence::read_recorders(in->recorded, o.decode);
  for (const auto& p : rec.problems) in->notes.push_back("denpex-probe diagnose: " + p);
  for (const auto& w : rec.warnings) in->notes.push_back("denpex-probe diagnose: " + w);
  diag::LogReader& r = in->reader;
  r.coll.sequences.insert(r.coll.sequences.end(), rec.sequences.begin(), rec.sequences.end());
  for (const auto& c : rec.cuts) r.cuts.push_back(evidence::CutInput{c, evidence::When{}, false});
  r.unreadable.count += rec.unreadable;
  for (const auto& u : rec.unreadable_samples)
    if (r.unreadable.samples.size() < evidence::kMaxSamples) r.unreadable.samples.push_back(diag::Evidence{u.file, 0, u.text});
  return rec;
}

int run(const DiagnoseOptions& o) {
  if (o.paths.empty()) {
    fmt::print(stderr, "denpex-probe diagnose: no input path given (a log file, a directory, or - for standard input)\n");
    return kExitCannotJudge;
  }
  std::string error;
  std::vector<std::string> skipped;
  std::vector<std::string> files = input_files(o.paths, DirectoryWalk::recursive, &error, &skipped);
  if (!error.empty()) {
    for (const auto& s : skipped) fatal(o, "skipped " + s);
    fatal(o, error);
    return kExitCannotJudge;
  }
  Inputs in;
  for (const auto& s : skipped) in.notes.push_back("denpex-probe diagnose: skipped " + s);
  for (const auto& f : files)
    if (!read_input(f, o, &in)) return kExitCannotJudge;
  diag::LogReader& reader = in.reader;
  reader.finish();
  // The logs cut short are said here, as the recorders' are among their problems.
  for (const auto& c : reader.cuts) in.notes.push_back("denpex-probe diagnose: " + c.cut.message);
  reader.coll.sequences.insert(reader.coll.sequences.end(), in.traced.begin(), in.traced.end());
  evidence::RecorderEvidence rec = add_recorders(o, &in);
  diag::Diagnosis d = diag::diagnose(reader);
  if (!rec.findings.empty()) diag::add_findings(&d, recorder_findings(&rec));
  if (!in.saved.empty()) {
    SavedJob job = load_saved_job(in.saved, 0);
    if (job.status != SavedStatus::ok) {
      fatal(o, job.error);
      return kExitCannotJudge;
    }
    diag::add_findings(&d, diag::judge_saved_records(job.groups, in.saved));
  }
  fill_evidence_text(&d, o.decode);
  restore_evidence_lines(&d, o.decode);
  shape_for_ticket(&d);
  diag::settle_verify_lines(&d, o.paths);

  ReportOutput out = o.output;
  out.notes_before = std::move(in.notes);
  if (d.exit_code == kExitCannotJudge) out.notes_after.push_back("denpex-probe diagnose: could not decide: " + d.inconclusive);
  int written = emit_report(out, diag::diagnosis_json(d, reader), o.quiet ? "" : diag::render_diagnosis(d, reader));
  if (written != 0) return written;
  return d.exit_code;
}

}  // namespace

int run_diagnose(const DiagnoseOptions& options) {
  try {
    return run(options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "denpex-probe diagnose: {}\n", line(e.what()));
    return kExitCannotJudge;
  }
}

}  // namespace denpex
