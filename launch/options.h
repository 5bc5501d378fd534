// The command line of the contract, parsed with CLI11 into one plain struct.
#pragma once

#include <string>
#include <vector>

#include "evidence/input_source.h"
#include "launch/report_output.h"

namespace denpex {

enum class RunMode {
  probe,        // alone, or every rank of an MPI job (chosen later from the launcher variables)
  root,         // --root DIR: static inspection of a filesystem tree
  compare,      // compare PATH...: saved rank records
  collectives,  // collectives PATH...: collective traces and logs
  diagnose,     // diagnose PATH...: a failed job's logs
  explain,      // explain [NAME]: a signature or finding code from the signal library
};

struct Options {
  RunMode mode = RunMode::probe;
  std::vector<std::string> paths;         // compare / collectives inputs
  std::string explain_name;               // explain NAME ("" = list every name)
  bool explain_json = false;              // explain --json: the answer as JSON on stdout
  std::string json_path;                  // --json ("" = none, "-" = stdout)
  std::string html_path;                  // --html FILE: the self-contained page ("" = none)
  bool brief = false;                     // --brief: the verdict and the lead lines only
  bool redact = false;                    // --redact: hosts, addresses, paths, users replaced
  std::string rank_report;                // --rank-report (%r = rank, %h = host, %j = job)
  std::string baseline;                   // --baseline
  std::string write_baseline;             // --write-baseline
  std::vector<std::string> site_packages; // --site-packages (repeatable)
  std::string root;                       // --root
  std::string image_name;                 // --image-name (with --root; "" = the --root path)
  std::string arch;                       // --arch (with --root): amd64/x86_64, arm64/aarch64
  std::string image_env;                  // --image-env FILE (with --root): the image's Env, as
                                          // data ("" = this process's environment stands for it)
  std::string prometheus;                 // --prometheus FILE (node_exporter textfile)
  double timeout = 30.0;                  // --timeout seconds for the whole run
  bool require_gpu = false;               // --require-gpu
  bool each_rank = false;                 // --each-rank: no probe shared by a host's ranks
  bool strict = false;                    // --strict
  bool quiet = false;                     // -q / --quiet
  std::string color = "auto";             // --color auto|always|never
  std::string mpi = "auto";               // --mpi auto|open-mpi|mpich (MPI mode only)
  // diagnose / collectives: how much a compressed input may decode to (evidence/input_source.h
  // says why these defaults); 0 is no limit.
  uint64_t max_decoded_size = evidence::DecodeLimits{}.max_decoded_bytes;  // --max-decoded-size
  uint64_t max_decoded_ratio = evidence::DecodeLimits{}.max_ratio;         // --max-decoded-ratio
};

// parsed    run with *out
// exit_ok   --help or --version was printed; exit 0
// usage     bad usage; one line was printed on stderr naming the option; exit 2
enum class ParseStatus { parsed, exit_ok, usage };

// Parses argv. Never throws.
ParseStatus parse_options(int argc, char** argv, Options* out);

// How this command line wants its report written (--json, --html, --brief, --redact, --color,
// --quiet).
ReportOutput report_output_of(const Options& o);

// The decoding limits --max-decoded-size and --max-decoded-ratio give (0: none).
evidence::DecodeLimits decode_limits_of(const Options& o);

// --rank-report's path with %r replaced by the rank, %h by the host name and %j by `job`.
std::string expand_report_path(const std::string& pattern, int rank, const std::string& host,
                               const std::string& job = "");

}  // namespace denpex
