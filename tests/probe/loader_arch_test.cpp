// The loader's per-machine rules and the image's architecture.
#include <catch2/catch.hpp>

#include <elf.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "probe/ld_cache.h"
#include "probe/loader.h"
#include "probe/loader_arch.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

// The directories the real ld.so names as its "system search path" in `ld.so --help`.
std::vector<std::string> ldso_help_dirs(const std::string& ldso) {
  std::vector<std::string> out;
  FILE* p = ::popen((ldso + " --help 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string s(line);
    auto tag = s.find(" (system search path)");
    if (tag == std::string::npos) continue;
    auto b = s.find('/');
    if (b != std::string::npos && b < tag) out.push_back(s.substr(b, tag - b));
  }
  ::pclose(p);
  return out;
}

void copy_file(const std::string& from, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace

TEST_CASE("the system directories are read from this machine's ld.so as ld.so --help lists them") {
  LoaderArch arch = loader_arch_for(host_machine());
  std::string ldso;
  for (const auto& p : arch.ldso_paths)
    if (ldso.empty() && fs::exists(p)) ldso = p;
  REQUIRE(!ldso.empty());
  std::vector<std::string> help = ldso_help_dirs(ldso);
  REQUIRE(!help.empty());
  CHECK(ldso_builtin_dirs(ldso) == help);
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  CHECK(env.system_dirs == help);
  CHECK(env.system_dirs_from == ldso);
}

TEST_CASE("Debian's arm64 ld.so gives the aarch64 multiarch directories and $LIB") {
  REQUIRE(fs::exists(DENPEX_AARCH64_LDSO));
  CHECK(ldso_builtin_dirs(DENPEX_AARCH64_LDSO) ==
        std::vector<std::string>{"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib",
                                 "/usr/lib"});
  Scratch s;
  copy_file(DENPEX_AARCH64_LDSO, s.path("img/lib/ld-linux-aarch64.so.1"));
  TreeArch t = decide_tree_arch(FsView{s.path("img")}, "");
  REQUIRE(t.status == TreeArchStatus::ok);
  CHECK(t.machine == EM_AARCH64);
  CHECK(t.source == "/lib/ld-linux-aarch64.so.1");
  LoaderEnv env = make_loader_env(FsView{s.path("img")}, "", "");  // machine from the tree
  CHECK(env.machine == EM_AARCH64);
  CHECK(env.arch.cache_flags == 0x0a03u);
  CHECK(env.dst_lib == "lib/aarch64-linux-gnu");
  CHECK(env.system_dirs_from == "/lib/ld-linux-aarch64.so.1");
  CHECK(expand_dst("/opt/$LIB/$PLATFORM", "", env.dst_lib, env.arch.platform) ==
        "/opt/lib/aarch64-linux-gnu/aarch64");
  // Debian's loader does not search lib64.
  for (const auto& d : env.system_dirs) CHECK(d.find("lib64") == std::string::npos);
}

TEST_CASE("a RHEL-style ld.so searches lib64, and $LIB is lib64") {
  Scratch s;
  std::string body(64, 'x');
  body += std::string("\0/lib64/\0/usr/lib64/\0", 22) + std::string(64, '\0');
  write_file(s.path("img/lib64/ld-linux-x86-64.so.2"), body);
  LoaderEnv env = make_loader_env(FsView{s.path("img")}, "", "", EM_X86_64);
  CHECK(env.system_dirs == std::vector<std::string>{"/lib64", "/usr/lib64"});
  CHECK(env.dst_lib == "lib64");
  CHECK(expand_dst("$ORIGIN/x:${LIB}", "/o", env.dst_lib, env.arch.platform) == "/o/x:lib64");
}

TEST_CASE("without a readable ld.so the layout decides the default system directories") {
  Scratch s;
  fs::create_directories(s.path("deb/usr/lib/aarch64-linux-gnu"));
  SystemDirs deb = system_dirs_for(FsView{s.path("deb")}, loader_arch_for(EM_AARCH64));
  CHECK(deb.dirs == std::vector<std::string>{"/lib/aarch64-linux-gnu",
                                             "/usr/lib/aarch64-linux-gnu", "/lib", "/usr/lib"});
  CHECK(deb.from.find("default for aarch64") == 0);
  fs::create_directories(s.path("rhel/usr/lib64"));
  SystemDirs rhel = system_dirs_for(FsView{s.path("rhel")}, loader_arch_for(EM_AARCH64));
  CHECK(rhel.dirs == std::vector<std::string>{"/lib64", "/usr/lib64"});
  CHECK(rhel.dst_lib == "lib64");
}

TEST_CASE("cache entries apply only with the target machine's flags") {
  LdCache c;
  c.status = LdCacheStatus::ok;
  c.entries = {{"libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2", 0x0303, ""},
               {"libnccl.so.2", "/usr/lib/aarch64-linux-gnu/libnccl.so.2", 0x0a03, ""}};
  REQUIRE(find_in_cache(c, "libnccl.so.2", loader_arch_for(EM_AARCH64).cache_flags));
  CHECK(find_in_cache(c, "libnccl.so.2", 0x0a03)->path == "/usr/lib/aarch64-linux-gnu/libnccl.so.2");
  CHECK(find_in_cache(c, "libnccl.so.2", 0x0303)->path == "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  CHECK(find_in_cache(c, "libnccl.so.2", 0x0503) == nullptr);  // ppc64le: neither
}

TEST_CASE("the image's architecture: --arch, /bin/sh, contradictions, unknown machines") {
  CHECK(machine_for_arch_name("arm64") == EM_AARCH64);
  CHECK(machine_for_arch_name("aarch64") == EM_AARCH64);
  CHECK(machine_for_arch_name("amd64") == EM_X86_64);
  CHECK(machine_for_arch_name("riscv64") == 0);
  Scratch s;
  fs::create_directories(s.path("empty"));
  TreeArch empty = decide_tree_arch(FsView{s.path("empty")}, "");
  CHECK(empty.status == TreeArchStatus::unknown);
  CHECK(empty.error.find("pass --arch") != std::string::npos);
  TreeArch declared = decide_tree_arch(FsView{s.path("empty")}, "arm64");
  CHECK(declared.status == TreeArchStatus::ok);
  CHECK(declared.machine == EM_AARCH64);
  CHECK(declared.source == "--arch");
  CHECK(decide_tree_arch(FsView{s.path("empty")}, "sparc").status == TreeArchStatus::bad_name);

  copy_file(DENPEX_AARCH64_LDSO, s.path("sh/bin/sh"));
  TreeArch sh = decide_tree_arch(FsView{s.path("sh")}, "");
  CHECK(sh.status == TreeArchStatus::ok);
  CHECK(sh.source == "/bin/sh");
  TreeArch lie = decide_tree_arch(FsView{s.path("sh")}, "amd64");
  CHECK(lie.status == TreeArchStatus::conflict);
  CHECK(lie.error.find("/bin/sh is built for aarch64") != std::string::npos);

  // A riscv64 /bin/sh: no rules for it, and no pretending it is x86_64.
  copy_file(DENPEX_AARCH64_LDSO, s.path("rv/bin/sh"));
  {
    std::fstream f(s.path("rv/bin/sh"), std::ios::in | std::ios::out | std::ios::binary);
    const uint16_t rv = EM_RISCV;
    f.seekp(18);
    f.write(reinterpret_cast<const char*>(&rv), 2);
  }
  TreeArch rvt = decide_tree_arch(FsView{s.path("rv")}, "");
  CHECK(rvt.status == TreeArchStatus::unsupported);
  CHECK(rvt.error.find("riscv64") != std::string::npos);
}

TEST_CASE("the loader chain's RPATH: conda's python $ORIGIN/../lib beats LD_LIBRARY_PATH") {
  Scratch s;
  const std::string conda = s.path("conda");
  const std::string torch = conda + "/lib/python3.11/site-packages/torch";
  // conda's nccl package next to python's lib; another NCCL on LD_LIBRARY_PATH.
  copy_file(standin("nccl-2.21.5/libnccl.so.2"), conda + "/lib/libnccl.so.2");
  copy_file(standin("nccl-2.27.3/libnccl.so.2"), s.path("llp/libnccl.so.2"));
  fs::create_directories(conda + "/bin");  // $ORIGIN/../lib goes through it
  fs::create_directories(torch + "/lib");
  ElfInfo python, c_ext, torch_python, torch_cuda;
  python.rpath = {"$ORIGIN/../lib"};
  c_ext.rpath = {"$ORIGIN/lib"};
  torch_python.rpath = {"$ORIGIN"};
  torch_cuda.rpath = {"$ORIGIN"};  // holds no NCCL
  LoaderEnv env = make_loader_env(FsView{}, "", s.path("llp"));
  Requester rq{torch + "/lib/libtorch_cuda.so", &torch_cuda,
               {{torch + "/lib/libtorch_python.so", &torch_python},
                {torch + "/_C.cpython-311-x86_64-linux-gnu.so", &c_ext},
                {conda + "/bin/python3.11", &python}},
               {}};
  Resolution r = resolve_library(env, "libnccl.so.2", rq);
  CHECK(r.status == LoadStatus::found);
  CHECK(r.path == conda + "/bin/../lib/libnccl.so.2");
  CHECK(r.origin == "rpath-of-loader");

  // Without the chain (what the probe modelled before): LD_LIBRARY_PATH.
  Resolution alone = resolve_library(env, "libnccl.so.2", Requester{rq.path, &torch_cuda, {}, {}});
  CHECK(alone.path == s.path("llp/libnccl.so.2"));

  // A requester with DT_RUNPATH: no RPATH of its own or of its loaders applies.
  ElfInfo runpath_cuda = torch_cuda;
  runpath_cuda.has_runpath = true;
  runpath_cuda.runpath = {"$ORIGIN"};
  Requester rq2 = rq;
  rq2.elf = &runpath_cuda;
  CHECK(resolve_library(env, "libnccl.so.2", rq2).path == s.path("llp/libnccl.so.2"));

  // A loader in the chain with DT_RUNPATH contributes nothing (glibc drops its DT_RPATH); the
  // ones above it still do.
  ElfInfo python_runpath = python;
  python_runpath.has_runpath = true;
  Requester rq3 = rq;
  rq3.loaders.back().elf = &python_runpath;
  CHECK(resolve_library(env, "libnccl.so.2", rq3).path == s.path("llp/libnccl.so.2"));
}

TEST_CASE("$ORIGIN of a requester reached through a symlink is the symlink's directory") {
  Scratch s;
  // site/torch/lib/libtorch_cuda.so -> /store/libtorch_cuda.so; RPATH $ORIGIN/../../nvidia/...
  copy_file(standin("nccl-2.27.3/libnccl.so.2"), s.path("site/nvidia/nccl/lib/libnccl.so.2"));
  copy_file(standin("torch-dyn/libtorch_cuda.so"), s.path("store/libtorch_cuda.so"));
  fs::create_directories(s.path("site/torch/lib"));
  fs::create_symlink(s.path("store/libtorch_cuda.so"), s.path("site/torch/lib/libtorch_cuda.so"));
  ElfInfo elf = read_elf(s.path("store/libtorch_cuda.so"), false);
  REQUIRE(elf.rpath == std::vector<std::string>{"$ORIGIN/../../nvidia/nccl/lib"});
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  Resolution via_link =
      resolve_library(env, "libnccl.so.2", Requester{s.path("site/torch/lib/libtorch_cuda.so"), &elf, {}, {}});
  CHECK(via_link.status == LoadStatus::found);
  CHECK(via_link.origin == "rpath");
  CHECK(via_link.real_path == s.path("site/nvidia/nccl/lib/libnccl.so.2"));
}

namespace {

// A copy of a stand-in NCCL at `to` with `len` bytes at `offset` replaced.
void patched_nccl(const std::string& to, long offset, const void* bytes, size_t len) {
  copy_file(standin("nccl-2.27.3/libnccl.so.2"), to);
  std::fstream f(to, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(len));
}

}  // namespace

TEST_CASE("files ld.so refuses stop the search: byte order, OS ABI, executables") {
  Scratch s;
  copy_file(standin("nccl-2.21.5/libnccl.so.2"), s.path("good/libnccl.so.2"));
  const uint8_t big = ELFDATA2MSB, freebsd = ELFOSABI_FREEBSD;
  const uint16_t exec = ET_EXEC;
  patched_nccl(s.path("be/libnccl.so.2"), EI_DATA, &big, 1);
  patched_nccl(s.path("abi/libnccl.so.2"), EI_OSABI, &freebsd, 1);
  patched_nccl(s.path("exec/libnccl.so.2"), 16, &exec, 2);
  // A position-independent executable of this system (DF_1_PIE), named like a library.
  ElfInfo sh = read_elf("/bin/sh", false);
  const bool have_pie = sh.status == ElfStatus::ok && (sh.flags_1 & DF_1_PIE);
  if (have_pie) copy_file(fs::canonical("/bin/sh").string(), s.path("pie/libnccl.so.2"));
  struct Case {
    const char* dir;
    const char* error;
  };
  std::vector<Case> cases = {{"be", "ELF file data encoding not little-endian"},
                             {"abi", "ELF file OS ABI invalid"},
                             {"exec", "cannot dynamically load executable"}};
  if (have_pie) cases.push_back({"pie", "cannot dynamically load position-independent executable"});
  for (const auto& c : cases) {
    INFO(c.dir);
    LoaderEnv env = make_loader_env(FsView{}, "", s.path(c.dir) + ":" + s.path("good"));
    Resolution r = resolve_library(env, "libnccl.so.2", Requester{});
    CHECK(r.status == LoadStatus::fatal);
    CHECK(r.path == s.path(c.dir) + "/libnccl.so.2");
    CHECK(r.error == c.error);
  }
  CHECK(have_pie);  // Debian builds /bin/sh (dash) as a PIE: the PIE case above ran
}

TEST_CASE("DF_1_NODEFLIB: neither the cache nor the system directories for its dependencies") {
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  ElfInfo plain, nodeflib;
  nodeflib.flags_1 = DF_1_NODEFLIB;
  CHECK(resolve_library(env, "libc.so.6", Requester{"/opt/x/libx.so", &plain, {}, {}}).status ==
        LoadStatus::found);
  Resolution r = resolve_library(env, "libc.so.6", Requester{"/opt/x/libx.so", &nodeflib, {}, {}});
  CHECK(r.status == LoadStatus::not_found);
}
