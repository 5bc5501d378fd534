#include "compare/terminal_text.h"
#include "launch/run_modes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
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
#include "collect/store_job.h"
#include "collect/tcp_store_server.h"
#include "compare/atomic_file.h"
#include "compare/bounded_json.h"
#include "compare/finding_codes.h"
#include "compare/report.h"
#include "launch/image_env.h"
#include "launch/judge_and_report.h"
#include "probe/isolated_call.h"
#include "probe/monotonic_clock.h"
#include "probe/loader_arch.h"
#include "probe/probe.h"
#include "probe/probe_context.h"
#include "probe/probe_inputs.h"

namespace denpex {

double step_timeout_for(double timeout) { return std::clamp(timeout / 4.0, 0.25, 10.0); }

namespace {

std::string host_name() {
  char h[256] = {};
  ::gethostname(h, sizeof h - 1);
  return h;
}

// The launcher's global rank (RANK under torchrun, SLURM_PROCID in a Slurm step) for a process
// judged alone: each task that writes `--rank-report DIR/%h-%r.json` for a later `compare`
// needs its own rank. 0 when no launcher says.
int announced_rank() {
  const AnnouncedWorld w = announced_world(current_environment());
  return w.rank >= 0 ? w.rank : 0;
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

// The --rank-report file already at `path`: the run identity it was written under and who
// wrote it ("rank 1 on node02"), read from its first MiB. "" when it says nothing readable.
// Only a regular file is read: O_NONBLOCK so that a FIFO at the name cannot hang the open,
// O_NOFOLLOW so that a link there is not read through.
std::string existing_report_run(const std::string& path, std::string* writer) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(1u << 20);
    ssize_t n = ::read(fd, &text[0], text.size());
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  ::close(fd);
  BoundedJson j = parse_bounded_json(text);
  if (j.status != BoundedJsonStatus::ok || !j.value.is_object()) return "";
  const auto& v = j.value;
  if (v.contains("rank") && v["rank"].is_number_integer() && v.contains("host") &&
      v["host"].is_string())
    *writer = fmt::format("rank {} on {}", v["rank"].get<long long>(),
                          v["host"].get<std::string>().substr(0, 255));
  return v.contains("run") && v["run"].is_string() ? v["run"].get<std::string>() : "";
}

// Writes --rank-report. Returns false with *error (one line) when it cannot be written, and
// when another process of this run (the same run identity, collect/launcher.h) wrote that file:
// two ranks mapped to one name, and neither record is lost. A file of an earlier run is
// replaced atomically.
bool write_rank_report(const Options& o, const RankRecord& r, std::string* error) {
  if (o.rank_report.empty()) return true;
  const Environment env = current_environment();
  const std::string job = job_id(env);
  if (o.rank_report.find("%j") != std::string::npos && job.empty()) {
    *error = "--rank-report " + o.rank_report +
             ": %j needs the job's id, and none of SLURM_JOB_ID, TORCHELASTIC_RUN_ID, "
             "PBS_JOBID, LSB_JOBID, FLUX_JOB_ID, JOB_ID is set";
    return false;
  }
  // An image's record is named "image <name>"; %h stays this machine's name in a path.
  const bool image = r.host.rfind(kImageHostPrefix, 0) == 0;
  const std::string path =
      expand_report_path(o.rank_report, r.rank, image ? host_name() : r.host, job);
  const std::string run = run_identity(env);
  nlohmann::json j(r);
  if (!run.empty()) j["run"] = run;
  // Non-UTF-8 bytes become U+FFFD rather than an exception (see configuration_json).
  const std::string text =
      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string why;
  NewFileStatus st = write_new_file(path, text, &why);
  if (st == NewFileStatus::exists) {
    std::string writer;
    const std::string theirs = existing_report_run(path, &writer);
    if (!run.empty() && theirs == run) {
      *error = fmt::format(
          "--rank-report {}: already written by {} of this run: two processes map to one "
          "file, nothing overwritten; put %r (and %j for reruns) in the path",
          path, writer.empty() ? "another process" : writer);
      return false;
    }
    st = write_file_atomically(path, text, &why) ? NewFileStatus::written : NewFileStatus::failed;
  }
  if (st != NewFileStatus::written) {
    *error = "--rank-report " + why;
    return false;
  }
  return true;
}

bool write_rank_report(const Options& o, const RankRecord& r) {
  std::string error;
  if (write_rank_report(o, r, &error)) return true;
  std::fprintf(stderr, "denpex-probe: %s\n", terminal_text(error).c_str());
  return false;
}

// --baseline for the modes that judge in this process; false (message on stderr) when bad.
bool load_baseline_or_say(const Options& o, Baseline* b, bool* have) {
  std::string error;
  if (load_baseline_option(o, b, have, &error)) return true;
  std::fprintf(stderr, "denpex-probe: --%s\n", terminal_text(error).c_str());
  return false;
}

// --root and --image-env, checked before the probe starts: false (one line on stderr) when
// either cannot be used; *image_env holds the image's environment when --image-env is given.
bool single_inputs_or_say(const Options& o, ImageEnv* image_env) {
  if (!o.root.empty() && ::access(o.root.c_str(), R_OK | X_OK) != 0) {
    std::fprintf(stderr, "denpex-probe: --root %s: not a readable directory\n", terminal_text(o.root).c_str());
    return false;
  }
  if (!o.root.empty()) {
    // The loader's rules follow the image's machine: no judgement against a guessed one.
    TreeArch arch = decide_tree_arch(FsView{o.root}, o.arch);
    // Unknown (no ld.so, no /bin/sh, no --arch) is probed with this machine's rules and said in
    // the record (arch "", arch_source); a contradiction or an unsupported machine is not judged.
    if (arch.status != TreeArchStatus::ok && arch.status != TreeArchStatus::unknown) {
      std::fprintf(stderr, "denpex-probe: --root %s: %s\n", terminal_text(o.root).c_str(), terminal_text(arch.error).c_str());
      return false;
    }
  }
  // --image-env: the image's declared environment is data for the probe to read; this
  // process's own environment (the caller's) stays as it is.
  if (!o.image_env.empty()) {
    *image_env = read_image_env(o.image_env);
    if (image_env->status != ImageEnvStatus::ok) {
      std::fprintf(stderr, "denpex-probe: --image-env %s: %s\n", terminal_text(o.image_env).c_str(),
                   terminal_text(image_env->error).c_str());
      return false;
    }
    if (!o.quiet)
      for (const auto& n : image_env->notes)
        std::fprintf(stderr, "denpex-probe: --image-env %s: %s\n", terminal_text(o.image_env).c_str(),
                     terminal_text(n).c_str());
  }
  return true;
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
  ImageEnv image_env;
  if (!single_inputs_or_say(o, &image_env)) return 2;
  constexpr size_t kStepBytes = 256;
  void* page = ::mmap(nullptr, kStepBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
  char* step = page == MAP_FAILED ? nullptr : static_cast<char*>(page);
  if (step) step[0] = '\0';
  ProbeOptions po = probe_options(o);
  if (!o.image_env.empty()) po.env = std::move(image_env.env);
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
    std::fprintf(stderr, "denpex-probe: %s; reported as %s\n", terminal_text(failure).c_str(),
                 code_name(FindingCode::rank_timeout));
    job.missing.push_back({0, host_name(), failure});
    return judge_and_report(o, have_baseline ? &baseline : nullptr, std::move(job));
  }
  r.pid = static_cast<long>(::getpid());  // this process, not the child that probed
  if (o.root.empty()) r.rank = announced_rank();
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

// How long a rank waits for the probe of the host's first rank with the same inputs before it
// probes itself: that probe takes tens of milliseconds; one that takes longer is slow or hung,
// and this rank's own probe then says which.
constexpr double kSharedProbeWait = 2.0;

// This rank's record through the probe it shares with the ranks of its host that have the same
// probe inputs (`key`, probe/probe_inputs.h): the first to claim it probes and shares its
// record; the others take it, with this rank's pid and the sharer's rank as probed_by, or probe
// themselves when none comes (the sharer failed, hung or is slow). Rank 0 always probes
// itself: the judge keeps its own record, and reads no other than the ones it judges. False
// with *failure as wait_own_record.
bool shared_record(const Options& o, StoreJob* job, const std::string& key, int rank,
                   double deadline, IsolatedChild* child, RankRecord* mine,
                   std::string* failure) {
  const bool first = job->claim_probe(host_name(), key, deadline);
  if (first || rank == 0) {
    if (rank != 0) *child = start_probe_child(o);  // rank 0's began beside the connection
    const bool have = wait_own_record(child, deadline - 0.5, o.timeout, mine, failure);
    mine->rank = rank;
    if (first) job->share_probe(have ? mine : nullptr, deadline);
    return have;
  }
  RankRecord theirs;
  if (job->take_probe(std::min(deadline - 0.5, monotonic_seconds() + kSharedProbeWait), &theirs)) {
    *mine = std::move(theirs);
    mine->probed_by = mine->rank;
    mine->pid = static_cast<long>(::getpid());
    return true;
  }
  *child = start_probe_child(o);
  return wait_own_record(child, deadline - 0.5, o.timeout, mine, failure);
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
  if (launcher.announced_size <= 0 || mpi.size() >= launcher.announced_size) {
    // A launcher that names only the rank (srun --mpi=pmix outside an srun step's variables,
    // PALS): a rank the world does not hold is the same world of one.
    if (launcher.rank_hint <= 0 || mpi.size() > launcher.rank_hint) return "";
    return fmt::format(
        "MPI_Comm_size is {} but {} gave this process rank {} ({}={}): the MPI this rank loaded "
        "({}) does not talk to that launcher, so each rank would judge itself alone; use the "
        "launcher of that MPI, or srun --mpi=pmix / --mpi=pmi2 that this MPI supports; exiting 2",
        mpi.size(), launcher_name(launcher.kind), launcher.rank_hint, launcher.rank_variable,
        launcher.rank_hint, mpi_library.empty() ? "unknown" : mpi_library);
  }
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
  std::fprintf(stderr, "denpex-probe: %s; cannot judge the job, exiting 2\n", terminal_text(error).c_str());
  mpi->abort_job(2);
}

// Rank 0: judges the gathered configurations. Returns the exit code.
int judge_at_root(const Options& o, CollectResult cr, const char* mode) {
  Baseline baseline;
  bool have_baseline = false;
  std::string error;
  if (!load_baseline_option(o, &baseline, &have_baseline, &error)) {
    std::fprintf(stderr, "denpex-probe: --%s\n", terminal_text(error).c_str());
    return 2;
  }
  JobResult job;
  job.groups = std::move(cr.groups);
  job.missing = std::move(cr.missing);
  job.nranks = cr.nranks;
  job.bytes_at_root = cr.bytes_at_root;
  job.mode = mode;
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
                 launcher_name(launcher.kind), terminal_text(launcher.evidence).c_str(), terminal_text(why).c_str());
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
    std::fprintf(stderr, "denpex-probe: %s\n", terminal_text(error).c_str());
    return 2;
  }
  const std::string mismatch = size_mismatch(launcher, mpi, library);
  if (!mismatch.empty()) {
    std::fprintf(stderr, "denpex-probe: rank %d: %s\n", mpi.rank(), terminal_text(mismatch).c_str());
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
    std::string refused;
    // The live record still reaches rank 0: only the file is refused, and this rank says so.
    if (!write_rank_report(o, mine, &refused))
      std::fprintf(stderr, "denpex-probe: rank %d: %s\n", mpi.rank(), terminal_text(refused).c_str());
  }

