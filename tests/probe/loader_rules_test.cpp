// Loader rules on crafted libraries, each case compiled here from C sources and
// run under this machine's real ld.so (LD_TRACE_LOADED_OBJECTS, or the program's own output),
// then asked of the emulation. glibc-hwcaps subdirectories, $ORIGIN in LD_LIBRARY_PATH, an
// object already loaded under the same soname, $ORIGIN through a symlink, preload names searched
// with the executable's RPATH.
#include <catch2/catch.hpp>

#include <elf.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "probe/hwcaps.h"
#include "probe/loader.h"
#include "probe/loader_arch.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

// Runs `argv` with exactly `env`; its standard output, or "" when it could not start.
std::string run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                int* exit_code = nullptr) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::close(fds[0]);
    std::vector<char*> a, e;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    e.push_back(nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (exit_code) *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// Compiles C `source` with `flags` (e.g. "-shared -fPIC -Wl,-soname,libx.so.1") into `out`.
void cc(const Scratch& s, const std::string& source, const std::string& flags,
        const std::string& out) {
  static int n = 0;
  std::string src = s.write("src/" + std::to_string(n++) + ".c", source);
  fs::create_directories(fs::path(out).parent_path());
  std::string cmd = std::string(DENPEX_C_COMPILER) + " -o '" + out + "' '" + src + "' " + flags;
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// A shared library `out` with soname `soname` whose x() returns `value`.
void lib_x(const Scratch& s, const std::string& out, const std::string& soname, int value,
           const std::string& extra = "") {
  cc(s, "int x(void) { return " + std::to_string(value) + "; }\n",
     "-shared -fPIC -Wl,-soname," + soname + " " + extra, out);
}

// What the real loader maps for each name when starting `exe` ("name" -> path, "" = not found).
std::map<std::string, std::string> traced(const std::string& exe,
                                          std::vector<std::string> env = {}) {
  env.push_back("LD_TRACE_LOADED_OBJECTS=1");
  std::string text = run({exe}, env);
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    size_t b = line.find_first_not_of("\t ");
    std::string rest = line.substr(arrow + 4);
    out[line.substr(b, arrow - b)] =
        rest.rfind("not found", 0) == 0 ? "" : rest.substr(0, rest.find(" ("));
  }
  return out;
}

// The "(supported, searched)" glibc-hwcaps names `ld.so --help` lists, in its order.
std::vector<std::string> ldso_supported_hwcaps(const std::string& ldso) {
  std::string text = run({ldso, "--help"}, {"LC_ALL=C"});
  std::vector<std::string> out;
  size_t at = text.find("Subdirectories of glibc-hwcaps directories");
  if (at == std::string::npos) return out;
  size_t pos = text.find('\n', at) + 1;
  while (pos < text.size() && text.compare(pos, 2, "  ") == 0) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos + 2, end - pos - 2);
    pos = end + 1;
    size_t sp = line.find(' ');
    if (sp != std::string::npos && line.find("(supported") != std::string::npos)
      out.push_back(line.substr(0, sp));
  }
  return out;
}

std::string host_ldso() {
  for (const auto& p : loader_arch_for(host_machine()).ldso_paths)
    if (::access(p.c_str(), X_OK) == 0) return p;
  return "";
}

const char* kMain = "int x(void);\nint main(void) { return x() == 0; }\n";

}  // namespace

TEST_CASE("this CPU's glibc-hwcaps levels are the ones ld.so --help marks supported") {
  std::string ldso = host_ldso();
  REQUIRE(!ldso.empty());
  CHECK(ldso_has_glibc_hwcaps(ldso));
  std::vector<std::string> want = ldso_supported_hwcaps(ldso);
  CHECK(host_cpu_hwcaps() == want);
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  CHECK(env.hwcaps.mode == (env.arch.hwcaps.empty() ? HwcapsMode::none : HwcapsMode::cpu_known));
  CHECK(env.hwcaps.supported == want);
}

