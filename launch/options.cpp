#include "launch/options.h"

#include <cctype>
#include <cstdint>

#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "compare/atomic_file.h"
#include "launch/did_you_mean.h"

namespace denpex {

namespace {

const char* kDescription = R"(denpex-probe: pre-flight check of the NCCL, CUDA driver and PyTorch every rank of a
distributed training job would really load.

  mpirun -np N denpex-probe [OPTIONS]    every rank probes; rank 0 judges the job
  srun --mpi=pmix denpex-probe [OPTIONS]
  torchrun ... --no-python denpex-probe  the same through torchrun's store (no MPI)
  denpex-probe [OPTIONS]                 this process alone (Slurm prolog, quick check)
  denpex-probe --root DIR [OPTIONS]      an unpacked container image, read statically
  denpex-probe compare PATH...           saved rank records (--rank-report outputs)
  denpex-probe collectives PATH...       which rank diverged: libdenpex-trace.so traces or
                                         NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL logs
  denpex-probe diagnose PATH...          a failed job's logs (any launcher, '-' = stdin): the
                                         rank that started it, the ranks that followed, the fix
  denpex-probe explain [CODE|SIGNATURE]  what a finding code or a failure signature means, what
                                         tells it apart, the fix and the command to verify it

Exit status: 0 pass, 1 reject (an error finding, or ranks that never reported),
2 could not judge (bad usage, or an input file missing or malformed).)";

// The options that shape a report, on the program and on each subcommand that reports.
void add_report_options(CLI::App* app, Options* out) {
  app->add_option("--json", out->json_path,
                  "Write the report as JSON to FILE ('-' = stdout; the text report then goes to stderr)")
      ->type_name("FILE");
  app->add_option("--html", out->html_path,
                  "Also write a self-contained HTML page (verdict, timeline, evidence, fix, verify) to FILE")
      ->type_name("FILE");
  app->add_flag("--brief", out->brief, "Print the verdict and the lead lines only");
  app->add_flag("--redact", out->redact,
                "Replace host names, IP addresses, paths and user names by placeholders (host-1, 10.0.0.1, "
                "/path-1, user-1) in the text, JSON and HTML reports, for a public ticket");
  app->add_option("--color", out->color, "Colour in the text report: auto (a terminal), always, never")
      ->type_name("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app->add_flag("-q,--quiet", out->quiet, "No text report; exit code (and --json, --html) only");
}

// "8G", "512MiB", "1000": a whole number of bytes with an optional binary unit (K, M, G, T; "i"
// and "B" may follow), as the decimal number of bytes; "" when it is not one, or does not fit in
// 64 bits. Negative numbers are refused here rather than wrapped by a conversion to unsigned.
std::string size_in_bytes(const std::string& text) {
  size_t i = 0;
  uint64_t n = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (n > (UINT64_MAX - 9) / 10) return "";
    n = n * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i == 0) return "";
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::pair<const char*, int> kUnits[] = {{"", 0}, {"b", 0}, {"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}};
  for (const auto& [name, shift] : kUnits)
    for (const char* tail : {"", "b", "ib"})
      if (unit == std::string(name) + (*name ? tail : "")) {
        if (shift > 0 && n > (UINT64_MAX >> shift)) return "";
        return std::to_string(n << shift);
      }
  return "";
}

// The limits on decoding compressed inputs, on the subcommands that read logs.
void add_decode_options(CLI::App* app, Options* out) {
  app->add_option("--max-decoded-size", out->max_decoded_size,
                  "Read at most SIZE decoded bytes of one compressed input (default 8G; K, M, G, T are "
                  "powers of 1024; 0 = no limit); past it the input is cut and the report says so")
      ->type_name("SIZE")
      ->transform(CLI::Validator(
          [](std::string& s) {
            std::string bytes = size_in_bytes(s);
            if (bytes.empty()) return std::string("not a size: a whole number of bytes, or with K, M, G or T");
            s = bytes;
            return std::string();
          },
          "SIZE"));
  app->add_option("--max-decoded-ratio", out->max_decoded_ratio,
                  "Cut a compressed input that decodes to more than N bytes per compressed byte after "
                  "its first 16 MiB (default 500; 0 = no limit): a decompression bomb")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& s) {
            bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
            return digits && !size_in_bytes(s).empty() ? std::string() : std::string("not a whole number, 0 or more");
          },
          "N"));
}

