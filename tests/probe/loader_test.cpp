// The resolver against the real loader: for each layout, what resolve_library names must be
// what dlopen("libnccl.so.2") in a child with that environment really maps.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include "probe/isolated_call.h"
#include "probe/loader.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

// What the real loader maps for `what` in a child process. ld.so reads LD_LIBRARY_PATH once at
// process start, so only layouts that do not depend on it (the cache, explicit paths) can be
// checked against dlopen here; the LD_LIBRARY_PATH/RPATH order is checked against a fresh
// process in tests/integration.
std::string loaded_by_dlopen(const std::string& what) {
  IsolatedResult r = run_isolated(
      [&]() -> std::string {
        void* h = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) return "";
        link_map* lm = nullptr;
        ::dlinfo(h, RTLD_DI_LINKMAP, &lm);
        char* real = ::realpath(lm->l_name, nullptr);
        std::string s = real ? real : "";
        std::free(real);
        return s;
      },
      10.0);
  return r.output;
}

}  // namespace

TEST_CASE("with no overrides the resolver and the real loader agree on libnccl.so.2", "[real-nccl]") {
  REQUIRE_FALSE(real_nccl().empty());  // run only where the loader cache has one (tests/run_catch.sh)
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  Resolution r = resolve_library(env, "libnccl.so.2", Requester{});
  REQUIRE(r.status == LoadStatus::found);
  CHECK(r.origin == "ld.so.cache");
  CHECK(r.real_path == real_nccl_file());
  CHECK(loaded_by_dlopen("libnccl.so.2") == real_nccl_file());
}

TEST_CASE("LD_LIBRARY_PATH wins over the cache; RPATH wins over LD_LIBRARY_PATH; RUNPATH loses") {
  Scratch s;
  std::string a = s.install_nccl("nccl-2.21.5", "llp");
  std::string b = s.install_nccl("nccl-2.27.3", "wheel/nvidia/nccl/lib");
  s.copy(standin("torch-dyn/libtorch_cuda.so"), "wheel/torch/lib/libtorch_cuda.so");
  LoaderEnv env = make_loader_env(FsView{}, "", s.path("llp"));

  Resolution plain = resolve_library(env, "libnccl.so.2", Requester{});
  REQUIRE(plain.status == LoadStatus::found);
  CHECK(plain.origin == "LD_LIBRARY_PATH");
  CHECK(plain.real_path == s.path("llp/libnccl.so.2.21.5"));

  std::string torch = s.path("wheel/torch/lib/libtorch_cuda.so");
  ElfInfo elf = read_elf(torch, false);
  Resolution via_rpath = resolve_library(env, "libnccl.so.2", Requester{torch, &elf, {}, {}});
  REQUIRE(via_rpath.status == LoadStatus::found);
  CHECK(via_rpath.origin == "rpath");
  CHECK(via_rpath.real_path == s.path("wheel/nvidia/nccl/lib/libnccl.so.2.27.3"));

  ElfInfo runpath = elf;
  runpath.runpath = runpath.rpath;
  runpath.rpath.clear();
  runpath.has_runpath = true;
  Resolution via_runpath = resolve_library(env, "libnccl.so.2", Requester{torch, &runpath, {}, {}});
  CHECK(via_runpath.origin == "LD_LIBRARY_PATH");
  (void)a;
  (void)b;
}

TEST_CASE("LD_PRELOAD of a library with the soname wins over everything") {
  Scratch s;
  std::string pre = s.install_nccl("nccl-2.8.4", "pre");
  LoaderEnv env = make_loader_env(FsView{}, pre, "");
  Resolution r = resolve_library(env, "libnccl.so.2", Requester{});
  REQUIRE(r.status == LoadStatus::found);
  CHECK(r.origin == "LD_PRELOAD");
  CHECK(r.real_path == s.path("pre/libnccl.so.2.8.4"));
}

