#include "evidence/failures_doc.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/finding_codes.h"
#include "evidence/explain.h"

namespace denpex::evidence {

namespace {

std::string family_title(const std::string& family) {
  if (family == "pytorch") return "PyTorch";
  if (family == "launcher") return "Launchers (torchelastic, DeepSpeed, mp.spawn, Slurm, Open MPI, Ray)";
  if (family == "horovod") return "Horovod";
  if (family == "nccl") return "NCCL";
  if (family == "cuda") return "CUDA errors of a rank";
  if (family == "install") return "Installation evidence";
  return family;
}

// A GitHub heading anchor for an id: lower case, '.' dropped, as GitHub makes it.
std::string anchor(const std::string& id) {
  std::string out;
  for (char c : id)
    if (c != '.' && c != '`') out += c;
  return out;
}

// Text from the table in Markdown: outside backtick spans, '|', '*' and '<' would change the
// page's structure, emphasis or HTML; inside a span everything is literal already.
std::string md(const std::string& s) {
  std::string out;
  bool code = false;
  for (char c : s) {
    if (c == '`') code = !code;
    if (!code && (c == '|' || c == '*' || c == '<')) out += '\\';
    out += c;
  }
  return out;
}

std::string with_recorder(const std::string& verify, const std::string& recorder) {
  std::string out = verify;
  const std::string token = "@RECORDER@";
  for (size_t at = out.find(token); at != std::string::npos; at = out.find(token, at + recorder.size()))
    out.replace(at, token.size(), recorder);
  return out;
}

void append_signal(const Signal& s, const std::string& recorder, std::string* out) {
  *out += fmt::format("### `{}`\n\n", s.id);
  *out += fmt::format("- **Indicates:** {}\n", md(s.summary));
  if (!s.implicates.empty()) *out += fmt::format("- **Implicates:** {}\n", md(s.implicates));
  *out += fmt::format("- **Role of the line:** {}\n", s.role);
  if (!s.tells_apart.empty()) *out += fmt::format("- **Tells it apart from:** {}\n", md(s.tells_apart));
  std::vector<std::string> vars = rerun_variables(s.tells_apart);
  if (!vars.empty()) {
    std::vector<std::string> quoted;
    for (const auto& v : vars) quoted.push_back("`" + v + "`");
    *out += fmt::format("- **Rerun with:** {}\n", fmt::join(quoted, " "));
  }
  *out += fmt::format("- **Fix:** {}\n", md(s.fix));
  *out += fmt::format("- **Verify:** `{}`\n", with_recorder(s.verify, recorder));
  const bool known = find_finding_code(s.code) != nullptr;
  *out += fmt::format("- **Finding code:** {}\n",
                      known ? fmt::format("[`{}`](finding-codes.md)", s.code) : "`" + s.code + "` (not in the table)");
  *out += fmt::format("- **Example:**\n\n  ```\n  {}\n  ```\n\n", s.examples.empty() ? "" : s.examples.front());
}

}  // namespace

std::string failures_markdown(const SignalTable& table, const std::string& recorder_path) {
  std::string out =
      "# Failures: the signal library\n\n"
      "Every failure signature `denpex-probe diagnose` and `denpex-probe collectives` read, grouped\n"
      "by family. This page is generated from the signal library (`evidence/signals.txt`, by\n"
      "`evidence/failures_doc.cpp`); `tests/evidence/explain_test.cpp` fails when the two differ.\n"
      "`denpex-probe explain ID` prints one entry, `denpex-probe explain CODE` a finding code\n"
      "([finding-codes.md](finding-codes.md)) with every signature that gives it, and\n"
      "`denpex-probe explain` lists them all.\n\n"
      "Each verify command can be pasted as it is: `denpex-probe diagnose -` reads the log of the\n"
      "rerun from standard input. The recorder is shown at the Debian package's path on x86_64;\n"
      "on arm64 it is `/usr/lib/aarch64-linux-gnu/denpex/libdenpex-trace.so`, in the portable\n"
      "tarball `lib/libdenpex-trace.so` beside `bin/` (`denpex-probe explain` prints the path its\n"
      "own build installs it to).\n\n";
  if (!table.error.empty()) return out + "The signal library does not parse: " + md(table.error) + "\n";
  const std::vector<std::string> families = family_order(table);
  out += "| family | signatures |\n| --- | --- |\n";
  for (const std::string& f : families) {
    std::vector<std::string> links;
    for (const Signal& s : table.signals)
      if (s.family == f) links.push_back(fmt::format("[`{}`](#{})", s.id, anchor(s.id)));
    out += fmt::format("| {} | {} |\n", family_title(f), fmt::join(links, ", "));
  }
  for (const std::string& f : families) {
    out += fmt::format("\n## {}\n\n", family_title(f));
    for (const Signal& s : table.signals)
      if (s.family == f) append_signal(s, recorder_path, &out);
  }
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

}  // namespace denpex::evidence