void add_judging_options(CLI::App* app, Options* out) {
  app->add_option("--baseline", out->baseline,
                  "Judge every rank against a pinned baseline FILE as well as against each other")
      ->type_name("FILE");
  app->add_option("--write-baseline", out->write_baseline,
                  "Write the (majority) configuration of this run as a baseline FILE")
      ->type_name("FILE");
  app->add_option("--prometheus", out->prometheus, "Write versions and finding counts as a node_exporter textfile")
      ->type_name("FILE");
  app->add_flag("--require-gpu", out->require_gpu,
                "A node without a usable NVIDIA driver is an error (default: a warning)");
}

void add_probe_options(CLI::App& app, Options* out) {
  app.add_option("--rank-report", out->rank_report,
                 "Write this rank's own record as JSON to FILE; %r becomes the rank (the launcher's "
                 "global rank: RANK under torchrun), %h the host name, %j the job's id (SLURM_JOB_ID, "
                 "TORCHELASTIC_RUN_ID, ...); a file another process of this run wrote is never "
                 "replaced")
      ->type_name("FILE");
  app.add_flag("--each-rank", out->each_rank,
               "Under torchrun, every rank probes itself; by default the ranks of a host with the "
               "same environment (but RANK, LOCAL_RANK, ...), user, working directory and mount "
               "namespace take one probe, made by the first of them");
  app.add_option("--site-packages", out->site_packages,
                 "A Python site-packages directory to search for PyTorch (repeatable)")
      ->type_name("DIR")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--root", out->root,
                 "Inspect a filesystem tree (an unpacked container image) statically: nothing "
                 "in it is executed or loaded")
      ->type_name("DIR");
  app.add_option("--image-name", out->image_name,
                 "With --root: the name findings give the image (default: the --root path)")
      ->type_name("NAME");
  app.add_option("--arch", out->arch,
                 "With --root: the image's architecture (amd64/x86_64, arm64/aarch64), e.g. the "
                 "image config's; its files must agree (default: from its ld.so or /bin/sh)")
      ->type_name("ARCH");
  app.add_option("--image-env", out->image_env,
                 "With --root: the image's environment, a JSON array of \"NAME=VALUE\" strings "
                 "(the image config's Env); probed instead of this process's environment, which "
                 "nothing in it reaches")
      ->type_name("FILE");
  app.add_option("--timeout", out->timeout,
                 "Bound on the whole run in seconds; hung steps are cut off, ranks that have not "
                 "reported are named (default: 30)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.5, 86400.0));
  app.add_option("--mpi", out->mpi,
                 "Under an MPI launcher, the MPI ABI to load: auto (the launcher's, whose "
                 "library this environment resolves), open-mpi (libmpi.so.40), mpich "
                 "(libmpi.so.12)")
      ->type_name("ABI")
      ->check(CLI::IsMember({"auto", "open-mpi", "mpich"}));
}

// A word CLI11 did not expect: a mistyped subcommand or option gets the nearest known one.
bool suggest(const CLI::App& app, const std::vector<std::string>& extras) {
  std::vector<std::string> subcommands, options;
  for (const CLI::App* sub : app.get_subcommands({})) subcommands.push_back(sub->get_name());
  std::vector<const CLI::App*> apps = {&app};
  for (const CLI::App* sub : app.get_subcommands({})) apps.push_back(sub);
  for (const CLI::App* a : apps)
    for (const CLI::Option* opt : a->get_options())
      for (const auto& name : opt->get_lnames()) options.push_back("--" + name);
  for (const auto& word : extras) {
    bool option = word.rfind("--", 0) == 0;
    std::string name = option ? word.substr(0, word.find('=')) : word;
    std::string near = did_you_mean(name, option ? options : subcommands);
    if (near.empty()) continue;
    std::cerr << "denpex-probe: " << (option ? "unknown option '" : "unknown subcommand '") << name
              << "'; did you mean '" << near << "'? (see --help)\n";
    return true;
  }
  return false;
}