  CollectResult cr = mpi.collect(have ? &mine : nullptr, host_name(), failure, deadline);
  if (!cr.error.empty()) cannot_judge(&mpi, cr.error);
  if (!cr.note.empty()) std::fprintf(stderr, "denpex-probe: %s\n", terminal_text(cr.note).c_str());
  int code = mpi.rank() == 0 ? judge_at_root(o, std::move(cr), "mpi") : 0;
  std::string note;
  // Ranks other than 0 wait past rank 0's deadline: rank 0 may be judging still.
  code = mpi.agree_exit_code(code, deadline, kRecordGrace + 30.0, &note);
  if (!note.empty()) std::fprintf(stderr, "denpex-probe: %s\n", terminal_text(note).c_str());
  // The report is written: when a rank never answered, rank 0 ends the job with MPI_Abort and
  // this code (MpiJob::finish).
  mpi.finish(code);
  return code;
}

namespace {

// What to do when the store cannot be used, by what went wrong.
const char* store_advice(StoreStatus s) {
  if (s == StoreStatus::protocol)
    return "it does not speak a c10d TCPStore protocol this probe knows (PyTorch 2.x's classic "
           "or libuv server): check that MASTER_PORT is the port torchrun gave its workers, or "
           "write --rank-report DIR/%j-%r.json on every rank and judge them with denpex-probe "
           "compare DIR";
  return "the torchrun agent that hosts it has exited, or the address is not reachable from "
         "this node: run the gate as torchrun's worker (torchrun ... --no-python denpex-probe) "
         "and leave MASTER_ADDR/MASTER_PORT as torchrun sets them";
}

// Ignores SIGTERM, the signal torchrun stops its workers with, for the rest of the process (the
// disposition is the process's, so whichever thread the kernel picks, nothing is exec'd after).
void ignore_stop_signal() { ::signal(SIGTERM, SIG_IGN); }

// Whether rank 0 serves MASTER_ADDR:MASTER_PORT itself. Only torchrun's agent announces a
// store (TORCHELASTIC_USE_AGENT_STORE=True: torch >= 2.4, the static rendezvous of older
// ones); otherwise (torch <= 2.3 with --rdzv-backend c10d, a launcher that sets the env://
// variables without torchrun) the script's rank 0 would host it in init_process_group, and
// the gate's rank 0 does. A port already taken means someone serves it: rank 0 is a client.
// Returns false (one line on stderr) when rank 0 cannot listen for another reason.
bool serve_store_if_unserved(const TorchrunWorker& w, TcpStoreServer* server, bool* serving) {
  *serving = false;
  if (w.agent_store == "True" || w.rank != 0) return true;
  std::string error;
  bool in_use = false;
  if (server->start(w.master_port, &error, &in_use)) {
    *serving = true;
    return true;
  }
  if (in_use) return true;
  std::fprintf(stderr,
               "denpex-probe: rank 0: nobody serves MASTER_ADDR:MASTER_PORT (%s:%d) for the "
               "workers and rank 0 cannot: %s; free that port or set MASTER_PORT to a free "
               "one; exiting 2\n",
               terminal_text(w.master_addr).c_str(), w.master_port, terminal_text(error).c_str());
  return false;
}

}  // namespace

int run_torchrun(const Options& o, const TorchrunWorker& w) {
  if (!w.error.empty()) {
    std::fprintf(stderr, "denpex-probe: started as a torchrun worker, but %s; exiting 2\n",
                 terminal_text(w.error).c_str());
    return 2;
  }
  TcpStoreServer server;
  bool serving = false;
  if (!serve_store_if_unserved(w, &server, &serving)) return 2;
  const double start = monotonic_seconds();
  // As in run_mpi: rank 0 stops waiting a little before --timeout, to judge and report.
  const double deadline = start + o.timeout - std::min(1.0, 0.2 * o.timeout);
  // Ranks that may take a shared probe claim it on the store first; rank 0 and a rank that
  // shares nothing start theirs now, beside the connection.
  const std::string key = o.each_rank ? "" : probe_input_key(probe_options(o));
  IsolatedChild child = key.empty() || w.rank == 0 ? start_probe_child(o) : IsolatedChild{};
  StoreJob job;
  job.set_rank0_serves(w.agent_store != "True");
  StoreReply s = job.start(w, std::min(deadline, start + std::max(2.0, 0.25 * o.timeout)));
  if (!s.ok()) {
    std::fprintf(stderr, "denpex-probe: rank %d: cannot use torchrun's store at %s:%d "
                 "(MASTER_ADDR:MASTER_PORT): %s; %s; exiting 2\n",
                 w.rank, terminal_text(w.master_addr).c_str(), w.master_port, terminal_text(s.error).c_str(),
                 store_advice(s.status));
    if (child.pid > 0) ::kill(-child.pid, SIGKILL);
    wait_isolated(&child, monotonic_seconds(), 0);
    return 2;
  }
  RankRecord mine;
  std::string failure;
  bool have = key.empty() ? wait_own_record(&child, deadline - 0.5, o.timeout, &mine, &failure)
                          : shared_record(o, &job, key, w.rank, deadline, &child, &mine,
                                          &failure);
  if (have) {
    mine.rank = w.rank;
    std::string error;
    if (!write_rank_report(o, mine, &error))
      std::fprintf(stderr, "denpex-probe: rank %d: %s\n", w.rank, terminal_text(error).c_str());
  }
  CollectResult cr = job.collect(have ? &mine : nullptr, host_name(), failure, deadline);
  if (!cr.error.empty()) {
    std::fprintf(stderr, "denpex-probe: %s; cannot judge the job: %s; exiting 2\n",
                 terminal_text(cr.error).c_str(), store_advice(StoreStatus::closed));
    return 2;
  }
  int code = w.rank == 0 ? judge_at_root(o, std::move(cr), "torchrun") : 0;
  std::string note;
  // Ranks other than 0 wait past their deadline: rank 0 may be waiting for records, judging.
  code = job.agree_exit_code(code, deadline + kRecordGrace + 30.0, &note);
  if (!note.empty()) std::fprintf(stderr, "denpex-probe: %s\n", terminal_text(note).c_str());
  if (w.rank != 0) {
    // From the acknowledgement on, rank 0 may exit and torchrun stop this worker: its exit
    // code is the verdict, not SIGTERM's (the few steps left are bounded; SIGKILL still ends it).
    ignore_stop_signal();
    job.acknowledge_verdict(code);
  } else if (job.verdict_needs_readers(code)) {
    job.wait_for_readers(monotonic_seconds() + (serving ? 10.0 : 5.0));
  }
  return code;
}

namespace {

// A task that cannot see the others writes its --rank-report for a later `compare` and judges
// nothing: 0 when the record was written, 2 when it could not be or when an option asks for a
// judgement here.
int write_task_record(const Options& o, const std::string& where, int rank) {
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
                 terminal_text(where).c_str(), judging);
    return 2;
  }
  const double deadline = monotonic_seconds() + o.timeout - std::min(1.0, 0.2 * o.timeout);
  IsolatedChild child = start_probe_child(o);
  RankRecord mine;
  std::string failure;
  if (!wait_own_record(&child, deadline, o.timeout, &mine, &failure)) {
    std::fprintf(stderr, "denpex-probe: %s: %s; no record written\n", terminal_text(where).c_str(),
                 terminal_text(failure).c_str());
    return 2;
  }
  mine.rank = rank;
  if (!write_rank_report(o, mine)) return 2;
  if (!o.quiet)
    std::printf("denpex-probe: %s: record written to %s; not judged alone: run denpex-probe "
                "compare over every task's record\n",
                where.c_str(),
                expand_report_path(o.rank_report, mine.rank, mine.host,
                                   job_id(current_environment()))
                    .c_str());
  return 0;
}

}  // namespace

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
                 terminal_text(where).c_str());
    return 2;
  }
  return write_task_record(o, where, task.procid);
}