TEST_CASE("glibc-hwcaps subdirectories before each directory, as ld.so picks them") {
  Scratch s;
  LoaderArch arch = loader_arch_for(host_machine());
  REQUIRE(!arch.hwcaps.empty());  // x86_64: the CI machine
  // Every level holds a copy, and the directory itself: RPATH directory d, LD_LIBRARY_PATH llp.
  for (const std::string dir : {"d", "llp"}) {
    lib_x(s, s.path(dir + "/libh.so.1"), "libh.so.1", 1);
    for (const auto& level : arch.hwcaps)
      lib_x(s, s.path(dir + "/" + hwcaps_subdir(level) + "/libh.so.1"), "libh.so.1", 2);
  }
  lib_x(s, s.path("plain/libh.so.1"), "libh.so.1", 1);
  const std::string exe = s.path("bin/main");
  cc(s, kMain, "-L" + s.path("d") + " -l:libh.so.1 -Wl,--disable-new-dtags,-rpath," + s.path("d"),
     exe);
  ElfInfo exe_elf = read_elf(exe, false);
  REQUIRE(exe_elf.rpath == std::vector<std::string>{s.path("d")});
  const Requester main_rq{exe, &exe_elf, {}, {}};

  // Through the RPATH; through LD_LIBRARY_PATH (the RPATH directory gone).
  std::map<std::string, std::string> real = traced(exe);
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  Resolution r = resolve_library(env, "libh.so.1", main_rq);
  REQUIRE(!real["libh.so.1"].empty());
  CHECK(r.path == real["libh.so.1"]);
  CHECK(r.cpu_alternatives.empty());
  // This machine supports at least one level: the answer is in a subdirectory.
  REQUIRE(!env.hwcaps.supported.empty());
  CHECK(r.path == s.path("d/" + hwcaps_subdir(env.hwcaps.supported.front()) + "/libh.so.1"));

  fs::rename(s.path("d"), s.path("d.gone"));
  std::map<std::string, std::string> real_llp = traced(exe, {"LD_LIBRARY_PATH=" + s.path("llp")});
  LoaderEnv env_llp = make_loader_env(FsView{}, "", s.path("llp"));
  Resolution r_llp = resolve_library(env_llp, "libh.so.1", main_rq);
  REQUIRE(!real_llp["libh.so.1"].empty());
  CHECK(r_llp.path == real_llp["libh.so.1"]);
  CHECK(r_llp.origin == "LD_LIBRARY_PATH");

  // Only the unsupported levels hold it: ld.so takes the directory itself.
  for (const auto& level : arch.hwcaps) {
    bool supported = false;
    for (const auto& l : env.hwcaps.supported) supported = supported || l == level;
    if (supported) fs::remove(s.path("llp/" + hwcaps_subdir(level) + "/libh.so.1"));
  }
  std::map<std::string, std::string> real_plain =
      traced(exe, {"LD_LIBRARY_PATH=" + s.path("llp")});
  CHECK(real_plain["libh.so.1"] == s.path("llp/libh.so.1"));
  CHECK(resolve_library(env_llp, "libh.so.1", main_rq).path == real_plain["libh.so.1"]);
}

