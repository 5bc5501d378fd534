#include "launch/run_modes.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collect/launcher.h"
#include "collect/mpi_job.h"
#include "collect/mpi_plugin_loader.h"
#include "collect/saved_reports.h"
#include "compare/atomic_file.h"
#include "compare/finding_codes.h"
#include "compare/report.h"
#include "launch/judge_and_report.h"
#include "probe/isolated_call.h"
#include "probe/monotonic_clock.h"
#include "probe/loader_arch.h"
#include "probe/probe.h"
#include "probe/probe_context.h"

namespace denpex {

double step_timeout_for(double timeout) { return std::clamp(timeout / 4.0, 0.25, 10.0); }

namespace {

std::string host_name() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

// SLURM_PROCID, the task's rank in a Slurm step: alone in a multi-task step (no MPI in a
// container image), each task writes `--rank-report DIR/%h-%r.json` for a later `compare`, so
// each needs its own rank. 0 outside Slurm or when the variable does not parse.
int slurm_task_rank() {
  const char* v = std::getenv("SLURM_PROCID");
  if (!v || !*v) return 0;
  char* end = nullptr;
  long rank = std::strtol(v, &end, 10);
  return *end == '\0' && rank >= 0 && rank <= 1L << 30 ? static_cast<int>(rank) : 0;
}

ProbeOptions probe_options(const Options& o) {
  ProbeOptions p;
  p.env = current_environment();
  p.site_packages = o.site_packages;
  p.root = o.root.empty() ? "/" : o.root;
  p.image_name = o.image_name;
  p.arch = o.arch;
  p.pid = static_cast<long>(::getpid());  // the rank's pid, even when a child probes
  p.step_timeout = step_timeout_for(o.timeout);
  p.running_as_root = ::geteuid() == 0;
  return p;
}

// Writes --rank-report. Returns false (message on stderr) when it cannot be written.
bool write_rank_report(const Options& o, const RankRecord& r) {
  if (o.rank_report.empty()) return true;
  std::string error;
  // An image's record is named "image <name>"; %h stays this machine's name in a path.
  const bool image = r.host.rfind(kImageHostPrefix, 0) == 0;
  std::string path = expand_report_path(o.rank_report, r.rank, image ? host_name() : r.host);
  // Non-UTF-8 bytes become U+FFFD rather than an exception (see configuration_json).
  const std::string text =
      nlohmann::json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!write_file_atomically(path, text, &error)) {
    std::fprintf(stderr, "denpex-probe: --rank-report %s\n", error.c_str());
    return false;
  }
  return true;
}

// --baseline for the modes that judge in this process; false (message on stderr) when bad.
bool load_baseline_or_say(const Options& o, Baseline* b, bool* have) {
  std::string error;
  if (load_baseline_option(o, b, have, &error)) return true;
  std::fprintf(stderr, "denpex-probe: --%s\n", error.c_str());
  return false;
}

}  // namespace

