#include "collect/launcher.h"

#include <cstdlib>

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

}  // namespace denpex
