// Scratch directory trees for probe tests: library layouts assembled from the stand-ins that
// tests/standins builds (DENPEX_STANDINS_DIR) and from the real NCCL on the machine.
//
// As root the probe refuses to load files from directories others can write, so the scratch
// base must be trusted: the build tree when it is, otherwise a directory under /run.
#pragma once

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "probe/elf_file.h"
#include "probe/loader_arch.h"
#include "probe/probe.h"
#include "probe/probe_context.h"
#include "probe/trust.h"

namespace denpex_test {

namespace fs = std::filesystem;

inline std::string standin(const std::string& rel) {
  return std::string(DENPEX_STANDINS_DIR) + "/" + rel;
}

class Scratch {
 public:
  Scratch() {
    std::string base = std::string(DENPEX_TEST_SCRATCH_BASE);
    fs::create_directories(base);
    ::chmod(base.c_str(), 0755);
    if (::geteuid() == 0 && !denpex::check_trusted(base, true).trusted) base = "/run";
    std::string tmpl = base + "/denpex-test.XXXXXX";
    char* made = ::mkdtemp(&tmpl[0]);
    dir_ = made ? made : base + "/denpex-test.failed";
    ::chmod(dir_.c_str(), 0755);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  // Creates the parent directories of rel and returns the full path.
  std::string prepare(const std::string& rel) const {
    std::string p = path(rel);
    fs::create_directories(fs::path(p).parent_path());
    return p;
  }
  std::string copy(const std::string& from, const std::string& rel) const {
    std::string p = prepare(rel);
    fs::copy_file(from, p, fs::copy_options::overwrite_existing);
    return p;
  }
  std::string link(const std::string& target, const std::string& rel) const {
    std::string p = prepare(rel);
    std::error_code ec;
    fs::remove(p, ec);
    fs::create_symlink(target, p);
    return p;
  }
  std::string write(const std::string& rel, const std::string& text) const {
    std::string p = prepare(rel);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // Copies a stand-in NCCL variant dir's real file as libnccl.so.2.X.Y plus the soname link.
  std::string install_nccl(const std::string& variant, const std::string& dir_rel) const {
    std::string version = variant.substr(variant.find('-') + 1);
    std::string file = "libnccl.so." + version;
    copy(standin(variant + "/" + file), dir_rel + "/" + file);
    return link(file, dir_rel + "/libnccl.so.2");
  }

 private:
  std::string dir_;
};

// A probe context whose loader finds only what lies in `dir` (as LD_LIBRARY_PATH; no loader
// cache, no system directories) and reads no kernel module files.
inline denpex::ProbeContext context_with_only(const std::string& dir, double step_timeout = 2.0) {
  denpex::ProbeContext ctx;
  ctx.loader = denpex::make_loader_env(denpex::FsView{}, "", dir);
  ctx.loader.cache = denpex::LdCache{};
  ctx.loader.system_dirs.clear();
  ctx.running_as_root = ::geteuid() == 0;
  ctx.step_timeout = step_timeout;
  ctx.kernel_version_files.clear();
  return ctx;
}

// Probe options for a process with exactly `env` (plus a PATH without Python), no kernel
// module files unless given.
inline denpex::ProbeOptions options_with(std::map<std::string, std::string> env) {
  denpex::ProbeOptions o;
  if (!env.count("PATH")) env["PATH"] = "/nonexistent";
  o.env = env;
  o.step_timeout = 5.0;
  o.running_as_root = ::geteuid() == 0;
  o.kernel_version_files = {};
  // No device facts from the machine the tests run on (device_probe_test.cpp points these at
  // fixture trees).
  o.proc_root = "/nonexistent/proc";
  o.sys_root = "/nonexistent/sys";
  o.nvml = false;
  return o;
}

// The libnccl.so.2 the loader cache names, found the way a user would (`ldconfig -p`), not by a
// toolkit path; "" if the cache has none. Cases that need it carry the [real-nccl] tag and run
// as their own CTest test, which skips with a reason when this is "" (tests/run_catch.sh).
inline std::string real_nccl() {
  std::string found;
  for (const char* cmd : {"/sbin/ldconfig -p 2>/dev/null", "ldconfig -p 2>/dev/null"}) {
    FILE* p = ::popen(cmd, "r");
    if (!p) continue;
    char line[4096];
    while (found.empty() && std::fgets(line, sizeof line, p)) {
      std::string l(line);
      std::size_t arrow = l.find(" => ");
      if (l.find("libnccl.so.2 (") == std::string::npos || arrow == std::string::npos) continue;
      found = l.substr(arrow + 4);
      while (!found.empty() && (found.back() == '\n' || found.back() == ' ')) found.pop_back();
    }
    ::pclose(p);
    if (!found.empty()) break;
  }
  return found;
}

// The file ld.so maps for real_nccl() (the cache may name a symlink, as NVIDIA's packages install
// libnccl.so.2 -> libnccl.so.2.X.Y): the path the probe reports. "" if the cache has none.
inline std::string real_nccl_file() {
  std::string named = real_nccl();
  if (named.empty()) return "";
  char* real = ::realpath(named.c_str(), nullptr);
  std::string file = real ? real : named;
  std::free(real);
  return file;
}

// The suite runs as x86_64 and, cross-built, as aarch64 under qemu (.ci/aarch64.sh). The
// stand-ins are built for this machine: "another machine" is the other of the two, and an image
// tree without a loader is read with this machine's multiarch directory.
inline uint16_t other_machine() {
  return denpex::host_machine() == EM_AARCH64 ? uint16_t(EM_X86_64) : uint16_t(EM_AARCH64);
}
// What the loader says of a file built for other_machine(): "built for aarch64, this is x86_64".
inline std::string other_machine_reason() {
  return "built for " + denpex::machine_name(other_machine()) + ", this is " +
         denpex::machine_name(denpex::host_machine());
}
// "usr/lib/x86_64-linux-gnu" on x86_64, "usr/lib/aarch64-linux-gnu" on aarch64.
inline std::string image_lib_dir() {
  return "usr/lib/" + denpex::loader_arch_for(denpex::host_machine()).triplet;
}

// The CUDA toolkit's libcuda.so stub: under $CUDA_HOME, else /usr/local/cuda, as nvcc finds it;
// "" if absent. Cases that need it carry the [cuda-stub] tag.
inline std::string cuda_stub() {
  const char* home = std::getenv("CUDA_HOME");
  std::string p = std::string(home && *home ? home : "/usr/local/cuda") + "/lib64/stubs/libcuda.so";
  return ::access(p.c_str(), R_OK) == 0 ? p : "";
}

}  // namespace denpex_test
