// The per-rank probe: everything this process (or, under --root, a process inside an image)
// would really load, as one RankRecord. Knows nothing of MPI; runs before MPI_Init so its
// isolated children never share a process with an MPI transport.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

struct ProbeOptions {
  std::map<std::string, std::string> env;   // the environment to probe (normally environ)
  std::vector<std::string> site_packages;   // --site-packages, in order
  std::string root = "/";                   // --root: static inspection of this tree
  std::string arch;                         // --arch: the image's architecture ("arm64",
                                            // "aarch64", ...; "" = from the tree's files)
  std::string image_name;                   // --image-name: how findings name that tree
                                            // ("" = the root path)
  long pid = 0;                             // the rank's pid for the record (0 = this process;
                                            // callers that probe in a forked child pass theirs)
  double step_timeout = 10.0;               // seconds for one isolated load or driver call
  bool running_as_root = false;             // geteuid() == 0
  // Where the kernel module's version is read; tests point these at fixtures.
  std::vector<std::string> kernel_version_files = {"/sys/module/nvidia/version",
                                                   "/proc/driver/nvidia/version"};
  // Where procfs and sysfs are, for the device facts (probe/device_probe.h); tests point these
  // at fixture trees.
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // Whether NVML (libnvidia-ml.so.1, as the loader resolves it) is asked about the GPUs, in the
  // device child; tests that must not meet the machine's NVML turn it off.
  bool nvml = true;
  // Called as each step begins ("PyTorch", "the CUDA driver"), so a watchdog that has to cut
  // the probe off can say where it was stuck. May be empty.
  std::function<void(const char* step)> on_step;
};

// Probes and returns the record (rank = 0; the caller sets the rank). Never throws: every
// failure is a status inside the record, and steps that failed are listed in probe_errors.
RankRecord probe_rank(const ProbeOptions& options);

// The process environment as a map.
std::map<std::string, std::string> current_environment();

// denpex-probe's own version string.
const char* probe_version();

}  // namespace denpex
