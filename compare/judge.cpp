#include "compare/judge.h"


#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/device_rules.h"
#include "compare/device_setting_rules.h"
#include "compare/facts.h"
#include "compare/finding_codes.h"
#include "compare/fold.h"
#include "compare/nccl_env.h"
#include "compare/shell_command.h"
#include "compare/vote.h"
#include "probe/cuda_compat.h"

namespace denpex {

namespace {

// Details are written for one rank ("has", "loads", "runs"); a finding that blames several
// ranks reads "ranks 0-3 on node[1-2] have ...".
std::string agree_verb(const std::string& detail, bool plural) {
  if (!plural) return detail;
  static const std::pair<const char*, const char*> verbs[] = {
      {"has ", "have "}, {"loads ", "load "}, {"runs ", "run "}, {"is ", "are "},
      {"resolves ", "resolve "}, {"gets ", "get "}};
  for (const auto& [one, many] : verbs) {
    std::string o(one);
    if (detail.compare(0, o.size(), o) == 0) return many + detail.substr(o.size());
  }
  return detail;
}


// ---------------------------------------------------------------------------------------------
// One-process rules. The same problem in several groups (groups that differ in something else)
// becomes one finding, so a driver missing on 512 hosts is one line, not one per configuration.

struct LocalKey {
  FindingCode code;
  Severity severity;
  std::string detail;  // the message after the subject: "resolves no NCCL library"
  std::string expected;
  std::string found;
  std::string fix;
  bool operator<(const LocalKey& o) const {
    return std::tie(code, severity, detail, expected, found, fix) <
           std::tie(o.code, o.severity, o.detail, o.expected, o.found, o.fix);
  }
};

struct Blame {
  std::set<int> ranks;
  std::set<std::string> hosts;
  void add(const std::vector<int>& r, const std::vector<std::string>& h) {
    ranks.insert(r.begin(), r.end());
    for (const auto& name : h)
      if (!name.empty()) hosts.insert(name);
  }
};

class LocalFindings {
 public:
  void add(const ConfigGroup& g, LocalKey key) { blame_[std::move(key)].add(g.ranks, g.hosts); }
  void add(const std::vector<int>& ranks, const std::vector<std::string>& hosts, LocalKey key) {
    blame_[std::move(key)].add(ranks, hosts);
  }

  void emit(std::vector<Finding>* out) const {
    for (const auto& [key, blame] : blame_) {
      Finding f;
      f.code = key.code;
      f.severity = key.severity;
      f.ranks.assign(blame.ranks.begin(), blame.ranks.end());
      f.hosts.assign(blame.hosts.begin(), blame.hosts.end());
      f.message = fmt::format("{} {}", rank_phrase(f.ranks, f.hosts),
                              agree_verb(key.detail, f.ranks.size() > 1));
      f.expected = key.expected;
      f.found = key.found;
      f.fix = key.fix;
      out->push_back(std::move(f));
    }
  }