TEST_CASE("under --root the CPU is unknown: every glibc-hwcaps answer is listed, none guessed") {
  Scratch s;
  LoaderArch arch = loader_arch_for(EM_X86_64);
  const std::string img = s.path("img");
  // The tree's ld.so is this machine's (glibc 2.36: it knows glibc-hwcaps).
  std::string ldso = host_ldso();
  REQUIRE(!ldso.empty());
  fs::create_directories(img + "/lib64");
  fs::copy_file(fs::canonical(ldso), img + "/lib64/ld-linux-x86-64.so.2");
  lib_x(s, img + "/opt/nccl/lib/libnccl.so.2", "libnccl.so.2", 1);
  lib_x(s, img + "/opt/nccl/lib/glibc-hwcaps/x86-64-v3/libnccl.so.2", "libnccl.so.2", 3);
  LoaderEnv env = make_loader_env(FsView{img}, "", "/opt/nccl/lib", EM_X86_64);
  REQUIRE(env.hwcaps.mode == HwcapsMode::cpu_unknown);
  CHECK(env.hwcaps.names == arch.hwcaps);
  Resolution r = resolve_library(env, "libnccl.so.2", Requester{});
  CHECK(r.status == LoadStatus::found);
  CHECK(r.path == "/opt/nccl/lib/libnccl.so.2");  // a CPU without x86-64-v3
  REQUIRE(r.cpu_alternatives.size() == 1);
  CHECK(r.cpu_alternatives[0].hwcaps == "x86-64-v3");
  CHECK(r.cpu_alternatives[0].path == "/opt/nccl/lib/glibc-hwcaps/x86-64-v3/libnccl.so.2");
  CHECK(describe_cpu_alternatives(r) ==
        std::vector<std::string>{"x86-64-v3: /opt/nccl/lib/glibc-hwcaps/x86-64-v3/libnccl.so.2",
                                 "otherwise: /opt/nccl/lib/libnccl.so.2"});

  // Only in the subdirectory: found on v3 CPUs, not found elsewhere.
  fs::remove(img + "/opt/nccl/lib/libnccl.so.2");
  Resolution only = resolve_library(env, "libnccl.so.2", Requester{});
  CHECK(only.status == LoadStatus::not_found);
  REQUIRE(only.cpu_alternatives.size() == 1);
  CHECK(describe_cpu_alternatives(only).back() == "otherwise: not found");

  // A glibc older than 2.33 (no "glibc-hwcaps" in its ld.so) searches no subdirectory.
  std::string old(4096, 'x');
  static const char kDirs[] =
      "\0/lib/x86_64-linux-gnu/\0/usr/lib/x86_64-linux-gnu/\0/lib/\0/usr/lib/";
  old += std::string(kDirs, sizeof kDirs);
  std::ofstream(img + "/lib64/ld-linux-x86-64.so.2", std::ios::binary | std::ios::trunc) << old;
  LoaderEnv old_env = make_loader_env(FsView{img}, "", "/opt/nccl/lib", EM_X86_64);
  CHECK(old_env.hwcaps.mode == HwcapsMode::none);
  CHECK(resolve_library(old_env, "libnccl.so.2", Requester{}).cpu_alternatives.empty());

  // aarch64 (glibc 2.36): no names, nothing depends on the CPU.
  CHECK(hwcaps_for(loader_arch_for(EM_AARCH64), true, false).mode == HwcapsMode::none);
}

TEST_CASE("$ORIGIN in LD_LIBRARY_PATH is the main program's directory, as ld.so expands it") {
  Scratch s;
  lib_x(s, s.path("app/lib/libo.so.1"), "libo.so.1", 1);
  const std::string exe = s.path("app/bin/main");
  cc(s, kMain, "-L" + s.path("app/lib") + " -l:libo.so.1", exe);
  // Started through a symlink elsewhere: the program's origin is its real directory.
  const std::string link = s.link(exe, "elsewhere/main");
  const std::string llp = "LD_LIBRARY_PATH=$ORIGIN/../lib";
  std::map<std::string, std::string> real = traced(link, {llp});
  REQUIRE(real.count("libo.so.1"));
  CHECK(real["libo.so.1"] == s.path("app/bin/../lib/libo.so.1"));
  ElfInfo exe_elf = read_elf(exe, false);
  Requester program{exe, &exe_elf, {}, {}};
  LoaderEnv env = make_loader_env(FsView{}, "", "$ORIGIN/../lib", 0, &program);
  CHECK(env.library_path == std::vector<std::string>{s.path("app/bin/../lib")});
  Resolution r = resolve_library(env, "libo.so.1", program);
  CHECK(r.path == real["libo.so.1"]);
  CHECK(r.origin == "LD_LIBRARY_PATH");
  // The program unknown (the probe's own case): the entry is dropped, never taken literally.
  LoaderEnv unknown = make_loader_env(FsView{}, "", "$ORIGIN/../lib:/x");
  CHECK(unknown.library_path == std::vector<std::string>{"/x"});
}

