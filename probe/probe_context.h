// What every probe step needs to know about the process it is probing: its environment, its
// loader, whether it may load code at all, and how long a risky step may take.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/isolated_call.h"
#include "probe/loader.h"
#include "probe/nccl_literals.h"

namespace denpex {

using Environment = std::map<std::string, std::string>;

// A version call already made in a child that had other work (the device child calls the
// driver's, so a GPU node forks once for both): `answer` is that child's result for it.
struct PrefetchedCall {
  std::string host;    // the file loaded, as this process opens it
  std::string symbol;  // "cuDriverGetVersion"
  IsolatedResult answer;
};

struct ProbeContext {
  Environment env;                 // the probed process's environment
  LoaderEnv loader;                // its loader view
  bool running_as_root = false;    // as root, untrusted files are read, never loaded
  bool allow_load = true;          // false under --root: nothing from the tree is ever loaded
  double step_timeout = 10.0;      // seconds one isolated load/call may take
  std::vector<std::string> site_packages;  // --site-packages, in order
  std::vector<std::string> kernel_version_files = {"/sys/module/nvidia/version",
                                                   "/proc/driver/nvidia/version"};
  // A cache, not state: what a file's literal says does not change within one probe.
  mutable NcclLiterals nccl_literals;
  std::vector<PrefetchedCall> prefetched;  // probe_library takes these instead of forking
};

// Value of `name` in `env`, or "" when unset (a variable set to "" reads the same). The one
// lookup of a variable in an environment map.
std::string env_value(const Environment& env, const std::string& name);

// env_value(ctx.env, name).
inline std::string env_value(const ProbeContext& ctx, const std::string& name) {
  return env_value(ctx.env, name);
}

}  // namespace denpex
