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
  std::string rank_variable;  // the variable that said it, e.g. "PMIX_RANK"
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

// A worker that torchrun (torch.distributed.run's elastic agent) started: RANK, WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT all set, as the env:// rendezvous reads them. `present` when all
// four are there; `error` names a variable that is there but malformed.
struct TorchrunWorker {
  bool present = false;
  int rank = -1;
  int world_size = -1;
  int local_rank = -1;        // LOCAL_RANK, -1 when unset
  int group_rank = -1;        // GROUP_RANK (the agent's, i.e. the node's rank), -1 when unset
  int restart_count = 0;      // TORCHELASTIC_RESTART_COUNT
  std::string master_addr;
  int master_port = -1;
  std::string run_id;         // TORCHELASTIC_RUN_ID, "" when not started by torchelastic
  // TORCHELASTIC_USE_AGENT_STORE: "True" when the agent serves MASTER_ADDR:MASTER_PORT
  // (torch >= 2.4, and the static rendezvous of older ones); "False" when rank 0's own process
  // was meant to (torch <= 2.3 with the c10d rendezvous); "" unset (not torchelastic).
  std::string agent_store;
  std::string error;
};

TorchrunWorker detect_torchrun(const std::map<std::string, std::string>& env);

// The world any launcher's variables announce, whoever started this process: WORLD_SIZE
// (torchrun, accelerate, DeepSpeed, Kubeflow's PyTorchJob), OMPI_COMM_WORLD_SIZE, PMI_SIZE,
// MV2_COMM_WORLD_SIZE, SLURM_STEP_NUM_TASKS (a task of an srun step), FLUX_JOB_SIZE (flux run),
// JSM_NAMESPACE_SIZE (jsrun), HOROVOD_SIZE (horovodrun's gloo mode), LOCAL_WORLD_SIZE (the
// node's share, a floor); failing those, a rank variable above 0 (RANK, PMIX_RANK, PALS_RANKID,
// ALPS_APP_PE, SLURM_PROCID, ...) announces at least rank + 1. size -1 when none says; rank
// from the matching rank variable, -1 unset.
struct AnnouncedWorld {
  int size = -1;
  std::string size_evidence;   // "WORLD_SIZE=16", "PMIX_RANK=3"
  int rank = -1;
  bool at_least = false;       // size is a floor (LOCAL_WORLD_SIZE, or read from a rank)
};

AnnouncedWorld announced_world(const std::map<std::string, std::string>& env);

// The job's id for --rank-report's %j: SLURM_JOB_ID (with .SLURM_STEP_ID when set), else
// TORCHELASTIC_RUN_ID (with .rN past the first restart), else PBS_JOBID, LSB_JOBID, FLUX_JOB_ID, JOB_ID;
// "" when none is set.
std::string job_id(const std::map<std::string, std::string>& env);

// What tells this run apart from another: two processes with the same non-empty identity are
// one run (a Slurm step, one torchrun attempt, one mpirun). "" when nothing says.
std::string run_identity(const std::map<std::string, std::string>& env);

}  // namespace denpex
