#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <exception>
#include <filesystem>

#include "collect/mpi_plugin_loader.h"
#include "probe/elf_file.h"
#include "probe/loader_arch.h"

using namespace denpex;
namespace fs = std::filesystem;

namespace {

// A real shared library of this machine (libstdc++, which this test links): the loader model
// reads its headers only. Not this test program: ld.so refuses a PIE executable as a library, and
// so does the model.
std::string a_shared_library() {
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&std::get_terminate), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  return info.dli_fname;
}

// This machine's multiarch library directory: usr/lib/x86_64-linux-gnu, usr/lib/aarch64-linux-gnu
// (the suite also runs cross-built for aarch64, .ci/aarch64.sh).
std::string lib_dir() { return "usr/lib/" + loader_arch_for(host_machine()).triplet; }

// An image-like root with the given libraries in /usr/lib/<multiarch>.
struct Root {
  fs::path dir;
  explicit Root(std::initializer_list<const char*> libs) {
    std::string tmpl = (fs::temp_directory_path() / "denpex-mpi-root.XXXXXX").string();
    dir = ::mkdtemp(&tmpl[0]);
    fs::create_directories(dir / lib_dir());
    fs::create_directories(dir / "etc");
    const std::string lib = a_shared_library();
    for (const char* l : libs) fs::copy_file(lib, dir / lib_dir() / l);
  }
  ~Root() { fs::remove_all(dir); }
  LoaderEnv env(const std::string& ld_library_path = "") const {
    FsView v;
    v.root = dir.string();
    return make_loader_env(v, "", ld_library_path);
  }
};

}  // namespace

TEST_CASE("the launcher decides which MPI ABI is tried first") {
  CHECK(mpi_abi_order(Launcher::open_mpi, "auto") == std::vector<MpiAbi>{MpiAbi::open_mpi});
  CHECK(mpi_abi_order(Launcher::hydra, "auto") ==
        std::vector<MpiAbi>{MpiAbi::mpich, MpiAbi::open_mpi});
  CHECK(mpi_abi_order(Launcher::pmi, "") == std::vector<MpiAbi>{MpiAbi::mpich, MpiAbi::open_mpi});
  CHECK(mpi_abi_order(Launcher::pmix, "auto") ==
        std::vector<MpiAbi>{MpiAbi::open_mpi, MpiAbi::mpich});
  CHECK(mpi_abi_order(Launcher::hydra, "open-mpi") == std::vector<MpiAbi>{MpiAbi::open_mpi});
}

TEST_CASE("the MPI whose library the environment resolves, in the loader's order") {
  SECTION("Debian's mpich: libmpich.so.12 under hydra") {
    Root root({"libmpich.so.12", "libmpi.so.40"});
    MpiChoice c = choose_mpi(root.env(), mpi_abi_order(Launcher::hydra, "auto"));
    REQUIRE(c.status == MpiChoiceStatus::found);
    CHECK(c.abi == MpiAbi::mpich);
    CHECK(c.soname == "libmpich.so.12");
    CHECK(c.library == "/" + lib_dir() + "/libmpich.so.12");
  }
  SECTION("both installed, srun --mpi=pmix: Open MPI") {
    Root root({"libmpich.so.12", "libmpi.so.40"});
    MpiChoice c = choose_mpi(root.env(), mpi_abi_order(Launcher::pmix, "auto"));
    REQUIRE(c.status == MpiChoiceStatus::found);
    CHECK(c.abi == MpiAbi::open_mpi);
  }
  SECTION("only Open MPI installed, hydra launcher: Open MPI is what resolves") {
    Root root({"libmpi.so.40"});
    MpiChoice c = choose_mpi(root.env(), mpi_abi_order(Launcher::hydra, "auto"));
    REQUIRE(c.status == MpiChoiceStatus::found);
    CHECK(c.abi == MpiAbi::open_mpi);
  }
  SECTION("an MPI module on LD_LIBRARY_PATH wins over the system's") {
    Root root({"libmpich.so.12"});
    fs::create_directories(root.dir / "opt/intel/mpi/lib");
    fs::copy_file(a_shared_library(), root.dir / "opt/intel/mpi/lib/libmpi.so.12");
    MpiChoice c = choose_mpi(root.env("/opt/intel/mpi/lib"), {MpiAbi::mpich});
    REQUIRE(c.status == MpiChoiceStatus::found);
    CHECK(c.soname == "libmpi.so.12");
    CHECK(c.library == "/opt/intel/mpi/lib/libmpi.so.12");
    CHECK(c.origin == "LD_LIBRARY_PATH");
  }
  SECTION("none resolves: one line naming what the job needs") {
    Root root({});
    MpiChoice c = choose_mpi(root.env(), mpi_abi_order(Launcher::hydra, "auto"));
    CHECK(c.status == MpiChoiceStatus::no_library);
    CHECK(c.error ==
          "no MPI library resolves in this environment: this job needs MPICH ABI (libmpi.so.12 "
          "or libmpich.so.12) or Open MPI (libmpi.so.40), and none of libmpi.so.12, "
          "libmpich.so.12, libmpi.so.40 is in LD_LIBRARY_PATH, the loader cache or the system "
          "library directories; load the job's MPI (module load, LD_LIBRARY_PATH) before "
          "starting denpex-probe");
    CHECK(c.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("a missing plugin file is named, not loaded") {
  MpiChoice c;
  c.status = MpiChoiceStatus::found;
  c.abi = MpiAbi::mpich;
  c.soname = "libmpi.so.12";
  c.library = "/opt/mpi/lib/libmpi.so.12";
  LoadedTransport t = load_mpi_plugin(c, "/nonexistent/lib/denpex");
  CHECK(t.status == TransportStatus::no_plugin);
  CHECK(t.plugin_path == "/nonexistent/lib/denpex/denpex-mpi-mpich.so");
  CHECK(t.error.find("is not there") != std::string::npos);
  CHECK(t.api == nullptr);
}
