// Test tool: a saved JSON report (any mode) through report/ as the CLI would do it:
//   render_report IN.json [--redact] [--html OUT.html] [--json OUT.json] [--brief OUT.txt]
// so that the browser tests can render pages from reports made by hand (a 1,000-rank timeline)
// as well as from real runs.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/html_report.h"
#include "report/lead.h"
#include "report/redact.h"

namespace {

bool write(const char* path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  return static_cast<bool>(out << text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: render_report IN.json [--redact] [--html OUT] [--json OUT] [--brief OUT]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json report = nlohmann::json::parse(text.str(), nullptr, false);
  if (!in || report.is_discarded()) {
    std::cerr << "render_report: " << argv[1] << ": not a JSON report\n";
    return 2;
  }
  bool ok = true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--redact") == 0) {
      report = denpex::Redactor::from_report(report).apply(report);
      continue;
    }
    if (i + 1 >= argc) return 2;
    const char* out = argv[++i];
    if (std::strcmp(argv[i - 1], "--html") == 0) ok = write(out, denpex::render_html(report)) && ok;
    else if (std::strcmp(argv[i - 1], "--json") == 0) ok = write(out, report.dump(2) + "\n") && ok;
    else if (std::strcmp(argv[i - 1], "--brief") == 0) ok = write(out, denpex::brief_text(report)) && ok;
    else return 2;
  }
  return ok ? 0 : 2;
}