 private:
  std::map<LocalKey, Blame> blame_;
};

// At most `max` items, then "and N more": symbol and path lists stay one line.
std::string short_list(const std::vector<std::string>& items, std::size_t max) {
  std::vector<std::string> head(items.begin(), items.begin() + std::min(max, items.size()));
  std::string text = fmt::format("{}", fmt::join(head, ", "));
  if (items.size() > max) text += fmt::format(" and {} more", items.size() - max);
  return text;
}

// "nvidia-nccl-cu12 2.20.5"
std::string wheel_name(const NcclWheel& w) { return fmt::format("{} {}", w.project, w.version); }

// The fix for an environment whose NCCL wheels are wrong: the wheel PyTorch requires when
// PyTorch is installed there, else the one the user's framework needs.
std::string reinstall_fix(const TorchInfo& t, const std::string& site,
                          const std::vector<std::string>& uninstall) {
  // Wheel names and PyTorch's requirement are read from the environment (a record, an image):
  // they go into the printed pip commands as quoted words, or not at all.
  std::string first;
  if (!uninstall.empty()) {
    std::vector<std::string> argv = {"pip", "uninstall", "-y"};
    argv.insert(argv.end(), uninstall.begin(), uninstall.end());
    ShellCommand c = command_or(argv, "pip uninstall -y the extra nvidia-nccl-cu* wheels");
    first = c.text + ", then ";
  }
  if (t.status == TorchStatus::ok && !t.nccl_requirement.empty() && t.site_packages == site) {
    ShellCommand c;
    if (make_command({"pip", "install", t.nccl_requirement}, &c) == CommandStatus::ok)
      return fmt::format("{}{} (the NCCL PyTorch {} requires) in the environment of {}", first, c.text, t.version,
                         site);
  }
  return fmt::format("{}pip install the one nvidia-nccl-cu* wheel your framework requires, in "
                     "the environment of {}",
                     first, site);
}

// A wheel environment whose NCCL wheel is the wrong one is fixed with pip; a library that wins
// through the loader's path is taken off it.
std::string abi_fix(const RankRecord& r, const AbiCheck& abi) {
  const TorchInfo& t = r.torch;
  const bool torch_consumer = t.libtorch_cuda == abi.consumer && !t.nccl_requirement.empty();
  if (torch_consumer && t.nccl.linkage == "wheel" &&
      abi.library.compare(0, t.site_packages.size() + 1, t.site_packages + "/") == 0)
    return reinstall_fix(t, t.site_packages, {});
  return fmt::format("make {} load the NCCL it was built with{}: take {} off "
                     "LD_LIBRARY_PATH/LD_PRELOAD, or install an NCCL new enough to export these "
                     "symbols",
                     abi.consumer,
                     torch_consumer ? fmt::format(" (PyTorch {} requires {})", t.version,
                                                  t.nccl_requirement)
                                    : " (for a PyTorch wheel, its nvidia-nccl-cu* wheel)",
                     abi.library);
}

// `nccl_required`: false when a baseline pins no NCCL and no rank has one (a host whose jobs run
// in containers brings no NCCL of its own; the baseline's own rule is that an unpinned part is
// not checked).
void nccl_rules(const ConfigGroup& g, bool nccl_required, LocalFindings* out) {
  const NcclInfo& n = g.record.nccl;
  if (n.status == NcclStatus::missing && nccl_required) {
    out->add(g, {FindingCode::nccl_missing, Severity::error,
                 n.error.empty() ? "resolves no NCCL library (libnccl.so.2)"
                                 : fmt::format("resolves no NCCL library: {}", n.error),
                 "libnccl.so.2", "missing",
                 "install NCCL on these hosts (the libnccl2 package, or the nvidia-nccl-cu* wheel "
                 "PyTorch was built with), or add its directory to LD_LIBRARY_PATH"});
  }
  if (n.status == NcclStatus::unloadable) {
    std::string why = n.error.empty() ? "unknown reason" : n.error;
    out->add(g, {FindingCode::nccl_unloadable, Severity::error,
                 fmt::format("has NCCL at {} that cannot be used: {}",
                             n.path.empty() ? "an unknown path" : n.path, why),
                 "a loadable libnccl.so.2", why,
                 fmt::format("replace {} with an intact NCCL built for this machine, or remove it "
                             "from the library search path so a working one is found",
                             n.path.empty() ? "the broken library" : n.path)});
  }
  for (const AbiCheck& abi : g.record.abi) {
    if (abi.missing.empty()) continue;
    std::string symbols = short_list(abi.missing, 6);
    std::string version = nccl_version_of(n);
    std::string library = version.empty() ? abi.library
                                          : fmt::format("{} (NCCL {})", abi.library, version);
    out->add(g, {FindingCode::nccl_abi_mismatch, Severity::error,
                 fmt::format("would fail with \"undefined symbol: {}\": {} needs {} which {} does "
                             "not export",
                             abi.missing.front(), abi.consumer, symbols, library),
                 fmt::format("an NCCL exporting {}", symbols), library, abi_fix(g.record, abi)});
  }
}

void torch_nccl_rules(const ConfigGroup& g, LocalFindings* out) {
  const TorchInfo& t = g.record.torch;
  if (t.status != TorchStatus::ok || t.nccl.version.empty()) return;
  // The system NCCL winning inside PyTorch (an LD_LIBRARY_PATH entry or LD_PRELOAD beats the
  // wheel's RPATH) means PyTorch runs with an NCCL it was not built against.
  if (t.nccl.linkage == "system" && !t.bundled.version.empty() &&
      t.bundled.version != t.nccl.version) {
    out->add(g, {FindingCode::torch_nccl_mismatch, Severity::error,
                 fmt::format("runs PyTorch {} with the system NCCL {} ({}) instead of its own NCCL "
                             "{} ({})",
                             t.version, t.nccl.version, t.nccl.path, t.bundled.version,
                             t.bundled.path),
                 t.bundled.version, t.nccl.version,
                 fmt::format("remove the directory of {} from LD_LIBRARY_PATH/LD_PRELOAD in the "
                             "job's environment so PyTorch loads {}, or install NCCL {} "
                             "system-wide",
                             t.nccl.path, t.bundled.path, t.bundled.version)});
    return;
  }
  const NcclInfo& sys = g.record.system_nccl;
  std::string sys_version = nccl_version_of(sys);
  if (!nccl_found(sys) || sys_version.empty() || sys_version == t.nccl.version) return;
  out->add(g, {FindingCode::torch_nccl_mismatch, Severity::warning,
               fmt::format("runs PyTorch {} with NCCL {} ({}, {}) while other programs resolve "
                           "NCCL {} ({})",
                           t.version, t.nccl.version, t.nccl.path,
                           t.nccl.linkage.empty() ? "unknown linkage" : t.nccl.linkage,
                           sys_version, sys.path),
               t.nccl.version, sys_version,
               fmt::format("harmless if only PyTorch uses NCCL; for other NCCL programs in the "
                           "job (nccl-tests, MPI+NCCL codes) install NCCL {} system-wide or put "
                           "PyTorch's NCCL directory on their LD_LIBRARY_PATH",
                           t.nccl.version)});
}

// Every nvidia-nccl-cu* wheel installs the same file, nvidia/nccl/lib/libnccl.so.2: two in one
// site-packages leave it to whichever was installed last, and uninstalling either deletes it
// (the "undefined symbol: ncclCommResume" / "ncclMemFree" reports).
void nccl_wheel_rules(const ConfigGroup& g, LocalFindings* out) {
  const auto& wheels = g.record.nccl_wheels;
  for (size_t i = 0; i < wheels.size();) {
    size_t end = i;
    while (end < wheels.size() && wheels[end].site_packages == wheels[i].site_packages) ++end;
    if (end - i >= 2) {
      std::vector<std::string> names, projects;
      std::string owner;
      for (size_t k = i; k < end; ++k) {
        names.push_back(wheel_name(wheels[k]));
        if (std::find(projects.begin(), projects.end(), wheels[k].project) == projects.end())
          projects.push_back(wheels[k].project);
        if (wheels[k].owns_library == "yes") owner = wheel_name(wheels[k]);
      }
      const std::string& site = wheels[i].site_packages;
      std::string lib = site + "/nvidia/nccl/lib/libnccl.so.2";
      out->add(g, {FindingCode::nccl_wheel_conflict, Severity::error,
                   fmt::format("has {} installed in {}: each installs {}, which is now {}; "
                               "uninstalling either deletes it",
                               names.size() == 2 ? names[0] + " and " + names[1]
                                                 : short_list(names, 4),
                               site, lib,
                               owner.empty() ? "whichever was installed last"
                                             : owner + "'s (installed last)"),
                   "one nvidia-nccl-cu* wheel", fmt::format("{}", fmt::join(names, ", ")),
                   reinstall_fix(g.record.torch, site, projects)});
    }
    i = end;
  }
}

// PyTorch's wheel requires one exact NCCL wheel (Requires-Dist); pip warns about another at
// install time and never again.
void torch_pin_rule(const ConfigGroup& g, LocalFindings* out) {
  const TorchInfo& t = g.record.torch;
  if (t.status != TorchStatus::ok || t.nccl_requirement_met != "no") return;
  std::string installed, broken;
  for (const auto& w : g.record.nccl_wheels) {
    if (w.site_packages != t.site_packages) continue;
    if (w.owns_library == "no" && broken.empty()) broken = wheel_name(w);
    if (w.owns_library != "no" && installed.empty()) installed = wheel_name(w);
  }
  std::string loads = t.nccl.path.empty() ? "none found" : t.nccl.path;
  std::string what =
      !installed.empty() ? fmt::format("{} installed in {}", installed, t.site_packages)
      : !broken.empty()  ? fmt::format("{} recorded in {} but its libnccl.so.2 gone or another "
                                       "wheel's (it loads {})",
                                       broken, t.site_packages, loads)
                         : fmt::format("no nvidia-nccl-cu* wheel in {} (it loads {})",
                                       t.site_packages, loads);
  out->add(g, {FindingCode::torch_nccl_pin_mismatch, Severity::warning,
               fmt::format("runs PyTorch {}, which requires {}, with {}", t.version,
                           t.nccl_requirement, what),
               t.nccl_requirement, installed.empty() ? "none" : installed,
               reinstall_fix(t, t.site_packages, {})});
}

// The driver library itself: missing, unusable, the toolkit's stub, or of a version not learnt.
void driver_status_rules(const ConfigGroup& g, const JudgeOptions& options, LocalFindings* out) {
  const RankRecord& r = g.record;
  const CudaDriverInfo& d = r.cuda_driver;
  // Images carry no driver: the NVIDIA container toolkit injects the host's at run time.
  if (d.status == DriverStatus::missing && r.mode != "static") {
    out->add(g, {FindingCode::cuda_driver_missing,
                 options.require_gpu ? Severity::error : Severity::warning,
                 d.error.empty() ? "has no NVIDIA driver library (libcuda.so.1)"
                                 : fmt::format("has no NVIDIA driver library: {}", d.error),
                 "libcuda.so.1", "missing",
                 "install the NVIDIA driver on these hosts; in a container, start it with the "
                 "NVIDIA container toolkit (--gpus, --runtime=nvidia) so the host's driver is "
                 "mounted"});
  }
  // A driver library that is there but unusable (dlopen failed, cuDriverGetVersion hung or
  // crashed and was cut off) must not pass as if it worked. Judged like a missing driver: a
  // node without a usable driver is a warning, an error with --require-gpu.
  if (d.status == DriverStatus::error) {
    std::string why = d.error.empty() ? "unknown reason" : d.error;
    out->add(g, {FindingCode::cuda_driver_unusable,
                 options.require_gpu ? Severity::error : Severity::warning,
                 fmt::format("has an NVIDIA driver library{} that cannot be used: {}",
                             d.library.empty() ? "" : " " + d.library, why),
                 "a working libcuda.so.1", why,
                 "check the NVIDIA driver on these hosts (nvidia-smi; a hung driver usually needs "
                 "a GPU reset or a reboot), or remove the broken libcuda.so.1 from the library "
                 "search path"});
  }
  if (d.status == DriverStatus::stub) {
    out->add(g, {FindingCode::cuda_driver_stub, Severity::error,
                 fmt::format("loads the CUDA toolkit's stub {} as the driver (every CUDA call "
                             "returns CUDA_ERROR_STUB_LIBRARY)",
                             d.library.empty() ? "libcuda.so" : d.library),
                 "the NVIDIA driver's libcuda.so.1", d.library.empty() ? "stub" : d.library,
                 "remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH (and any "
                 "libcuda.so.1 link to the stub) so the driver's own library is found"});
  }
  if (d.status == DriverStatus::version_unknown) {
    std::string why = d.error.empty() ? "its version is unknown" : d.error;
    out->add(g, {FindingCode::cuda_driver_unverified, Severity::warning,
                 fmt::format("has a driver library {} whose version could not be learnt without "
                             "loading it; the driver checks (CUDA version, kernel module) were "
                             "skipped: {}",
                             d.library, why),
                 "a driver library whose version is known", d.library,
                 "as root, make the driver library and its directories root-owned and not "
                 "writable by others so the probe may load it; in an image, do not ship "
                 "libcuda.so.1 (the NVIDIA container toolkit mounts the host's)"});
  }
}

// The user-space driver against the kernel module.
void driver_kernel_rules(const ConfigGroup& g, LocalFindings* out) {
  const CudaDriverInfo& d = g.record.cuda_driver;
  // CUDA forward compatibility (REFERENCE.md "CUDA driver"): the cuda-compat package's newer
  // user-space libcuda on an older kernel module is supported, on data-center GPUs with a
  // supported kernel driver branch only. Any other pairing of different versions is the NVML
  // "Driver/library version mismatch".
  const bool versions_differ = !d.library_version.empty() && !d.kernel_module_version.empty() &&
                               d.library_version != d.kernel_module_version;
  if (versions_differ && d.forward_compat &&
      compare_driver_versions(d.library_version, d.kernel_module_version) > 0) {
    out->add(g, {FindingCode::cuda_driver_forward_compat, Severity::warning,
                 fmt::format("runs the cuda-compat user-space driver {} ({}) on kernel module {} "
                             "through CUDA forward compatibility: supported only on data-center "
                             "GPUs (not GeForce or most workstation GPUs) with a kernel driver of "
                             "a supported branch; elsewhere CUDA fails with "
                             "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
                             d.library_version, d.library, d.kernel_module_version),
                 d.kernel_module_version, d.library_version,
                 fmt::format("nothing to do on data-center GPUs; on other GPUs, or to avoid the "
                             "compat layer, upgrade the host driver to {} or newer, or remove "
                             "{} from LD_LIBRARY_PATH",
                             d.library_version,
                             d.library.substr(0, d.library.find_last_of('/')))});
  } else if (versions_differ) {
    out->add(g, {FindingCode::cuda_driver_kernel_mismatch, Severity::error,
                 fmt::format("has user-space driver {} but kernel module {} (NVML: \"Driver/library "
                             "version mismatch\")",
                             d.library_version, d.kernel_module_version),
                 d.kernel_module_version, d.library_version,
                 d.forward_compat
                     ? fmt::format("the cuda-compat library {} is older than the kernel module "
                                   "{}: forward compatibility only goes forward; remove its "
                                   "directory from LD_LIBRARY_PATH so the host's driver is used",
                                   d.library, d.kernel_module_version)
                     : fmt::format("reboot (or reload the nvidia kernel modules) after the driver "
                                   "update, or install user-space driver {} to match the module; "
                                   "do not bake libcuda into container images",
                                   d.kernel_module_version)});
  }
}

// NVIDIA's CUDA compatibility rules (probe/cuda_compat.h): newer than the driver's CUDA but
// in its major family and above the family's minimum driver runs through minor version
// compatibility; newer than the family, or below its minimum, does not run.
void judge_cuda_build(const ConfigGroup& g, const std::string& what, const std::string& built_for,
                      LocalFindings* out) {
  const CudaDriverInfo& d = g.record.cuda_driver;
  const std::string driver_name =
      d.library_version.empty() ? "the driver" : "driver " + d.library_version;
  CudaCompat c = cuda_compat(built_for, d.cuda_version, d.library_version);
  int major = std::atoi(built_for.c_str());
  std::string minimum = minor_compat_minimum_driver(major);
  if (c == CudaCompat::minor) {
    out->add(g, {FindingCode::cuda_driver_minor_compat, Severity::warning,
                 fmt::format("has {} built for CUDA {} on {} (CUDA {}): runs through minor "
                             "version compatibility (CUDA {}.x on a driver {} or newer), without "
                             "JIT compilation of PTX newer than CUDA {}",
                             what, built_for, driver_name, d.cuda_version, major, minimum,
                             d.cuda_version),
                 fmt::format("a driver for CUDA {} or newer", built_for),
                 fmt::format("CUDA {}", d.cuda_version),
                 fmt::format("nothing to do for builds that ship code for their GPUs (NCCL, "
                             "PyTorch wheels); for the full CUDA {} feature set upgrade the "
                             "driver to one for CUDA {}",
                             built_for, built_for)});
    return;
  }
  if (c != CudaCompat::too_old) return;
  std::string detail;
  if (major == std::atoi(d.cuda_version.c_str()) && !minimum.empty())
    detail = fmt::format(", and it is below {}, the minimum driver for CUDA {}.x minor version "
                         "compatibility",
                         minimum, major);
  else if (!minimum.empty())
    detail = fmt::format(" (CUDA {}.x needs a driver of that family: {} or newer)", major,
                         minimum);
  out->add(g, {FindingCode::cuda_driver_too_old, Severity::error,
               fmt::format("has {} built for CUDA {} but {} supports CUDA {} at most{}", what,
                           built_for, driver_name, d.cuda_version, detail),
               fmt::format("a driver for CUDA {} or newer", built_for),
               fmt::format("CUDA {}", d.cuda_version),
               fmt::format("upgrade the NVIDIA driver to one that supports CUDA {}{}, or install "
                           "a build of {} for CUDA {}",
                           built_for,
                           minimum.empty() ? "" : fmt::format(" (at least {})", minimum), what,
                           d.cuda_version)});
}

void driver_rules(const ConfigGroup& g, const JudgeOptions& options, LocalFindings* out) {
  const RankRecord& r = g.record;
  const CudaDriverInfo& d = r.cuda_driver;
  driver_status_rules(g, options, out);
  driver_kernel_rules(g, out);
  if (d.status != DriverStatus::ok || d.cuda_version.empty()) return;
  if (nccl_found(r.nccl) && !r.nccl.cuda_build.empty())
    judge_cuda_build(g, fmt::format("NCCL {}", nccl_version_of(r.nccl)), r.nccl.cuda_build, out);
  if (r.torch.status == TorchStatus::ok && !r.torch.cuda.empty())
    judge_cuda_build(g, fmt::format("PyTorch {}", r.torch.version), r.torch.cuda, out);
}

// A PyTorch whose version cannot be read (version.py empty, binary or huge; libtorch_cuda.so
// not an ELF) is not "no torch": without a finding, ranks with a broken PyTorch would pass
// unnoticed and take no part in torch-version-mismatch.
void torch_rules(const ConfigGroup& g, LocalFindings* out) {
  const TorchInfo& t = g.record.torch;
  if (t.status != TorchStatus::error) return;
  std::string why = t.error.empty() ? "unknown reason" : t.error;
  out->add(g, {FindingCode::torch_unreadable, Severity::warning,
               fmt::format("has a PyTorch{} whose version cannot be read: {}",
                           t.path.empty() ? "" : " at " + t.path, why),
               "a readable PyTorch installation", why,
               "reinstall PyTorch in this Python environment (pip install --force-reinstall "
               "torch==<version>), or remove the damaged torch directory"});
}

void untrusted_rule(const ConfigGroup& g, LocalFindings* out) {
  const auto& libs = g.record.untrusted_libraries;
  if (libs.empty()) return;
  out->add(g, {FindingCode::probe_untrusted_library, Severity::warning,
               fmt::format("has {} writable by another user; read statically, not loaded: {}",
                           libs.size() == 1 ? "a library" : fmt::format("{} libraries", libs.size()),
                           short_list(libs, 4)),
               "libraries writable only by root", short_list(libs, 4),
               "make these files and their directories owned by root and not writable by group "
               "or others (chown root, chmod go-w), or remove them"});
}

// What the probe could not find out, or found its own emulation
// wrong about, is said as such, never silently dropped nor turned into a verdict on the job.
void probe_self_rules(const ConfigGroup& g, LocalFindings* out) {
  const RankRecord& r = g.record;
  for (const AbiCheck& abi : r.abi) {
    if (abi.error.empty()) continue;
    out->add(g, {FindingCode::nccl_abi_unchecked, Severity::warning,
                 fmt::format("could not check which NCCL symbols {} needs from {}: {}",
                             abi.consumer, abi.library, abi.error),
                 "readable dynamic symbol tables", abi.error,
                 "reinstall the library named (a copy with its section headers stripped or cut "
                 "short cannot be checked); the job itself may still run"});
  }
  for (const LoaderCheck& c : r.loader_checks) {
    if (c.loaded == c.emulated) continue;
    std::string loaded = c.loaded.empty() ? fmt::format("nothing ({})", c.error) : c.loaded;
    out->add(g, {FindingCode::probe_loader_disagreement, Severity::warning,
                 fmt::format("gets {} from the dynamic loader for {}, but denpex-probe's loader "
                             "emulation named {}: the record describes {}",
                             loaded, c.name, c.emulated, c.emulated),
                 c.emulated, loaded,
                 "report this to denpex-probe with the environment (LD_LIBRARY_PATH, LD_PRELOAD, "
                 "the directories named); until then check the library named first by hand "
                 "(LD_DEBUG=libs)"});
  }
  if (!r.probe_errors.empty()) {
    out->add(g, {FindingCode::probe_error, Severity::warning,
                 fmt::format("could not check everything: {}", short_list(r.probe_errors, 4)),
                 "every probe step to complete", short_list(r.probe_errors, 4),
                 "fix or remove the files named (they are not what the loader or Python expects "
                 "there), then rerun"});
  }
}

void timeout_rule(const std::vector<MissingRank>& missing, LocalFindings* out) {
  for (const auto& m : missing) {
    out->add({m.rank}, {m.host},
             {FindingCode::rank_timeout, Severity::error,
              m.reason.empty() ? "did not report before the deadline"
                               : fmt::format("did not report before the deadline: {}", m.reason),
              "a report", "no report",
              "check that these hosts are up and that the probe can run there (a library that "
              "hangs while loading, a stuck file system); rerun with a longer --timeout to tell "
              "slow from stuck"});
  }
}

// ---------------------------------------------------------------------------------------------
// Cross-group rules.

// How a rule talks about its attribute.
struct Attribute {
  FindingCode code;
  Severity severity;
  const char* topic;     // "the NCCL version", for "no majority for the NCCL version"
  const char* verb_one;  // "loads"
  const char* verb_many; // "load"
  VoteBy by;
  // The value in a sentence. `first`: its first mention ("NCCL 2.27.3"), else the short form
  // ("2.28.9") used after the reader knows what is compared.
  std::function<std::string(const std::string& value, bool first)> describe;
  std::string fix;
  // The value as expected/found show it; identity when empty.
  std::function<std::string(const std::string& value)> plain = nullptr;
};

std::string plain(const Attribute& a, const std::string& value) {
  return a.plain ? a.plain(value) : value;
}

std::string verb(const Attribute& a, const std::vector<int>& ranks) {
  return ranks.size() == 1 ? a.verb_one : a.verb_many;
}

Finding make_finding(const Attribute& a, const VoteValue& v) {
  Finding f;
  f.code = a.code;
  f.severity = a.severity;
  f.ranks = v.ranks;
  f.hosts = v.hosts;
  f.fix = a.fix;
  return f;
}

// Findings from a vote: the minority values against the reference, or one finding naming every
// value when the top ones tie.
void judge_vote(const Attribute& a, const VoteResult& result, std::vector<Finding>* out) {
  if (result.values.size() < 2) return;
  if (result.reference >= 0) {
    const VoteValue& ref = result.values[static_cast<std::size_t>(result.reference)];
    const char* unit = a.by == VoteBy::ranks ? "rank" : "host";
    for (std::size_t i = 0; i < result.values.size(); ++i) {
      if (static_cast<int>(i) == result.reference) continue;
      const VoteValue& v = result.values[i];
      Finding f = make_finding(a, v);
      f.expected = plain(a, ref.value);
      f.found = plain(a, v.value);
      f.message = fmt::format("{} {} {}, {} other {}{} {} {}", rank_phrase(v.ranks, v.hosts),
                              verb(a, v.ranks), a.describe(v.value, true), ref.weight, unit,
                              ref.weight == 1 ? "" : "s",
                              ref.weight == 1 ? a.verb_one : a.verb_many,
                              a.describe(ref.value, false));
      out->push_back(std::move(f));
    }
    return;
  }
  // No reference: nobody can say which side is right, so every holder is named.
  constexpr std::size_t kParts = 4;
  Finding f;
  f.code = a.code;
  f.severity = a.severity;
  f.fix = a.fix;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::vector<std::string> parts, found;
  for (const auto& v : result.values) {
    ranks.insert(v.ranks.begin(), v.ranks.end());
    hosts.insert(v.hosts.begin(), v.hosts.end());
    found.push_back(fmt::format("{} ({} {})", plain(a, v.value), v.ranks.size() == 1 ? "rank" : "ranks",
                                rank_ranges(v.ranks)));
    if (parts.size() < kParts) {
      parts.push_back(fmt::format("{} {} {}", rank_phrase(v.ranks, v.hosts), verb(a, v.ranks),
                                  a.describe(v.value, true)));
    }
  }
  f.ranks.assign(ranks.begin(), ranks.end());
  f.hosts.assign(hosts.begin(), hosts.end());
  f.found = fmt::format("{}", fmt::join(found, "; "));
  std::string more = result.values.size() > kParts
                         ? fmt::format("; and {} more values", result.values.size() - kParts)
                         : "";
  f.tied = true;
  f.message = fmt::format("no majority for {} ({} values, tied): {}{}", a.topic,
                          result.values.size(), fmt::join(parts, "; "), more);
  out->push_back(std::move(f));
}

// Findings for every holder of a value other than the baseline's.
void judge_baseline(const Attribute& a, const VoteResult& result, const std::string& pinned,
                    const Baseline& baseline, std::vector<Finding>* out) {
  std::string source = baseline.source.empty() ? "the baseline" : "baseline " + baseline.source;
  for (const auto& v : result.values) {
    if (v.value == pinned) continue;
    Finding f = make_finding(a, v);
    f.expected = plain(a, pinned);
    f.found = plain(a, v.value);
    f.message = fmt::format("{} {} {}, {} pins {}", rank_phrase(v.ranks, v.hosts),
                            verb(a, v.ranks), a.describe(v.value, true), source,
                            a.describe(pinned, false));
    out->push_back(std::move(f));
  }
}

// Runs one attribute: the vote between groups, then the baseline when it pins a value.
void judge_attribute(const Attribute& a, const std::vector<ConfigGroup>& groups,
                     const std::function<bool(const RankRecord&, std::string*)>& value_of,
                     const Baseline* baseline, const std::string* pinned,
                     std::vector<Finding>* out) {
  VoteResult result = vote(groups, value_of, a.by);
  judge_vote(a, result, out);
  if (baseline && pinned) judge_baseline(a, result, *pinned, *baseline, out);
}

std::string versioned(const char* what, const std::string& value, bool first) {
  return first ? fmt::format("{} {}", what, value) : value;
}

void nccl_version_rules(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                        std::vector<Finding>* out) {
  Attribute version_attr{FindingCode::nccl_version_mismatch, Severity::error, "the NCCL version",
                    "loads", "load",
                    VoteBy::ranks,
                    [](const std::string& v, bool first) { return versioned("NCCL", v, first); },
                    "install the same NCCL version on every node (and in every container image), "
                    "or pin one with LD_LIBRARY_PATH; ranks with different NCCL versions hang or "
                    "fail at communicator init"};
  auto version_of = [](const RankRecord& r, std::string* v) {
    if (!nccl_found(r.nccl)) return false;  // nccl-missing / nccl-unloadable say it
    *v = nccl_version_of(r.nccl);
    return !v->empty();
  };
  const std::string* pinned =
      baseline && !baseline->nccl_version.empty() ? &baseline->nccl_version : nullptr;
  judge_attribute(version_attr, groups, version_of, baseline, pinned, out);

  // Same version, different CUDA build: judged within each version, since across versions the
  // version finding already says everything.
  std::set<std::string> versions;
  for (const auto& g : groups) {
    std::string v;
    if (version_of(g.record, &v)) versions.insert(v);
  }
  for (const auto& nccl_version : versions) {
    Attribute build{FindingCode::nccl_build_mismatch, Severity::warning, "the CUDA build of NCCL",
                    "loads", "load",
                    VoteBy::ranks,
                    [nccl_version](const std::string& v, bool first) {
                      return first ? fmt::format("NCCL {}+cuda{}", nccl_version, v)
                                   : fmt::format("+cuda{}", v);
                    },
                    fmt::format("install the same NCCL {} package (built for one CUDA version) on "
                                "every node",
                                nccl_version)};
    auto build_of = [&nccl_version, &version_of](const RankRecord& r, std::string* v) {
      std::string version;
      if (!version_of(r, &version) || version != nccl_version) return false;
      *v = r.nccl.cuda_build;
      return !v->empty();
    };
    bool pin = baseline && !baseline->nccl_cuda_build.empty() &&
               (baseline->nccl_version.empty() || baseline->nccl_version == nccl_version);
    judge_attribute(build, groups, build_of, baseline, pin ? &baseline->nccl_cuda_build : nullptr,
                    out);
  }
}

// PyTorch absent where the baseline pins it, or absent from an image compared with a host
// record that has it: the job would fail at `import torch`, or the probe looked in the wrong
// place (an unusual Python layout). A warning, since only the second can be told from here.
void torch_missing_rule(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                        std::vector<Finding>* out) {
  std::string reference, reference_who;
  if (baseline && !baseline->torch_version.empty()) {
    reference = baseline->torch_version;
    reference_who = baseline->source.empty() ? "the baseline pins"
                                             : "baseline " + baseline->source + " pins";
  } else {
    for (const auto& g : groups) {
      if (g.record.mode == "static" || g.record.torch.status != TorchStatus::ok ||
          g.record.torch.version.empty())
        continue;
      reference = g.record.torch.version;
      reference_who = fmt::format("{} {}", rank_phrase(g.ranks, g.hosts),
                                  g.ranks.size() == 1 ? "runs" : "run");
      break;
    }
  }
  if (reference.empty()) return;
  const bool against_baseline = baseline && !baseline->torch_version.empty();
  for (const auto& g : groups) {
    if (g.record.torch.status != TorchStatus::missing) continue;
    if (!against_baseline && g.record.mode != "static") continue;
    Finding f;
    f.code = FindingCode::torch_missing;
    f.severity = Severity::warning;
    f.ranks = g.ranks;
    for (const auto& h : g.hosts)
      if (!h.empty() && std::find(f.hosts.begin(), f.hosts.end(), h) == f.hosts.end())
        f.hosts.push_back(h);
    f.expected = "PyTorch " + reference;
    f.found = "no PyTorch";
    f.message = fmt::format("{} {} no PyTorch, {} PyTorch {}", rank_phrase(g.ranks, g.hosts),
                            g.ranks.size() == 1 ? "has" : "have", reference_who, reference);
    f.fix = fmt::format(
        "install PyTorch {} where the job runs (in the image, or in the Python environment of "
        "the job); if it is installed in a place the probe does not search, name its "
        "site-packages with --site-packages",
        reference);
    out->push_back(std::move(f));
  }
}

void torch_version_rule(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                        std::vector<Finding>* out) {
  Attribute a{FindingCode::torch_version_mismatch, Severity::error, "the PyTorch version", "runs",
              "run",
              VoteBy::ranks,
              [](const std::string& v, bool first) { return versioned("PyTorch", v, first); },
              "install the same PyTorch version in every rank's Python environment (check the "
              "container image, VIRTUAL_ENV/CONDA_PREFIX and PYTHONPATH on the blamed hosts)"};
  // A rank without PyTorch is not running a different PyTorch (and a host report compared with
  // a container's usually has none): only ranks that have PyTorch vote.
  auto value_of = [](const RankRecord& r, std::string* v) {
    if (r.torch.status != TorchStatus::ok || r.torch.version.empty()) return false;
    *v = r.torch.version;
    return true;
  };
  const std::string* pinned =
      baseline && !baseline->torch_version.empty() ? &baseline->torch_version : nullptr;
  judge_attribute(a, groups, value_of, baseline, pinned, out);
  torch_missing_rule(groups, baseline, out);
}

void driver_version_rules(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                          std::vector<Finding>* out) {
  const char* fix =
      "install the same NVIDIA driver version on every node; mixed drivers are allowed by CUDA "
      "but make failures host-dependent and hard to reproduce";
  Attribute lib{FindingCode::cuda_driver_version_mismatch, Severity::warning, "the driver version",
                "runs", "run", VoteBy::hosts,
                [](const std::string& v, bool first) { return versioned("driver", v, first); },
                fix};
  auto lib_of = [](const RankRecord& r, std::string* v) {
    if (r.cuda_driver.status != DriverStatus::ok) return false;
    *v = r.cuda_driver.library_version;
    return !v->empty();
  };
  const std::string* pinned = baseline && !baseline->driver_library_version.empty()
                                  ? &baseline->driver_library_version
                                  : nullptr;
  judge_attribute(lib, groups, lib_of, baseline, pinned, out);

  // The CUDA version a driver supports follows from its version, so between ranks only the
  // library version is compared; a baseline may pin the CUDA version alone.
  if (baseline && !baseline->driver_cuda_version.empty()) {
    Attribute cuda{FindingCode::cuda_driver_version_mismatch, Severity::warning,
                   "the driver's CUDA version",
                   "has", "have", VoteBy::hosts,
                   [](const std::string& v, bool first) {
                     return first ? fmt::format("a driver for CUDA {}", v) : "CUDA " + v;
                   },
                   fix};
    auto cuda_of = [](const RankRecord& r, std::string* v) {
      if (r.cuda_driver.status != DriverStatus::ok) return false;
      *v = r.cuda_driver.cuda_version;
      return !v->empty();
    };
    VoteResult result = vote(groups, cuda_of, VoteBy::hosts);
    judge_baseline(cuda, result, baseline->driver_cuda_version, *baseline, out);
  }
}

std::string describe_plugin(const std::string& summary, bool /*first*/) {
  if (summary == "missing") return "no net plugin (NCCL's internal IB/socket transports)";
  if (summary == "disabled") return "the net plugin disabled (NCCL_NET_PLUGIN=none)";
  if (summary == "error") return "an unreadable net plugin";
  if (summary.rfind("ok ", 0) == 0) return "net plugin " + summary.substr(3);
  return "net plugin " + summary;
}

void net_plugin_rule(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                     std::vector<Finding>* out) {
  Attribute a{FindingCode::nccl_net_plugin_mismatch, Severity::error, "the NCCL net plugin", "gets",
              "get",
              VoteBy::ranks, describe_plugin,
              "install the same NCCL net plugin (libnccl-net.so, same version) on every node and "
              "make NCCL_NET_PLUGIN and LD_LIBRARY_PATH find it the same way; a rank without the "
              "plugin talks a different transport and the job hangs"};
  judge_vote(a, vote(groups,
                     [](const RankRecord& r, std::string* v) {
                       *v = net_plugin_summary(r.net_plugin);
                       return true;
                     },
                     VoteBy::ranks),
             out);
  if (!baseline || !baseline->pin_net_plugin) return;
  // A baseline pins what the plugin is (status and API versions), not where a site installs it.
  auto pinned_of = [](const std::string& status, const std::vector<std::string>& apis) {
    return status == "ok" ? fmt::format("ok ({})", api_versions_text(apis)) : status;
  };
  Attribute pinned_attr = a;
  pinned_attr.describe = [](const std::string& v, bool) {
    if (v.rfind("ok ", 0) == 0) return "a net plugin with API " + v.substr(3);
    return describe_plugin(v, true);
  };
  VoteResult result = vote(groups,
                           [&](const RankRecord& r, std::string* v) {
                             std::vector<std::string> apis = r.net_plugin.api_versions;
                             std::sort(apis.begin(), apis.end());
                             *v = pinned_of(to_string(r.net_plugin.status), apis);
                             return true;
                           },
                           VoteBy::ranks);
  judge_baseline(pinned_attr, result,
                 pinned_of(baseline->net_plugin_status, baseline->net_plugin_api_versions),
                 *baseline, out);
}

void env_rules(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
               std::vector<Finding>* out) {
  std::set<std::string> names;
  for (const auto& g : groups)
    for (const auto& kv : effective_nccl_settings(g.record)) names.insert(kv.first);
  bool pin = baseline && baseline->pin_nccl_env;
  if (pin)
    for (const auto& kv : baseline->nccl_env) names.insert(kv.first);

  for (const auto& name : names) {
    const WireVariable* wire = find_wire_variable(name);
    std::string fix = fmt::format(
        "set {} the same way on every rank, or nowhere; check the job script, the launcher's "
        "exported variables (mpirun -x, srun --export) and /etc/nccl.conf or ~/.nccl.conf on "
        "the blamed hosts",
        name);
    if (wire) fix += fmt::format(". It must match because it {}", wire->reason);
    Attribute a{FindingCode::nccl_env_mismatch, wire ? Severity::error : Severity::warning,
                name.c_str(),
                "has", "have", VoteBy::ranks,
                [name](const std::string& v, bool) {
                  // Values are stored as "=value" so that "unset" and "set to empty" differ.
                  return v.empty() ? name + " unset" : name + v;
                },
                fix};
    a.plain = [](const std::string& v) { return v.empty() ? std::string("(unset)") : v.substr(1); };
    auto value_of = [&name](const RankRecord& r, std::string* v) {
      auto s = effective_nccl_settings(r);
      auto it = s.find(name);
      *v = it == s.end() ? "" : "=" + it->second;
      return true;
    };
    VoteResult result = vote(groups, value_of, VoteBy::ranks);
    judge_vote(a, result, out);
    if (pin) {
      auto it = baseline->nccl_env.find(name);
      std::string pinned = it == baseline->nccl_env.end() ? "" : "=" + it->second;
      judge_baseline(a, result, pinned, *baseline, out);
    }
  }
}

// A baseline finding that repeats a cross-group finding (same code, ranks, expected and found)
// says nothing new: the majority is the baseline. Keep the first.
void drop_duplicates(std::vector<Finding>* findings) {
  std::set<std::tuple<FindingCode, std::vector<int>, std::string, std::string>> seen;
  std::vector<Finding> kept;
  for (auto& f : *findings) {
    if (!seen.insert({f.code, f.ranks, f.expected, f.found}).second) continue;
    kept.push_back(std::move(f));
  }
  *findings = std::move(kept);
}

}  // namespace

std::vector<Finding> judge(const std::vector<ConfigGroup>& all_groups,
                           const std::vector<MissingRank>& missing, const JudgeOptions& options) {
  std::vector<Finding> findings;
  try {
    std::vector<ConfigGroup> groups;
    for (const auto& g : all_groups)
      if (!g.ranks.empty()) groups.push_back(g);
    normalize_groups(&groups);

    const Baseline* baseline = options.baseline;
    const bool any_nccl = std::any_of(groups.begin(), groups.end(), [](const ConfigGroup& g) {
      return nccl_found(g.record.nccl);
    });
    const bool nccl_required =
        any_nccl || !baseline || !baseline->nccl_version.empty() ||
        !baseline->nccl_cuda_build.empty();
    LocalFindings local;
    for (const auto& g : groups) {
      nccl_rules(g, nccl_required, &local);
      torch_nccl_rules(g, &local);
      driver_rules(g, options, &local);
      torch_rules(g, &local);
      untrusted_rule(g, &local);
      probe_self_rules(g, &local);
      nccl_wheel_rules(g, &local);
      torch_pin_rule(g, &local);
    }
    timeout_rule(missing, &local);
    local.emit(&findings);

    nccl_version_rules(groups, baseline, &findings);
    torch_version_rule(groups, baseline, &findings);
    driver_version_rules(groups, baseline, &findings);
    net_plugin_rule(groups, baseline, &findings);
    env_rules(groups, baseline, &findings);
    device_rules(groups, baseline, &findings);
    device_setting_rules(groups, &findings);
    drop_duplicates(&findings);
  } catch (const std::exception& e) {
    // Only allocation failure or a formatting bug can get here; a verdict must still come out,
    // and it must not be a silent pass.
    Finding f;
    f.code = FindingCode::internal_error;
    f.message = fmt::format("denpex-probe could not judge this job: {}", e.what());
    f.fix = "report this as a bug in denpex-probe";
    findings.push_back(std::move(f));
  }
  sort_findings(&findings);
  return findings;
}

}  // namespace denpex