// An LD_PRELOAD entry without a slash (jobs preload libjemalloc.so.2 this way) must not make
// resolve_library recurse on itself until the stack runs out (SIGSEGV).
TEST_CASE("an LD_PRELOAD entry given by soname is searched once, like a NEEDED entry") {
  LoaderEnv env = make_loader_env(FsView{}, "libm.so.6", "");
  REQUIRE(env.preload.size() == 1);
  CHECK(env.preload[0].found);
  CHECK(env.preload[0].soname == "libm.so.6");
  Resolution r = resolve_library(env, "libm.so.6", Requester{});
  REQUIRE(r.status == LoadStatus::found);
  CHECK(r.origin == "LD_PRELOAD");
  // The real loader maps the same file for that name.
  CHECK(r.real_path == loaded_by_dlopen("libm.so.6"));
  // An entry that names nothing is dropped (ld.so: "cannot be preloaded ... ignored").
  LoaderEnv none = make_loader_env(FsView{}, "libdenpex-no-such.so.9 libm.so.6", "");
  REQUIRE(none.preload.size() == 2);
  CHECK_FALSE(none.preload[0].found);
  CHECK(resolve_library(none, "libdenpex-no-such.so.9", Requester{}).status ==
        LoadStatus::not_found);
  CHECK(resolve_library(none, "libm.so.6", Requester{}).origin == "LD_PRELOAD");
}

TEST_CASE("an NCCL preloaded by soname wins over PyTorch's RPATH") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "llp");
  s.install_nccl("nccl-2.27.3", "wheel/nvidia/nccl/lib");
  s.copy(standin("torch-dyn/libtorch_cuda.so"), "wheel/torch/lib/libtorch_cuda.so");
  std::string torch = s.path("wheel/torch/lib/libtorch_cuda.so");
  ElfInfo elf = read_elf(torch, false);

  LoaderEnv plain = make_loader_env(FsView{}, "", s.path("llp"));
  CHECK(resolve_library(plain, "libnccl.so.2", Requester{torch, &elf, {}, {}}).origin == "rpath");

  LoaderEnv env = make_loader_env(FsView{}, "libnccl.so.2", s.path("llp"));
  REQUIRE(env.preload.size() == 1);
  CHECK(env.preload[0].soname == "libnccl.so.2");
  Resolution r = resolve_library(env, "libnccl.so.2", Requester{torch, &elf, {}, {}});
  REQUIRE(r.status == LoadStatus::found);
  CHECK(r.origin == "LD_PRELOAD");
  CHECK(r.real_path == s.path("llp/libnccl.so.2.21.5"));
}

TEST_CASE("a library for another machine is skipped, a corrupt one stops the search") {
  Scratch s;
  std::string arm = s.copy(standin("nccl-2.21.5/libnccl.so.2.21.5"), "arm/libnccl.so.2");
  {
    std::fstream f(arm, std::ios::in | std::ios::out | std::ios::binary);
    uint16_t other = other_machine();
    f.seekp(18);
    f.write(reinterpret_cast<const char*>(&other), 2);
  }
  s.write("junk/libnccl.so.2", std::string(4096, '\x5a'));
  LoaderEnv env = make_loader_env(FsView{}, "", s.path("arm"));
  env.cache = LdCache{};
  env.system_dirs.clear();
  Resolution r = resolve_library(env, "libnccl.so.2", Requester{});
  CHECK(r.status == LoadStatus::not_found);
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].reason == other_machine_reason());
  // The real loader agrees: it passes the other machine's file over.
  CHECK(loaded_by_dlopen(arm).empty());

  LoaderEnv env2 = make_loader_env(FsView{}, "", s.path("arm") + ":" + s.path("junk"));
  Resolution j = resolve_library(env2, "libnccl.so.2", Requester{});
  CHECK(j.status == LoadStatus::fatal);
  CHECK(j.path == s.path("junk/libnccl.so.2"));
  CHECK(j.error.find("not an ELF") != std::string::npos);
}

TEST_CASE("DSTs expand and LD_LIBRARY_PATH splits like ld.so") {
  CHECK(expand_dst("$ORIGIN/../lib", "/a/b") == "/a/b/../lib");
  CHECK(expand_dst("${ORIGIN}/x", "/o") == "/o/x");
  CHECK(split_library_path("/a::/b") == std::vector<std::string>{"/a", ".", "/b"});
  CHECK(split_preload("/a.so /b.so:/c.so") ==
        std::vector<std::string>{"/a.so", "/b.so", "/c.so"});
}
