#include "collect/launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace denpex {

namespace {

// A non-negative decimal integer, or -1.
int parse_count(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return -1;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (!end || *end != '\0' || v < 0 || v > 0x7fffffff) return -1;
  return static_cast<int>(v);
}

bool has(const std::map<std::string, std::string>& env, const char* name) {
  return env.count(name) != 0;
}

}  // namespace

LauncherInfo detect_launcher(const std::map<std::string, std::string>& env) {
  // Hydra's proxy sets MPI_LOCALNRANKS for every rank it starts; PMI_PORT is its port mode.
  const bool hydra = has(env, "MPI_LOCALNRANKS") || has(env, "PMI_PORT");
  struct Rule { const char* variable; Launcher kind; const char* rank_variable; };
  const Rule rules[] = {
      {"OMPI_COMM_WORLD_SIZE", Launcher::open_mpi, "OMPI_COMM_WORLD_RANK"},
      {"PMIX_RANK", Launcher::pmix, "PMIX_RANK"},
      {"PMI_RANK", hydra ? Launcher::hydra : Launcher::pmi, "PMI_RANK"},
      {"PMI_FD", hydra ? Launcher::hydra : Launcher::pmi, "PMI_RANK"},
      {"PMI_PORT", Launcher::hydra, "PMI_RANK"},
  };
  LauncherInfo info;
  for (const auto& r : rules) {
    if (!has(env, r.variable)) continue;
    info.kind = r.kind;
    info.evidence = r.variable;
    info.rank_hint = parse_count(env, r.rank_variable);
    info.rank_variable = r.rank_variable;
    break;
  }
  if (info.kind == Launcher::none) return info;
  // The launcher's own count first: under mpirun or hydra inside a Slurm allocation, the ranks
  // inherit SLURM_STEP_NUM_TASKS of the daemons' step (one per node), not the job's size.
  const char* size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
  for (const char* v : size_vars) {
    int n = parse_count(env, v);
    if (n > 0) {
      info.announced_size = n;
      info.size_evidence = v;
      return info;
    }
  }
  if ((info.kind == Launcher::pmix || info.kind == Launcher::pmi) && has(env, "SLURM_PROCID")) {
    int n = parse_count(env, "SLURM_STEP_NUM_TASKS");
    if (n > 0) {
      info.announced_size = n;
      info.size_evidence = "SLURM_STEP_NUM_TASKS";
    }
  }
  return info;
}

const char* launcher_name(Launcher kind) {
  switch (kind) {
    case Launcher::none: return "no launcher";
    case Launcher::open_mpi: return "Open MPI's mpirun";
    case Launcher::pmix: return "a PMIx launcher (srun --mpi=pmix)";
    case Launcher::hydra: return "mpiexec.hydra";
    case Launcher::pmi: return "a PMI launcher (srun --mpi=pmi2)";
  }
  return "?";
}

SlurmTask detect_slurm_task(const std::map<std::string, std::string>& env) {
  SlurmTask t;
  t.procid = parse_count(env, "SLURM_PROCID");
  t.ntasks = parse_count(env, "SLURM_STEP_NUM_TASKS");
  t.multi_task = t.procid >= 0 && t.ntasks > 1;
  auto job = env.find("SLURM_JOB_ID");
  auto step = env.find("SLURM_STEP_ID");
  if (job != env.end() && step != env.end()) t.step = job->second + "." + step->second;
  return t;
}

