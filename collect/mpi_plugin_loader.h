// Which MPI this rank's job uses, and loading the transport plugin built for its ABI. The
// probe links no MPI: only MPI mode loads one, so alone mode, --root, compare, collectives and
// the Slurm prolog run where no MPI library is installed.
//
// The plugins live beside the binary, <dir of /proc/self/exe>/../lib/denpex/ (bin/ and
// lib/denpex/ in an installation, the .deb and the portable tarball; launch/ and lib/denpex/ in
// the build tree):
//   denpex-mpi-open-mpi.so  built against Open MPI's mpi.h: libmpi.so.40 (Open MPI 4 and 5,
//                           HPC-X)
//   denpex-mpi-mpich.so     built against MPICH's mpi.h: the MPICH ABI, libmpi.so.12 (MPICH,
//                           Intel MPI, MVAPICH, Cray MPICH) or Debian's libmpich.so.12
// Neither plugin names its libmpi (no DT_NEEDED): the probe first loads, RTLD_GLOBAL, the libmpi
// this process's environment resolves (probe/loader.h, the loader's own order), so the plugin
// binds to whichever library of that ABI the job's MPI module put first.
#pragma once

#include <string>
#include <vector>

#include "collect/launcher.h"
#include "collect/mpi_plugin/mpi_plugin.h"
#include "probe/loader.h"

namespace denpex {

enum class MpiAbi { open_mpi, mpich };

// "Open MPI (libmpi.so.40)" / "MPICH ABI (libmpi.so.12)" for messages.
const char* mpi_abi_name(MpiAbi abi);
// "open-mpi" / "mpich": the --mpi value and the plugin's file name part.
const char* mpi_abi_id(MpiAbi abi);

// The ABIs to try for a launcher, most likely first: Open MPI's mpirun -> Open MPI only;
// hydra and srun --mpi=pmi2 (PMI-1/2) -> MPICH, then Open MPI; PMIx (srun --mpi=pmix) -> Open
// MPI, then MPICH. `forced` ("open-mpi", "mpich") replaces the list by that one; "auto" or ""
// keeps it.
std::vector<MpiAbi> mpi_abi_order(Launcher kind, const std::string& forced);

// found        `abi`'s library resolves at `library` (the first ABI in `order` that does)
// no_library   none resolves; `error` is the one line naming the sonames tried
enum class MpiChoiceStatus { found, no_library };

struct MpiChoice {
  MpiChoiceStatus status = MpiChoiceStatus::no_library;
  MpiAbi abi = MpiAbi::open_mpi;
  std::string soname;     // "libmpi.so.40"
  std::string library;    // the file the loader would map
  std::string origin;     // "LD_LIBRARY_PATH", "ld.so.cache", ...
  std::string error;
};

// Resolves each ABI's sonames in `env` in the loader's order. Never throws; touches only files.
MpiChoice choose_mpi(const LoaderEnv& env, const std::vector<MpiAbi>& order);

// ok           `api` is ready (MPI_Init not called yet)
// no_plugin    the plugin file for the chosen ABI is not there
// load_failed  dlopen of the library or the plugin failed, or its ABI number differs
enum class TransportStatus { ok, no_plugin, load_failed };

struct LoadedTransport {
  TransportStatus status = TransportStatus::load_failed;
  const denpex_mpi_plugin* api = nullptr;
  std::string plugin_path;
  std::string error;       // one line
};

// The directory holding the plugins: <dir of /proc/self/exe>/../lib/<multiarch>/denpex when it
// exists (the .deb), else <dir of /proc/self/exe>/../lib/denpex (the build tree, the portable
// tarball). "" when /proc/self/exe cannot be read.
std::string plugin_directory();

// dlopens `choice.library` (RTLD_GLOBAL), then <dir>/denpex-mpi-<abi>.so, and checks its ABI
// number. The handles stay open for the life of the process (MPI cannot be unloaded).
LoadedTransport load_mpi_plugin(const MpiChoice& choice, const std::string& dir);

}  // namespace denpex