TEST_CASE("an object already loaded under a soname satisfies a later NEEDED of that soname") {
  Scratch s;
  // libfirst.so (file name) has soname libx.so.1; libuser.so.1 needs libx.so.1, which another
  // file on LD_LIBRARY_PATH also provides. ld.so maps no second libx: main's x() gives 1.
  lib_x(s, s.path("d/libfirst.so"), "libx.so.1", 1);
  lib_x(s, s.path("other/libx.so.1"), "libx.so.1", 2);
  cc(s, "int x(void);\nint user(void) { return x(); }\n",
     "-shared -fPIC -Wl,-soname,libuser.so.1 -L" + s.path("other") + " -l:libx.so.1",
     s.path("d/libuser.so.1"));
  // main's NEEDED names the file (libfirst.so): linked against a copy with that soname.
  lib_x(s, s.path("linkonly/libfirst.so"), "libfirst.so", 1);
  const std::string exe = s.path("bin/main");
  cc(s,
     "#include <stdio.h>\nint user(void);\n"
     "int main(void) { printf(\"%d\\n\", user()); return 0; }\n",
     "-L" + s.path("linkonly") + " -L" + s.path("d") +
         " -Wl,--no-as-needed -l:libfirst.so -l:libuser.so.1 -Wl,-rpath," + s.path("d"),
     exe);
  REQUIRE(read_elf(exe, false).needed ==
          std::vector<std::string>{"libfirst.so", "libuser.so.1", "libc.so.6"});
  int code = -1;
  const std::vector<std::string> env_vars = {"LD_LIBRARY_PATH=" + s.path("other")};
  CHECK(run({exe}, env_vars, &code) == "1\n");
  CHECK(code == 0);
  std::map<std::string, std::string> real = traced(exe, env_vars);
  CHECK(real.count("libx.so.1") == 0);  // never searched for: libfirst.so answered

  ElfInfo first = read_elf(s.path("d/libfirst.so"), false);
  ElfInfo user = read_elf(s.path("d/libuser.so.1"), false);
  ElfInfo main_elf = read_elf(exe, false);
  REQUIRE(first.soname == "libx.so.1");
  LoaderEnv env = make_loader_env(FsView{}, "", s.path("other"));
  Requester rq{s.path("d/libuser.so.1"), &user, {{exe, &main_elf}},
               {{s.path("d/libfirst.so"), &first}}};
  Resolution r = resolve_library(env, "libx.so.1", rq);
  CHECK(r.origin == "already-loaded");
  CHECK(r.path == s.path("d/libfirst.so"));
  // Without it loaded, the search finds the other file.
  rq.loaded.clear();
  CHECK(resolve_library(env, "libx.so.1", rq).path == s.path("other/libx.so.1"));
}

TEST_CASE("$ORIGIN of a library reached through a symlink is the symlink's directory (ld.so)") {
  Scratch s;
  lib_x(s, s.path("site/dep/libdep.so.1"), "libdep.so.1", 1);
  lib_x(s, s.path("store/dep/libdep.so.1"), "libdep.so.1", 2);  // $ORIGIN of the real file
  cc(s, "int x(void);\nint sym(void) { return x(); }\n",
     "-shared -fPIC -Wl,-soname,libsym.so.1 -L" + s.path("site/dep") +
         " -l:libdep.so.1 -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../dep'",
     s.path("store/lib/libsym.so.1"));
  s.link(s.path("store/lib/libsym.so.1"), "site/lib/libsym.so.1");
  const std::string exe = s.path("bin/main");
  cc(s,
     "#include <stdio.h>\nint sym(void);\n"
     "int main(void) { printf(\"%d\\n\", sym()); return 0; }\n",
     "-L" + s.path("site/lib") + " -l:libsym.so.1 -Wl,-rpath," + s.path("site/lib"), exe);
  std::map<std::string, std::string> real = traced(exe);
  REQUIRE(real.count("libdep.so.1"));
  CHECK(real["libdep.so.1"] == s.path("site/lib/../dep/libdep.so.1"));
  CHECK(run({exe}, {}) == "1\n");
  ElfInfo sym = read_elf(s.path("store/lib/libsym.so.1"), false);
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  Resolution r =
      resolve_library(env, "libdep.so.1", Requester{s.path("site/lib/libsym.so.1"), &sym, {}, {}});
  CHECK(r.path == real["libdep.so.1"]);
  CHECK(r.origin == "rpath");
}