// Options that only mean something for a live probe must not be accepted and then ignored by
// the offline subcommands.
bool refuse_probe_options(const Options* out) {
  if (out->mode != RunMode::collectives && out->mode != RunMode::diagnose &&
      out->mode != RunMode::explain)
    return false;
  const bool explain = out->mode == RunMode::explain;
  const char* sub = out->mode == RunMode::collectives ? "collectives"
                    : explain                         ? "explain"
                                                      : "diagnose";
  std::vector<std::pair<const char*, bool>> unused = {
      {"--prometheus", !out->prometheus.empty()},
      {"--baseline", !out->baseline.empty()},
      {"--write-baseline", !out->write_baseline.empty()},
      {"--rank-report", !out->rank_report.empty()}};
  // explain writes no report: its --json is a flag of its own, on stdout.
  if (explain)
    unused.insert(unused.end(), {{"--json FILE", !out->json_path.empty()},
                                 {"--html", !out->html_path.empty()},
                                 {"--brief", out->brief},
                                 {"--redact", out->redact}});
  for (const auto& [name, given] : unused)
    if (given) {
      std::cerr << "denpex-probe: " << name << " cannot be used with " << sub
                << (explain ? " (it prints a table's entry, it probes and reports nothing; see --help)\n"
                            : " (it reads logs, it probes no rank; see --help)\n");
      return true;
    }
  return false;
}

ParseStatus check_combinations(Options* out) {
  if (!out->arch.empty() && out->root.empty()) {
    std::cerr << "denpex-probe: --arch needs --root (a live probe reads this machine's)\n";
    return ParseStatus::usage;
  }
  if (!out->image_name.empty() && out->root.empty()) {
    std::cerr << "denpex-probe: --image-name needs --root (it names the image read there)\n";
    return ParseStatus::usage;
  }
  if (!out->image_env.empty() && out->root.empty()) {
    std::cerr << "denpex-probe: --image-env needs --root (it is the environment of the image read there)\n";
    return ParseStatus::usage;
  }
  if (out->mode != RunMode::probe && out->mode != RunMode::root && !out->root.empty()) {
    std::cerr << "denpex-probe: --root cannot be combined with a subcommand\n";
    return ParseStatus::usage;
  }
  if (refuse_probe_options(out)) return ParseStatus::usage;
  if (!out->html_path.empty() && out->html_path == out->json_path) {
    std::cerr << "denpex-probe: --html and --json name the same file (" << out->html_path << ")\n";
    return ParseStatus::usage;
  }
  return ParseStatus::parsed;
}

}  // namespace

namespace {

// --help and --version: the text is written and flushed here, where the cause of a failure is
// still known (a full disk: exit 2 with one line), not left to std::cout.
ParseStatus print_and_exit(const CLI::App& app, const CLI::Error& e) {
  std::ostringstream text;
  app.exit(e, text);
  std::string error;
  if (write_standard_stream(stdout, text.str(), &error)) return ParseStatus::exit_ok;
  std::fprintf(stderr, "denpex-probe: %s\n", error.c_str());
  return ParseStatus::usage;
}

}  // namespace