int run_announced_task(const Options& o, const AnnouncedWorld& world) {
  const std::string where =
      world.rank >= 0 ? fmt::format("rank {} of {}{} ({})", world.rank, world.at_least ? "at least " : "",
                                    world.size, world.size_evidence)
                      : fmt::format("a process of a {}-rank job ({})", world.size,
                                    world.size_evidence);
  if (o.rank_report.empty()) {
    std::fprintf(stderr,
                 "denpex-probe: %s was started by no launcher this probe can gather through "
                 "(torchrun sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; MPI launchers "
                 "their PMI/PMIx variables), so it would judge itself alone; run it as "
                 "torchrun ... --no-python denpex-probe or under mpirun/srun --mpi=pmix, or give "
                 "every rank --rank-report DIR/%%j-%%r.json and judge them with denpex-probe "
                 "compare DIR; exiting 2\n",
                 terminal_text(where).c_str());
    return 2;
  }
  return write_task_record(o, where, std::max(0, world.rank));
}

int run_compare(const Options& o) {
  Baseline baseline;
  bool have_baseline = false;
  if (!load_baseline_or_say(o, &baseline, &have_baseline)) return 2;
  SavedJob saved = load_saved_job(o.paths, kMaxRanksWithFullRecords + 1);
  if (saved.status != SavedStatus::ok) {
    std::fprintf(stderr, "denpex-probe: compare: %s\n", terminal_text(saved.error).c_str());
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