// Alone and under --root the probe runs in a child with the --timeout
// deadline MPI mode has, so nothing in it (a hung file system, a special file the probe failed
// to refuse) can hold a Slurm prolog or an image check past it. The child writes the step it is
// in to a shared page so the timeout names it.
int run_single(const Options& o) {
  const double start = monotonic_seconds();
  // As in run_mpi: stop waiting a little before --timeout, keeping time to judge and report.
  const double deadline = start + o.timeout - std::min(1.0, 0.2 * o.timeout);
  Baseline baseline;
  bool have_baseline = false;
  if (!load_baseline_or_say(o, &baseline, &have_baseline)) return 2;
  if (!o.root.empty() && ::access(o.root.c_str(), R_OK | X_OK) != 0) {
    std::fprintf(stderr, "denpex-probe: --root %s: not a readable directory\n", o.root.c_str());
    return 2;
  }
  if (!o.root.empty()) {
    // The loader's rules follow the image's machine: no judgement against a guessed one.
    TreeArch arch = decide_tree_arch(FsView{o.root}, o.arch);
    // Unknown (no ld.so, no /bin/sh, no --arch) is probed with this machine's rules and said in
    // the record (arch "", arch_source); a contradiction or an unsupported machine is not judged.
    if (arch.status != TreeArchStatus::ok && arch.status != TreeArchStatus::unknown) {
      std::fprintf(stderr, "denpex-probe: --root %s: %s\n", o.root.c_str(), arch.error.c_str());
      return 2;
    }
  }
  constexpr size_t kStepBytes = 256;
  void* page = ::mmap(nullptr, kStepBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
  char* step = page == MAP_FAILED ? nullptr : static_cast<char*>(page);
  if (step) step[0] = '\0';
  ProbeOptions po = probe_options(o);
  po.on_step = [step](const char* what) {
    if (step) std::snprintf(step, kStepBytes, "%s", what);
  };
  // Non-UTF-8 bytes become U+FFFD rather than an exception (see configuration_json).
  IsolatedChild child = start_isolated([&po] {
    return nlohmann::json(probe_rank(po))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  IsolatedResult res = wait_isolated(&child, deadline, 16u << 20);
  const std::string stuck_in = step && step[0] ? std::string(step, strnlen(step, kStepBytes)) : "";
  if (step) ::munmap(page, kStepBytes);

  JobResult job;
  job.nranks = 1;
  job.mode = o.root.empty() ? "single" : "root";
  RankRecord r;
  std::string failure;
  if (res.status == IsolatedStatus::ok) {
    auto j = nlohmann::json::parse(res.output, nullptr, false);
    if (j.is_discarded() || !record_from_json(j, &r, &failure))
      failure = "the probe wrote an unreadable record" + (failure.empty() ? "" : ": " + failure);
  } else if (res.status == IsolatedStatus::timed_out) {
    failure = fmt::format("the probe did not finish within --timeout {:.1f} s{}{}", o.timeout,
                          stuck_in.empty() ? "" : "; it was stuck in: " + stuck_in,
                          res.reaped ? "" : "; " + res.error);
  } else {
    failure = fmt::format("the probe {}", describe(res, o.timeout));
  }
  if (!failure.empty()) {
    // Reported like a rank that never answered in MPI mode: rank-timeout, exit 1.
    std::fprintf(stderr, "denpex-probe: %s; reported as %s\n", failure.c_str(),
                 code_name(FindingCode::rank_timeout));
    job.missing.push_back({0, host_name(), failure});
    return judge_and_report(o, have_baseline ? &baseline : nullptr, std::move(job));
  }
  r.pid = static_cast<long>(::getpid());  // this process, not the child that probed
  if (o.root.empty()) r.rank = slurm_task_rank();
  if (!write_rank_report(o, r)) return 2;
  job.groups = group_records({r});
  job.full_records = {r};
  return judge_and_report(o, have_baseline ? &baseline : nullptr, std::move(job));
}

namespace {

// The probe runs in a child forked before MPI_Init (fork after it is unsafe with some
// transports), so MPI_Init is not held up by a slow probe and rank 0 can keep its deadline.
IsolatedChild start_probe_child(const Options& o) {
  ProbeOptions po = probe_options(o);
  // Non-UTF-8 bytes become U+FFFD rather than an exception (see configuration_json).
  return start_isolated([po] {
    return nlohmann::json(probe_rank(po))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}

// This rank's record from the probe child, waiting until `deadline` (`waited` seconds after
// the rank started), or false with *failure saying why.
bool wait_own_record(IsolatedChild* child, double deadline, double waited, RankRecord* mine,
                     std::string* failure) {
  IsolatedResult res = wait_isolated(child, deadline, 16u << 20);
  if (res.status != IsolatedStatus::ok) {
    *failure = fmt::format("its probe {}", describe(res, waited));
    return false;
  }
  auto j = nlohmann::json::parse(res.output, nullptr, false);
  if (!j.is_discarded() && record_from_json(j, mine, failure)) return true;
  if (failure->empty()) *failure = "its probe wrote an unreadable record";
  return false;
}

// MPI_Init waits for every rank of the job, so one rank frozen or stuck before it reaches
// MPI_Init (SIGSTOP, a hung file system) would hold all the others in MPI_Init past any
// --timeout (seen with Open MPI 4.1.4). A watchdog ends this rank at the
// deadline if MPI_Init has not returned: exit 1 (ranks that never reported), one line on
// stderr; the launcher then ends the job.
std::shared_ptr<std::atomic<bool>> start_mpi_init_watchdog(double deadline, double timeout,
                                                           int probe_pid) {
  auto mpi_started = std::make_shared<std::atomic<bool>>(false);
  std::thread([mpi_started, deadline, timeout, probe_pid] {
    while (!mpi_started->load()) {
      if (monotonic_seconds() >= deadline) {
        std::fprintf(stderr,
                     "denpex-probe: MPI_Init did not return within --timeout %.1f s: a rank of "
                     "this job did not start or is stuck before MPI_Init; exiting 1\n",
                     timeout);
        if (probe_pid > 0) ::kill(-probe_pid, SIGKILL);
        std::fflush(nullptr);
        ::_exit(1);
      }
      ::usleep(50 * 1000);
    }
  }).detach();
  return mpi_started;
}

// N singletons must never pass. When the MPI this process loaded does not speak the
// launcher's protocol, MPI_Init starts a world of one on every rank. Returns the one-line
// message, or "" when the world holds every rank the launcher announced (or it announced
// none). A larger world is not flagged: a heterogeneous srun step announces one component's
// task count while PMIx joins them all.
std::string size_mismatch(const LauncherInfo& launcher, const MpiJob& mpi,
                          const std::string& mpi_library) {
  if (launcher.announced_size <= 0 || mpi.size() >= launcher.announced_size) return "";
  return fmt::format(
      "MPI_Comm_size is {} but {} started {} ranks ({}={}): the MPI this rank loaded ({}) does "
      "not talk to that launcher, so each rank would judge itself alone; use the launcher of "
      "that MPI, or srun --mpi=pmix / --mpi=pmi2 that this MPI supports; exiting 2",
      mpi.size(), launcher_name(launcher.kind), launcher.announced_size, launcher.size_evidence,
      launcher.announced_size, mpi_library.empty() ? "unknown" : mpi_library);
}

// The MPI transport plugin for the MPI this environment resolves (collect/mpi_plugin_loader.h),
// or nullptr with *why (one clause) when there is none.
const denpex_mpi_plugin* load_transport(const Options& o, const LauncherInfo& launcher,
                                        std::string* why) {
  const Environment env = current_environment();
  LoaderEnv le =
      make_loader_env(FsView{}, env_value(env, "LD_PRELOAD"), env_value(env, "LD_LIBRARY_PATH"));
  MpiChoice choice = choose_mpi(le, mpi_abi_order(launcher.kind, o.mpi));
  if (choice.status != MpiChoiceStatus::found) {
    *why = choice.error;
    return nullptr;
  }
  LoadedTransport plugin = load_mpi_plugin(choice, plugin_directory());
  if (plugin.status != TransportStatus::ok) {
    *why = plugin.error;
    return nullptr;
  }
  return plugin.api;
}

// A failed MPI call is not a verdict: says which and ends the job (MPI_Abort, exit 2).
[[noreturn]] void cannot_judge(MpiJob* mpi, const std::string& error) {
  std::fprintf(stderr, "denpex-probe: %s; cannot judge the job, exiting 2\n", error.c_str());
  mpi->abort_job(2);
}

// Rank 0: judges the gathered configurations. Returns the exit code.
int judge_at_root(const Options& o, CollectResult cr) {
  Baseline baseline;
  bool have_baseline = false;
  std::string error;
  if (!load_baseline_option(o, &baseline, &have_baseline, &error)) {
    std::fprintf(stderr, "denpex-probe: --%s\n", error.c_str());
    return 2;
  }
  JobResult job;
  job.groups = std::move(cr.groups);
  job.missing = std::move(cr.missing);
  job.nranks = cr.nranks;
  job.bytes_at_root = cr.bytes_at_root;
  job.mode = "mpi";
  return judge_and_report(o, have_baseline ? &baseline : nullptr, std::move(job));
}

}  // namespace

int run_mpi(const Options& o, const LauncherInfo& launcher, int* argc, char*** argv) {
  const double start = monotonic_seconds();
  // --timeout bounds the whole run: rank 0 stops waiting a little before it, keeping time to
  // judge, print, and let the launcher tear down ranks that never answered.
  const double deadline = start + o.timeout - std::min(1.0, 0.2 * o.timeout);
  IsolatedChild child = start_probe_child(o);
  // MPI is loaded after the fork: the probe child never maps it.
  std::string why;
  const denpex_mpi_plugin* api = load_transport(o, launcher, &why);
  if (!api) {
    std::fprintf(stderr, "denpex-probe: started by %s (%s): %s; exiting 2\n",
                 launcher_name(launcher.kind), launcher.evidence.c_str(), why.c_str());
    if (child.pid > 0) ::kill(-child.pid, SIGKILL);
    wait_isolated(&child, monotonic_seconds(), 0);
    return 2;
  }
  char library[256] = {};
  api->library_version(library, sizeof library);

  auto mpi_started = start_mpi_init_watchdog(deadline, o.timeout, child.pid);
  MpiJob mpi;
  std::string error;
  const bool started = MpiJob::start(api, argc, argv, &mpi, &error);
  mpi_started->store(true);
  if (!started) {
    std::fprintf(stderr, "denpex-probe: %s\n", error.c_str());
    return 2;
  }
  const std::string mismatch = size_mismatch(launcher, mpi, library);
  if (!mismatch.empty()) {
    std::fprintf(stderr, "denpex-probe: rank %d: %s\n", mpi.rank(), mismatch.c_str());
    if (child.pid > 0) ::kill(-child.pid, SIGKILL);
    wait_isolated(&child, monotonic_seconds(), 0);
    mpi.finish(2);
    return 2;
  }
  // Rank 0's deadline, known before this rank's probe ends: a rank with a longer --timeout, or
  // whose probe hangs, gives up on it in time to report, so every live rank takes part to the
  // end and finalizes.
  const double root_deadline = mpi.share_deadline(deadline, &error);
  if (!error.empty()) cannot_judge(&mpi, error);
  const double probe_deadline = std::min(deadline, root_deadline) - 0.5;
  RankRecord mine;
  std::string failure;
  bool have = wait_own_record(&child, probe_deadline, probe_deadline - start, &mine, &failure);
  if (have) {
    mine.rank = mpi.rank();
    if (!write_rank_report(o, mine)) failure = "could not write --rank-report";
  }

  CollectResult cr = mpi.collect(have ? &mine : nullptr, host_name(), failure, deadline);
  if (!cr.error.empty()) cannot_judge(&mpi, cr.error);
  if (!cr.note.empty()) std::fprintf(stderr, "denpex-probe: %s\n", cr.note.c_str());
  int code = mpi.rank() == 0 ? judge_at_root(o, std::move(cr)) : 0;
  std::string note;
  // Ranks other than 0 wait past rank 0's deadline: rank 0 may be judging still.
  code = mpi.agree_exit_code(code, deadline, kRecordGrace + 30.0, &note);
  if (!note.empty()) std::fprintf(stderr, "denpex-probe: %s\n", note.c_str());
  // The report is written: when a rank never answered, rank 0 ends the job with MPI_Abort and
  // this code (MpiJob::finish).
  mpi.finish(code);
  return code;
}

int run_slurm_task(const Options& o, const SlurmTask& task) {
  const std::string where =
      fmt::format("Slurm task {} of {}{}", task.procid, task.ntasks,
                  task.step.empty() ? std::string() : " of step " + task.step);
  if (o.rank_report.empty()) {
    std::fprintf(stderr,
                 "denpex-probe: %s was started without an MPI launcher (no PMI or PMIx "
                 "variables), so it cannot see the other tasks and would judge itself alone; "
                 "run srun --mpi=pmix (or --mpi=pmi2), or give every task --rank-report "
                 "DIR/%%h-%%r.json and judge them with denpex-probe compare DIR; exiting 2\n",
                 where.c_str());
    return 2;
  }
  // Per-task records are judged later, together, by `compare`: options that judge or report
  // here would describe one task as if it were the job.
  const char* judging = !o.json_path.empty()        ? "--json"
                        : !o.baseline.empty()       ? "--baseline"
                        : !o.write_baseline.empty() ? "--write-baseline"
                        : !o.prometheus.empty()     ? "--prometheus"
                                                    : nullptr;
  if (judging) {
    std::fprintf(stderr,
                 "denpex-probe: %s with --rank-report only writes its record; %s belongs to "
                 "denpex-probe compare over every task's record\n",
                 where.c_str(), judging);
    return 2;
  }
  const double deadline = monotonic_seconds() + o.timeout - std::min(1.0, 0.2 * o.timeout);
  IsolatedChild child = start_probe_child(o);
  RankRecord mine;
  std::string failure;
  if (!wait_own_record(&child, deadline, o.timeout, &mine, &failure)) {
    std::fprintf(stderr, "denpex-probe: %s: %s; no record written\n", where.c_str(),
                 failure.c_str());
    return 2;
  }
  mine.rank = task.procid;
  if (!write_rank_report(o, mine)) return 2;
  if (!o.quiet)
    std::printf("denpex-probe: %s: record written to %s; not judged alone: run denpex-probe "
                "compare over every task's record\n",
                where.c_str(), expand_report_path(o.rank_report, mine.rank, mine.host).c_str());
  return 0;
}

int run_compare(const Options& o) {
  Baseline baseline;
  bool have_baseline = false;
  if (!load_baseline_or_say(o, &baseline, &have_baseline)) return 2;
  SavedJob saved = load_saved_job(o.paths, kMaxRanksWithFullRecords + 1);
  if (saved.status != SavedStatus::ok) {
    std::fprintf(stderr, "denpex-probe: compare: %s\n", saved.error.c_str());
    return 2;
  }
  JobResult job;
  job.nranks = saved.nranks;
  job.groups = std::move(saved.groups);
  if (job.nranks <= kMaxRanksWithFullRecords) job.full_records = std::move(saved.kept);
  job.mode = "compare";
  const int renumbered = saved.renumbered;
  if (renumbered > 0)
    job.notes.push_back(fmt::format(
        "{} record(s) repeated a rank number already seen (separate runs, e.g. per-node "
        "prologs) and were given new rank numbers",
        renumbered));
  return judge_and_report(o, have_baseline ? &baseline : nullptr, std::move(job));
}

}  // namespace denpex