TEST_CASE("a preload name without '/' is searched with the executable's RPATH and RUNPATH") {
  Scratch s;
  lib_x(s, s.path("pre/libpre.so.1"), "libpre.so.1", 1);
  lib_x(s, s.path("run/libpre2.so.1"), "libpre2.so.1", 1);
  lib_x(s, s.path("d/libh.so.1"), "libh.so.1", 1);
  for (const char* tags : {"--disable-new-dtags", "--enable-new-dtags"}) {
    INFO(tags);
    const std::string dir = std::string(tags) == "--disable-new-dtags" ? "pre" : "run";
    const std::string name = dir == "pre" ? "libpre.so.1" : "libpre2.so.1";
    const std::string exe = s.path("bin/main-" + dir);
    cc(s, kMain,
       "-L" + s.path("d") + " -l:libh.so.1 -Wl," + tags + ",-rpath," + s.path(dir) + ":" +
           s.path("d"),
       exe);
    std::map<std::string, std::string> real = traced(exe, {"LD_PRELOAD=" + name});
    REQUIRE(real.count(name));
    CHECK(real[name] == s.path(dir + "/" + name));
    ElfInfo elf = read_elf(exe, false);
    CHECK(elf.has_runpath == (dir == "run"));
    Requester program{exe, &elf, {}, {}};
    LoaderEnv env = make_loader_env(FsView{}, name, "", 0, &program);
    REQUIRE(env.preload.size() == 1);
    CHECK(env.preload[0].found);
    CHECK(env.preload[0].path == real[name]);
    // Without the executable (what the probe knows): not found, dropped as ld.so drops it.
    CHECK_FALSE(make_loader_env(FsView{}, name, "").preload[0].found);
  }
}

TEST_CASE("ld.so.cache entries of glibc-hwcaps copies apply as the CPU allows") {
  Scratch s;
  REQUIRE(fs::exists("/sbin/ldconfig"));
  lib_x(s, s.path("d/libh.so.1"), "libh.so.1", 1);
  lib_x(s, s.path("d/glibc-hwcaps/x86-64-v2/libh.so.1"), "libh.so.1", 2);
  s.write("ld.so.conf", s.path("d") + "\n");
  const std::string cache_file = s.path("ld.so.cache");
  const std::string cmd =
      "/sbin/ldconfig -C '" + cache_file + "' -f '" + s.path("ld.so.conf") + "' 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  LdCache cache = read_ld_cache(cache_file);
  REQUIRE(cache.status == LdCacheStatus::ok);
  std::vector<const LdCacheEntry*> all = find_all_in_cache(cache, "libh.so.1", 0x0303);
  REQUIRE(all.size() == 2);
  std::vector<std::string> levels;
  for (const auto* e : all) levels.push_back(e->hwcaps);
  std::sort(levels.begin(), levels.end());
  CHECK(levels == std::vector<std::string>{"", "x86-64-v2"});
  CHECK(find_in_cache(cache, "libh.so.1", 0x0303)->path == s.path("d/libh.so.1"));

  // Live: this CPU supports x86-64-v2 (checked against ld.so --help above): the copy wins.
  LoaderEnv live = make_loader_env(FsView{}, "", "");
  live.cache = cache;
  REQUIRE(!live.hwcaps.supported.empty());
  Resolution r = resolve_library(live, "libh.so.1", Requester{});
  CHECK(r.origin == "ld.so.cache");
  CHECK(r.path == s.path("d/glibc-hwcaps/x86-64-v2/libh.so.1"));
  // CPU unknown: the plain entry, with the copy as what x86-64-v2 CPUs get.
  LoaderEnv image = live;
  image.hwcaps.mode = HwcapsMode::cpu_unknown;
  Resolution u = resolve_library(image, "libh.so.1", Requester{});
  CHECK(u.path == s.path("d/libh.so.1"));
  REQUIRE(u.cpu_alternatives.size() == 1);
  CHECK(u.cpu_alternatives[0].path == s.path("d/glibc-hwcaps/x86-64-v2/libh.so.1"));
}