ParseStatus parse_options(int argc, char** argv, Options* out) {
  CLI::App app(kDescription, "denpex-probe");
  app.set_version_flag("--version", std::string("denpex-probe ") + DENPEX_VERSION);
  app.fallthrough();
  add_report_options(&app, out);
  add_judging_options(&app, out);
  add_probe_options(app, out);
  app.add_flag("--strict", out->strict, "Warnings reject too");

  CLI::App* compare = app.add_subcommand(
      "compare", "Judge rank records saved earlier (--rank-report files or directories of them)");
  compare->add_option("PATH", out->paths, "Record files, cluster reports, or directories of them")
      ->type_name("FILE|DIR")
      ->required();
  add_report_options(compare, out);
  add_judging_options(compare, out);
  compare->add_flag("--strict", out->strict, "Warnings reject too");
  CLI::App* collectives = app.add_subcommand(
      "collectives", "Find the first collective where ranks diverged");
  collectives->add_option("PATH", out->paths, "Trace files, NCCL/PyTorch logs, or directories")
      ->type_name("FILE|DIR")
      ->required();
  add_report_options(collectives, out);
  add_decode_options(collectives, out);
  collectives->add_flag("--strict", out->strict, "Warnings (unreadable lines, absent ranks) reject too");
  CLI::App* diagnose = app.add_subcommand(
      "diagnose", "From a failed job's logs: the initiating rank, the collateral ranks, the fix");
  diagnose->add_option("PATH", out->paths, "Log files, directories (read whole), traces, or - for standard input")
      ->type_name("FILE|DIR|-")
      ->required();
  add_report_options(diagnose, out);
  add_decode_options(diagnose, out);
  CLI::App* explain = app.add_subcommand(
      "explain", "What a finding code or a failure signature means, its fix and its verify command");
  explain->add_option("NAME", out->explain_name,
                      "A signature id (nccl.init), a finding code (collective-mismatch), a "
                      "family (nccl), or a log line (quoted; - reads lines from standard input): "
                      "the signatures that read it; none lists them all")
      ->type_name("CODE|SIGNATURE|LINE|-");
  explain->add_flag("--json", out->explain_json, "Print the answer as JSON on stdout");
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return print_and_exit(app, e);
  } catch (const CLI::CallForVersion& e) {
    return print_and_exit(app, e);
  } catch (const CLI::ExtrasError& e) {
    std::vector<std::string> extras = app.remaining();
    for (const CLI::App* sub : app.get_subcommands({}))
      for (const auto& x : sub->remaining()) extras.push_back(x);
    if (!suggest(app, extras)) std::cerr << "denpex-probe: " << e.what() << " (see --help)\n";
    return ParseStatus::usage;
  } catch (const CLI::ParseError& e) {
    std::cerr << "denpex-probe: " << e.what() << " (see --help)\n";
    return ParseStatus::usage;
  }
  if (compare->parsed()) out->mode = RunMode::compare;
  else if (collectives->parsed()) out->mode = RunMode::collectives;
  else if (diagnose->parsed()) out->mode = RunMode::diagnose;
  else if (explain->parsed()) out->mode = RunMode::explain;
  else if (!out->root.empty()) out->mode = RunMode::root;
  return check_combinations(out);
}

evidence::DecodeLimits decode_limits_of(const Options& o) {
  evidence::DecodeLimits d;
  d.max_decoded_bytes = o.max_decoded_size == 0 ? UINT64_MAX : o.max_decoded_size;
  d.max_ratio = o.max_decoded_ratio;
  return d;
}

ReportOutput report_output_of(const Options& o) {
  ReportOutput out;
  out.json_path = o.json_path;
  out.html_path = o.html_path;
  out.quiet = o.quiet;
  out.brief = o.brief;
  out.redact = o.redact;
  out.color = o.color;
  out.tool = o.mode == RunMode::diagnose      ? "denpex-probe diagnose"
             : o.mode == RunMode::collectives ? "denpex-probe collectives"
             : o.mode == RunMode::compare     ? "denpex-probe compare"
                                              : "denpex-probe";
  return out;
}

std::string expand_report_path(const std::string& pattern, int rank, const std::string& host,
                               const std::string& job) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'r') { out += std::to_string(rank); ++i; continue; }
      if (c == 'h') { out += host; ++i; continue; }
      if (c == 'j') { out += job; ++i; continue; }
      if (c == '%') { out += '%'; ++i; continue; }
    }
    out += pattern[i];
  }
  return out;
}

}  // namespace denpex
