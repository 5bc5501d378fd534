#include "probe/probe_inputs.h"

#include <unistd.h>

#include <climits>

#include <fmt/format.h>

namespace denpex {

bool per_rank_variable(const std::string& name) {
  // Only variables that name the rank or a per-rank file: any other difference between two
  // ranks (one more LD_PRELOAD, another NCCL_PROTO) gives them different keys, and each probes.
  return name == "RANK" || name == "LOCAL_RANK" || name == "GROUP_RANK" ||
         name == "ROLE_RANK" || name == "TORCHELASTIC_ERROR_FILE";
}

namespace {

// FNV-1a over the fields, each ended by a byte no environment string holds, so that ("ab", "c")
// and ("a", "bc") differ.
class Fnv {
 public:
  void add(const std::string& s) {
    for (unsigned char c : s) mix(c);
    mix(0);
  }
  unsigned long long value() const { return h_; }

 private:
  void mix(unsigned char c) {
    h_ ^= c;
    h_ *= 1099511628211ULL;
  }
  unsigned long long h_ = 1469598103934665603ULL;
};

// The kernel's name of a namespace or of the root directory ("mnt:[4026531841]"); "" unreadable.
std::string proc_link(const char* path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

std::string probe_input_key(const ProbeOptions& o) {
  char cwd[PATH_MAX];
  const std::string mnt = proc_link("/proc/self/ns/mnt");
  const std::string root = proc_link("/proc/self/root");
  if (mnt.empty() || root.empty() || !::getcwd(cwd, sizeof cwd)) return "";
  Fnv h;
  h.add(probe_version());
  h.add(fmt::format("{} {} {}", ::geteuid(), ::getegid(), o.running_as_root));
  h.add(cwd);
  h.add(mnt);
  h.add(root);
  h.add(o.root);
  h.add(o.arch);
  h.add(o.image_name);
  h.add(fmt::format("{}", o.step_timeout));
  for (const auto& s : o.site_packages) h.add(s);
  h.add("--");
  for (const auto& f : o.kernel_version_files) h.add(f);
  h.add("--");
  h.add(o.proc_root);
  h.add(o.sys_root);
  h.add(o.nvml ? "nvml" : "no-nvml");
  for (const auto& [name, value] : o.env) {
    if (per_rank_variable(name)) continue;
    h.add(name);
    h.add(value);
  }
  return fmt::format("{:016x}", h.value());
}

}  // namespace denpex