namespace {

std::string value_of(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

TorchrunWorker detect_torchrun(const std::map<std::string, std::string>& env) {
  TorchrunWorker w;
  const char* needed[] = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  for (const char* v : needed)
    if (!has(env, v)) return w;
  w.present = true;
  w.rank = parse_count(env, "RANK");
  w.world_size = parse_count(env, "WORLD_SIZE");
  w.master_port = parse_count(env, "MASTER_PORT");
  w.master_addr = value_of(env, "MASTER_ADDR");
  w.local_rank = parse_count(env, "LOCAL_RANK");
  w.group_rank = parse_count(env, "GROUP_RANK");
  w.restart_count = std::max(0, parse_count(env, "TORCHELASTIC_RESTART_COUNT"));
  w.run_id = value_of(env, "TORCHELASTIC_RUN_ID");
  w.agent_store = value_of(env, "TORCHELASTIC_USE_AGENT_STORE");
  auto bad = [&](const char* name, const char* what) {
    return std::string(name) + "=" + value_of(env, name).substr(0, 64) + " is not " + what;
  };
  if (w.world_size <= 0) w.error = bad("WORLD_SIZE", "a positive number of ranks");
  else if (w.rank < 0 || w.rank >= w.world_size) w.error = bad("RANK", "a rank below WORLD_SIZE");
  else if (w.master_port <= 0 || w.master_port > 65535) w.error = bad("MASTER_PORT", "a TCP port");
  else if (w.master_addr.empty() || w.master_addr.size() > 255)
    w.error = bad("MASTER_ADDR", "a host name or address");
  return w;
}

AnnouncedWorld announced_world(const std::map<std::string, std::string>& env) {
  struct Pair { const char* size; const char* rank; };
  // LOCAL_WORLD_SIZE last: torchrun's workers on one node, a floor for the world.
  const Pair pairs[] = {
      {"WORLD_SIZE", "RANK"},
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
      {"PMI_SIZE", "PMI_RANK"},
      {"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
      {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
      {"FLUX_JOB_SIZE", "FLUX_TASK_RANK"},
      {"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"},
      {"HOROVOD_SIZE", "HOROVOD_RANK"},
      {"LOCAL_WORLD_SIZE", "LOCAL_RANK"},
  };
  AnnouncedWorld w;
  for (const auto& p : pairs) {
    int n = parse_count(env, p.size);
    if (n <= 0) continue;
    w.size = n;
    w.size_evidence = std::string(p.size) + "=" + std::to_string(n);
    w.rank = parse_count(env, p.rank);
    w.at_least = std::string(p.size) == "LOCAL_WORLD_SIZE";
    if (n > 1) return w;   // the first that announces more than one rank decides
  }
  // A launcher that names only the rank (PMIx, Cray PALS and ALPS, a PMI without PMI_SIZE): any
  // rank above 0 means a world of more than one.
  const char* ranks[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "PALS_RANKID",
                         "ALPS_APP_PE", "MV2_COMM_WORLD_RANK", "SLURM_PROCID", "FLUX_TASK_RANK",
                         "JSM_NAMESPACE_RANK", "HOROVOD_RANK", "LOCAL_RANK"};
  for (const char* v : ranks) {
    int r = parse_count(env, v);
    if (r <= 0) continue;
    w.size = r + 1;
    w.rank = r;
    w.at_least = true;
    w.size_evidence = std::string(v) + "=" + std::to_string(r);
    return w;
  }
  return w;
}

std::string job_id(const std::map<std::string, std::string>& env) {
  std::string slurm = value_of(env, "SLURM_JOB_ID");
  if (!slurm.empty()) {
    std::string step = value_of(env, "SLURM_STEP_ID");
    return step.empty() ? slurm : slurm + "." + step;
  }
  std::string run = value_of(env, "TORCHELASTIC_RUN_ID");
  if (!run.empty()) {
    int restart = parse_count(env, "TORCHELASTIC_RESTART_COUNT");
    return restart > 0 ? run + ".r" + std::to_string(restart) : run;
  }
  for (const char* v : {"PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", "JOB_ID"}) {
    std::string id = value_of(env, v);
    if (!id.empty()) return id;
  }
  return "";
}

std::string run_identity(const std::map<std::string, std::string>& env) {
  if (has(env, "SLURM_JOB_ID") && has(env, "SLURM_STEP_ID"))
    return "slurm:" + value_of(env, "SLURM_JOB_ID") + "." + value_of(env, "SLURM_STEP_ID");
  // MASTER_PORT too: the default run id ("none") repeats across separate torchrun runs.
  if (has(env, "TORCHELASTIC_RUN_ID"))
    return "torchrun:" + value_of(env, "TORCHELASTIC_RUN_ID") + ":" +
           value_of(env, "TORCHELASTIC_RESTART_COUNT") + ":" + value_of(env, "MASTER_ADDR") +
           ":" + value_of(env, "MASTER_PORT");
  if (has(env, "PMIX_NAMESPACE")) return "pmix:" + value_of(env, "PMIX_NAMESPACE");
  if (has(env, "OMPI_MCA_ess_base_jobid")) return "ompi:" + value_of(env, "OMPI_MCA_ess_base_jobid");
  // Hydra names no job: the ranks one proxy started on a host share that proxy.
  if (has(env, "PMI_RANK") && has(env, "MPI_LOCALNRANKS"))
    return "hydra-proxy:" + std::to_string(static_cast<long>(::getppid()));
  if (has(env, "MASTER_ADDR") && has(env, "MASTER_PORT") && has(env, "WORLD_SIZE"))
    return "env:" + value_of(env, "MASTER_ADDR") + ":" + value_of(env, "MASTER_PORT");
  return "";
}

}  // namespace denpex
