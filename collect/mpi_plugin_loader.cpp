#include "collect/mpi_plugin_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include <fmt/format.h>

namespace denpex {

namespace {

std::vector<std::string> sonames_of(MpiAbi abi) {
  // Debian and Ubuntu rename MPICH's libmpi.so.12 to libmpich.so.12; the ABI is the same.
  if (abi == MpiAbi::mpich) return {"libmpi.so.12", "libmpich.so.12"};
  return {"libmpi.so.40"};
}

}  // namespace

const char* mpi_abi_name(MpiAbi abi) {
  return abi == MpiAbi::mpich ? "MPICH ABI (libmpi.so.12 or libmpich.so.12)"
                              : "Open MPI (libmpi.so.40)";
}

const char* mpi_abi_id(MpiAbi abi) { return abi == MpiAbi::mpich ? "mpich" : "open-mpi"; }

std::vector<MpiAbi> mpi_abi_order(Launcher kind, const std::string& forced) {
  if (forced == "open-mpi") return {MpiAbi::open_mpi};
  if (forced == "mpich") return {MpiAbi::mpich};
  switch (kind) {
    case Launcher::open_mpi: return {MpiAbi::open_mpi};
    case Launcher::hydra:
    case Launcher::pmi: return {MpiAbi::mpich, MpiAbi::open_mpi};
    case Launcher::pmix:
    case Launcher::none: break;
  }
  return {MpiAbi::open_mpi, MpiAbi::mpich};
}

MpiChoice choose_mpi(const LoaderEnv& env, const std::vector<MpiAbi>& order) {
  MpiChoice c;
  std::string tried;
  for (MpiAbi abi : order) {
    for (const std::string& soname : sonames_of(abi)) {
      Resolution r = resolve_library(env, soname, Requester{});
      if (r.status == LoadStatus::found) {
        c.status = MpiChoiceStatus::found;
        c.abi = abi;
        c.soname = soname;
        c.library = r.path;
        c.origin = r.origin;
        return c;
      }
      tried += (tried.empty() ? "" : ", ") + soname;
      if (r.status == LoadStatus::fatal) tried += fmt::format(" ({})", r.error);
    }
  }
  std::string names;
  for (MpiAbi abi : order) names += std::string(names.empty() ? "" : " or ") + mpi_abi_name(abi);
  c.error = fmt::format(
      "no MPI library resolves in this environment: this job needs {}, and none of {} is in "
      "LD_LIBRARY_PATH, the loader cache or the system library directories; load the job's MPI "
      "(module load, LD_LIBRARY_PATH) before starting denpex-probe",
      names, tried);
  return c;
}

std::string plugin_directory() {
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  std::string path(exe, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  // Named without "bin/.." in messages.
  std::string up = path.substr(0, slash) + "/..";
  char real[PATH_MAX];
  const std::string prefix = ::realpath(up.c_str(), real) ? std::string(real) : up;
  // Installed (the .deb): lib/<multiarch>/denpex, a private directory under which nothing is a
  // loader directory, so the package needs no ldconfig call. The build tree and the portable
  // tarball: lib/denpex. DENPEX_PLUGIN_INSTALL_SUBDIR comes from collect/CMakeLists.txt.
  const std::string installed = prefix + "/" + DENPEX_PLUGIN_INSTALL_SUBDIR;
  struct stat st {};
  if (::stat(installed.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return installed;
  return prefix + "/lib/denpex";
}

LoadedTransport load_mpi_plugin(const MpiChoice& choice, const std::string& dir) {
  LoadedTransport out;
  out.plugin_path = fmt::format("{}/denpex-mpi-{}.so", dir, mpi_abi_id(choice.abi));
  if (::access(out.plugin_path.c_str(), R_OK) != 0) {
    out.status = TransportStatus::no_plugin;
    out.error = fmt::format(
        "{} resolves to {} and its transport plugin {} is not there (this denpex-probe was "
        "built or installed without {} headers)",
        choice.soname, choice.library, out.plugin_path, mpi_abi_name(choice.abi));
    return out;
  }
  // RTLD_GLOBAL: the plugin's MPI_* references bind to this library, and Open MPI's own
  // components, which it dlopens during MPI_Init, find its symbols.
  if (!::dlopen(choice.library.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* e = ::dlerror();
    out.error = fmt::format("loading {} failed: {}", choice.library, e ? e : "unknown error");
    return out;
  }
  void* h = ::dlopen(out.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    out.error = fmt::format("loading {} failed: {}", out.plugin_path, e ? e : "unknown error");
    return out;
  }
  auto entry = reinterpret_cast<denpex_mpi_plugin_entry>(::dlsym(h, DENPEX_MPI_PLUGIN_ENTRY));
  const denpex_mpi_plugin* api = entry ? entry() : nullptr;
  if (!api || api->abi != DENPEX_MPI_PLUGIN_ABI) {
    out.error = fmt::format("{} is not a denpex-probe {} transport plugin of ABI {}",
                            out.plugin_path, mpi_abi_id(choice.abi), DENPEX_MPI_PLUGIN_ABI);
    return out;
  }
  out.status = TransportStatus::ok;
  out.api = api;
  return out;
}

}  // namespace denpex
