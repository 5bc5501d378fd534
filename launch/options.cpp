#include "launch/options.h"

#include <iostream>

#include <CLI/CLI.hpp>

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

Exit status: 0 pass, 1 reject (an error finding, or ranks that never reported),
2 could not judge (bad usage, or an input file missing or malformed).)";

}  // namespace

ParseStatus parse_options(int argc, char** argv, Options* out) {
  CLI::App app(kDescription, "denpex-probe");
  app.set_version_flag("--version", std::string("denpex-probe ") + DENPEX_VERSION);
  app.fallthrough();
  app.add_option("--json", out->json_path,
                 "Write the cluster report as JSON to PATH ('-' = stdout; the human report then "
                 "goes to stderr)");
  app.add_option("--rank-report", out->rank_report,
                 "Write this rank's own record as JSON; %r becomes the rank (the launcher's global "
                 "rank: RANK under torchrun), %h the host name, %j the job's id (SLURM_JOB_ID, "
                 "TORCHELASTIC_RUN_ID, ...); a file another process of this run wrote is never "
                 "replaced");
  app.add_option("--baseline", out->baseline,
                 "Judge every rank against a pinned baseline as well as against each other");
  app.add_option("--write-baseline", out->write_baseline,
                 "Write the (majority) configuration of this run as a baseline file");
  app.add_option("--site-packages", out->site_packages,
                 "A Python site-packages directory to search for PyTorch (repeatable)")
      ->type_size(1)
      ->allow_extra_args(false);
  app.add_option("--root", out->root,
                 "Inspect a filesystem tree (an unpacked container image) statically: nothing "
                 "in it is executed or loaded");
  app.add_option("--image-name", out->image_name,
                 "With --root: the name findings give the image (default: the --root path)");
  app.add_option("--arch", out->arch,
                 "With --root: the image's architecture (amd64/x86_64, arm64/aarch64), e.g. the "
                 "image config's; its files must agree (default: from its ld.so or /bin/sh)");
  app.add_option("--timeout", out->timeout,
                 "Bound on the whole run in seconds; hung steps are cut off, ranks that have not "
                 "reported are named (default: 30)")
      ->check(CLI::Range(0.5, 86400.0));
  app.add_option("--prometheus", out->prometheus,
                 "Write versions and finding counts as a node_exporter textfile");
  app.add_flag("--require-gpu", out->require_gpu,
               "A node without a usable NVIDIA driver is an error (default: a warning)");
  app.add_flag("--strict", out->strict, "Warnings reject too");
  app.add_flag("-q,--quiet", out->quiet, "No human report; exit code (and --json) only");
  app.add_option("--color", out->color, "Colour in the human report: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_option("--mpi", out->mpi,
                 "Under an MPI launcher, the MPI ABI to load: auto (the launcher's, whose "
                 "library this environment resolves), open-mpi (libmpi.so.40), mpich "
                 "(libmpi.so.12)")
      ->check(CLI::IsMember({"auto", "open-mpi", "mpich"}));

  CLI::App* compare = app.add_subcommand(
      "compare", "Judge rank records saved earlier (--rank-report files or directories of them)");
  compare->add_option("PATH", out->paths, "Record files or directories")->required();
  CLI::App* collectives = app.add_subcommand(
      "collectives", "Find the first collective where ranks diverged");
  collectives->add_option("PATH", out->paths, "Trace files, NCCL/PyTorch logs, or directories")
      ->required();
  CLI::App* diagnose = app.add_subcommand(
      "diagnose", "From a failed job's logs: the initiating rank, the collateral ranks, the fix");
  diagnose->add_option("PATH", out->paths, "Log files, directories (read whole), traces, or - for standard input")
      ->required();
  app.require_subcommand(0, 1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);
    return ParseStatus::exit_ok;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return ParseStatus::exit_ok;
  } catch (const CLI::ParseError& e) {
    std::cerr << "denpex-probe: " << e.what() << " (see --help)\n";
    return ParseStatus::usage;
  }
  if (compare->parsed()) out->mode = RunMode::compare;
  else if (collectives->parsed()) out->mode = RunMode::collectives;
  else if (diagnose->parsed()) out->mode = RunMode::diagnose;
  else if (!out->root.empty()) out->mode = RunMode::root;
  if (!out->arch.empty() && out->root.empty()) {
    std::cerr << "denpex-probe: --arch needs --root (a live probe reads this machine's)\n";
    return ParseStatus::usage;
  }
  if (!out->image_name.empty() && out->root.empty()) {
    std::cerr << "denpex-probe: --image-name needs --root (it names the image read there)\n";
    return ParseStatus::usage;
  }
  if (out->mode != RunMode::probe && out->mode != RunMode::root && !out->root.empty()) {
    std::cerr << "denpex-probe: --root cannot be combined with a subcommand\n";
    return ParseStatus::usage;
  }
  // Options that only mean something for a live probe must not be accepted and then ignored
  // by the offline subcommands.
  if (out->mode == RunMode::collectives || out->mode == RunMode::diagnose) {
    const char* sub = out->mode == RunMode::collectives ? "collectives" : "diagnose";
    std::vector<std::pair<const char*, bool>> unused = {
        {"--prometheus", !out->prometheus.empty()},
        {"--baseline", !out->baseline.empty()},
        {"--write-baseline", !out->write_baseline.empty()},
        {"--rank-report", !out->rank_report.empty()}};
    for (const auto& [name, given] : unused)
      if (given) {
        std::cerr << "denpex-probe: " << name << " cannot be used with " << sub
                  << " (it reads logs, it probes no rank; see --help)\n";
        return ParseStatus::usage;
      }
  }
  return ParseStatus::parsed;
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
