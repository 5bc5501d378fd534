#include "diagnose/verify_lines.h"

#include <algorithm>

#include "compare/shell_command.h"

namespace denpex::diag {

namespace {

const char* const kRerunNote = "the fix is checked by the job's next run: rerun it with the fix, then run this on its new logs";

bool reads_logs(const ShellCommand& c) {
  return c.argv.size() >= 2 && c.argv[0] == "denpex-probe" && (c.argv[1] == "diagnose" || c.argv[1] == "collectives");
}

// `c` with each "-" word replaced by the inputs; *stdin_read says whether one of them was "-".
ShellCommand on_inputs(const ShellCommand& c, const std::vector<std::string>& inputs, bool* stdin_read) {
  std::vector<std::string> argv;
  for (const auto& w : c.argv) {
    if (w != "-") {
      argv.push_back(w);
      continue;
    }
    for (const auto& in : inputs) {
      if (in == "-") *stdin_read = true;
      // A name starting with '-' would read as an option: it is given as ./NAME.
      argv.push_back(in == "-" ? kSavedStdin : in[0] == '-' ? "./" + in : in);
    }
  }
  ShellCommand out;
  if (make_command_with(c.vars, argv, &out) != CommandStatus::ok)
    out.text = "denpex-probe diagnose on the inputs named above (a name holds characters that cannot be put in a command)";
  return out;
}

// Codes whose fix is in one Python environment: the gate checks that environment by name.
bool environment_code(FindingCode code) {
  return code == FindingCode::nccl_wheel_conflict || code == FindingCode::nccl_abi_mismatch ||
         code == FindingCode::torch_nccl_mismatch;
}

// The site-packages folder a finding names, else one the evidence of any finding names in the
// same input file (a pasted environment report names it once, on another line), else "".
std::string site_packages_of(const DxFinding& x, const Diagnosis& d) {
  for (const auto& e : x.evidence)
    if (std::string s = site_packages_in(e.text); !s.empty()) return s;
  for (const std::string* t : {&x.f.message, &x.f.found, &x.f.expected, &x.f.fix})
    if (std::string s = site_packages_in(*t); !s.empty()) return s;
  for (const auto& other : d.findings)
    for (const auto& e : other.evidence)
      for (const auto& mine : x.evidence)
        if (e.file == mine.file)
          if (std::string s = site_packages_in(e.text); !s.empty()) return s;
  return "";
}

// A conflict in one Python environment: the gate on that environment, whose folder the input
// names or only the user knows.
void environment_verify(DxFinding* x, const Diagnosis& d) {
  // Saved records are judged again themselves (judge_saved_records): nothing to add.
  if (x->verify.argv.size() > 1 && x->verify.argv[1] == "compare") return;
  std::string dir = site_packages_of(*x, d);
  if (dir.empty() && x->f.code != FindingCode::nccl_wheel_conflict) return;
  ShellCommand c;
  if (!dir.empty())
    c = command_or({"denpex-probe", "--site-packages", dir}, "");
  else
    make_command_with({{"SITE_PACKAGES", "/path/to/the/job/python/site-packages"}},
                      {"denpex-probe", "--site-packages", "$SITE_PACKAGES"}, &c);
  if (c.argv.empty()) return;
  x->verify = std::move(c);
  x->verify_or = ShellCommand{};
  x->verify_note = dir.empty() ? "set SITE_PACKAGES to the site-packages folder of the Python the job runs, then run "
                                 "this on a node of the job"
                               : "run this on a node of the job, where that folder is";
}

}  // namespace

std::string site_packages_in(const std::string& text) {
  const std::string mark = "/site-packages";
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    size_t end = at + mark.size();
    if (end < text.size() && text[end] != '/' && text[end] != ' ' && text[end] != ':' && text[end] != '\'' &&
        text[end] != '"' && text[end] != ',' && text[end] != ')')
      continue;
    size_t start = text.find_last_of(" \t'\"(=:,", at);
    start = start == std::string::npos ? 0 : start + 1;
    if (start < at && text[start] == '/') return text.substr(start, end - start);
  }
  return "";
}

void settle_verify_lines(Diagnosis* d, const std::vector<std::string>& inputs) {
  for (auto& x : d->findings) {
    if (environment_code(x.f.code)) environment_verify(&x, *d);
    bool stdin_read = false;
    bool rerun = false;
    for (ShellCommand* c : {&x.verify, &x.verify_or}) {
      if (!reads_logs(*c)) continue;
      rerun = true;
      if (std::find(c->argv.begin(), c->argv.end(), "-") != c->argv.end()) *c = on_inputs(*c, inputs, &stdin_read);
    }
    if (rerun && x.verify_note.empty()) x.verify_note = kRerunNote;
    if (stdin_read)
      x.verify_note += std::string("; the input was read from standard input: save it as ") + kSavedStdin +
                       " first (this command reads files, never the terminal)";
  }
}

}  // namespace denpex::diag
