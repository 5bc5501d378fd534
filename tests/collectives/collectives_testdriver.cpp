// Stand-in for `denpex-probe collectives` in the integration tests, so they do not depend on
// launch/main.cpp: the same options, parsed with CLI11, handed to run_collectives.
#include <CLI/CLI.hpp>

#include "launch/collectives_cmd.h"

int main(int argc, char** argv) {
  denpex::CollectivesOptions o;
  CLI::App app{"denpex-probe collectives (test driver)"};
  app.add_option("paths", o.paths, "trace files, logs or directories")->required();
  app.add_option("--json", o.json_path, "write the JSON report to PATH (- = stdout)");
  app.add_flag("-q,--quiet", o.quiet, "no human report");
  app.add_flag("--strict", o.strict, "warnings reject too");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return denpex::run_collectives(o);
}
