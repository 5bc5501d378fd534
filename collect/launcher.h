// Whether this process was started by an MPI launcher, read from the variables launchers set.
// MPI is initialised only then: `denpex-probe` alone (a Slurm prolog, a quick check) must run on
// a node where no MPI runtime is up, and MPI_Init without a launcher would start a singleton.
#pragma once

#include <map>
#include <string>

namespace denpex {

// open_mpi  mpirun/mpiexec of Open MPI (and prterun of Open MPI 5): OMPI_COMM_WORLD_SIZE
// pmix      a PMIx server without Open MPI's variables: srun --mpi=pmix
// hydra     MPICH's mpiexec.hydra (and Intel MPI's, MVAPICH's): PMI_* plus hydra's own variables
// pmi       a PMI-1/2 server that is not hydra: srun --mpi=pmi2
enum class Launcher { none, open_mpi, pmix, hydra, pmi };

struct LauncherInfo {
  Launcher kind = Launcher::none;
  std::string evidence;       // the variable that decided it, e.g. "OMPI_COMM_WORLD_SIZE"
  int rank_hint = -1;         // the rank the launcher announced (before MPI_Init), -1 if none
  int announced_size = -1;    // the number of ranks the launcher started, -1 if it did not say
  std::string size_evidence;  // the variable that said it, e.g. "PMI_SIZE"
};

// Open MPI (OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK: srun --mpi=pmix, prterun), hydra (PMI_RANK or
// PMI_FD or PMI_PORT with MPI_LOCALNRANKS), PMI-1/2 (the same without hydra's variables: srun
// --mpi=pmi2). Slurm's own SLURM_* variables alone do not count: a Slurm prolog sees them and
// must run alone. The announced size is the launcher's own variable (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE), else SLURM_STEP_NUM_TASKS when srun itself started the ranks (pmix, pmi).
LauncherInfo detect_launcher(const std::map<std::string, std::string>& env);

// Short name of the launcher for messages: "Open MPI's mpirun", "mpiexec.hydra", ...
const char* launcher_name(Launcher kind);

// A task of a Slurm job step that srun started several times (SLURM_STEP_NUM_TASKS > 1 and
// SLURM_PROCID set). A prolog (job variables, no task) and `srun -n 1` are not one.
struct SlurmTask {
  bool multi_task = false;
  int procid = -1;
  int ntasks = 0;
  std::string step;   // "JOBID.STEPID", "" when Slurm did not say
};

SlurmTask detect_slurm_task(const std::map<std::string, std::string>& env);

}  // namespace denpex
