// Whether this process was started by an MPI launcher, read from the variables launchers set.
// MPI is initialised only then: `denpex-probe` alone (a Slurm prolog, a quick check) must run on
// a node where no MPI runtime is up, and MPI_Init without a launcher would start a singleton.
#pragma once

#include <map>
#include <string>

namespace denpex {

enum class Launcher { none, open_mpi, pmix, pmi };

struct LauncherInfo {
  Launcher kind = Launcher::none;
  std::string evidence;   // the variable that decided it, e.g. "OMPI_COMM_WORLD_SIZE"
  int rank_hint = -1;     // the rank the launcher announced (before MPI_Init), -1 if none
};

// Open MPI (OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK: srun --mpi=pmix, prterun), PMI-1/2
// (PMI_RANK, PMI_FD: srun --mpi=pmi2, MPICH hydra). Slurm's own SLURM_* variables alone do not
// count: a Slurm prolog sees them and must run alone.
LauncherInfo detect_launcher(const std::map<std::string, std::string>& env);

}  // namespace denpex
