#include "probe/probe.h"

#include <fmt/format.h>

#include "probe/candidates.h"
#include "probe/cuda_driver_probe.h"
#include "probe/cupy_probe.h"
#include "probe/device_probe.h"
#include "probe/device_settings.h"
#include "probe/jax_probe.h"
#include "probe/library_probe.h"
#include "probe/loader_check.h"
#include "probe/nccl_probe.h"
#include "probe/plugin_probe.h"
#include "probe/python_env.h"
#include "probe/settings_probe.h"
#include "probe/torch_probe.h"
#include "probe/trust.h"

extern char** environ;

namespace denpex {

const char* probe_version() { return DENPEX_VERSION; }

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

namespace {

// Where the device facts are read, and the NVML this process would load: resolved as the loader
// would, and as root only from a path no other user can write (trust.h), like every library the
// probe loads.
DeviceRoots device_roots(const ProbeContext& ctx, const ProbeOptions& o, const FsView& fs) {
  DeviceRoots roots;
  roots.proc = o.proc_root;
  roots.sys = o.sys_root;
  if (!o.nvml) {
    roots.nvml_why = "NVML is not asked (ProbeOptions::nvml)";
    return roots;
  }
  Resolution res = resolve_library(ctx.loader, "libnvidia-ml.so.1", Requester{});
  if (res.status != LoadStatus::found) {
    roots.nvml_why = "no libnvidia-ml.so.1 resolves in this environment";
    return roots;
  }
  TrustCheck trust = check_trusted_with_needed(ctx.loader, res.real_path, ctx.running_as_root);
  if (!trust.trusted) {
    roots.nvml_why = fmt::format("{} not loaded: {}", host_path(fs, res.real_path), trust.reason);
    return roots;
  }
  roots.nvml = host_path(fs, res.real_path);
  return roots;
}

// The driver's library when its version call may be made (found, and as root trusted): the
// device child makes it, so a GPU node forks once for both.
void add_driver_call(const ProbeContext& ctx, DeviceRoots* roots) {
  LibraryProbe lp;
  const Resolution res = resolve_library(ctx.loader, kDriverLibrary, Requester{});
  if (!prepare_library_call(ctx, res, kDriverVersionSymbol, nullptr, &lp)) return;
  roots->driver = lp.host;
  roots->driver_symbol = kDriverVersionSymbol;
}

// What every step knows of the probed process (probe_context.h), for a live process or an image.
ProbeContext make_context(const ProbeOptions& o, const FsView& fs, const TreeArch& arch,
                          bool image) {
  ProbeContext ctx;
  ctx.env = o.env;
  ctx.loader = make_loader_env(fs, env_value(ctx, "LD_PRELOAD"),
                               env_value(ctx, "LD_LIBRARY_PATH"),
                               arch.status == TreeArchStatus::ok ? arch.machine : 0);
  ctx.running_as_root = o.running_as_root;
  ctx.allow_load = !image;
  ctx.step_timeout = o.step_timeout;
  ctx.site_packages = o.site_packages;
  ctx.kernel_version_files = image ? std::vector<std::string>{} : o.kernel_version_files;
  return ctx;
}

// The device files, NVML and the driver's version call are read by a child from the start,
// beside the rest of the probe: the fork and a driver slow to answer then cost the probe little.
DeviceRead start_devices(const ProbeContext& ctx, const ProbeOptions& o, const FsView& fs) {
  DeviceRoots roots = device_roots(ctx, o, fs);
  add_driver_call(ctx, &roots);
  return start_device_read(roots);
}

// Where the record comes from: the probe's version, live or an image, its architecture, and for
// an image the name findings give it.
void fill_origin(const ProbeOptions& o, const TreeArch& arch, bool image, RankRecord* out) {
  RankRecord& r = *out;
  r.probe_version = probe_version();
  r.mode = image ? "static" : "live";
  if (image) {
    r.root = o.root;
    r.arch = arch.status == TreeArchStatus::ok ? arch.name : "";
    r.arch_source = arch.source;
    // run_single refuses a contradiction or an unsupported machine with exit 2 before probing.
    // A tree with neither (a bare test tree, a scratch image) is not guessed at: arch stays ""
    // and arch_source says which rules were used instead.
    if (arch.status != TreeArchStatus::ok)
      r.arch_source = fmt::format("unknown: no ld.so or ELF /bin/sh in the tree (loader emulated "
                                  "for {}, this machine)",
                                  machine_name(host_machine()));
  } else {
    r.arch_source = "this system";
  }
  if (o.pid > 0) r.pid = o.pid;
  if (image) {
    // A record of an image, not of this machine: findings name it as the image.
    r.host = kImageHostPrefix + (o.image_name.empty() ? o.root : o.image_name);
    r.container = true;
  }
}

}  // namespace

RankRecord probe_rank(const ProbeOptions& o) {
  auto step = [&o](const char* what) {
    if (o.on_step) o.on_step(what);
  };
  step("reading the loader configuration (LD_PRELOAD, /etc/ld.so.cache)");
  const bool image = !(o.root.empty() || o.root == "/");
  FsView fs{image ? o.root : "/"};
  // The target's machine decides the loader's rules; when it cannot be known the record says so
  // and nothing is judged against a guessed machine (decide_tree_arch).
  TreeArch arch = decide_tree_arch(fs, image ? o.arch : "");
  ProbeContext ctx = make_context(o, fs, arch, image);
  DeviceRead devices;
  if (!image) devices = start_devices(ctx, o, fs);

  RankRecord r;
  fill_identity(ctx, &r);
  fill_origin(o, arch, image, &r);
  if (ctx.loader.cache.status == LdCacheStatus::malformed)
    r.probe_errors.push_back(fmt::format("{}: {}", host_path(fs, "/etc/ld.so.cache"),
                                         ctx.loader.cache.error));

  step("the NCCL the loader resolves (libnccl.so.2)");
  r.system_nccl = probe_system_nccl(ctx, &r.untrusted_libraries);
  step("PyTorch (site-packages, torch/version.py, libtorch_cuda.so)");
  std::vector<SitePackagesDir> sites = find_site_packages(ctx);
  TorchProbe tp = probe_torch(ctx, sites, &r.untrusted_libraries);
  r.torch = tp.torch;
  r.abi = tp.abi;
  // PyTorch present: the NCCL that matters is the one libtorch_cuda.so gets.
  r.nccl = tp.has_nccl ? tp.effective : r.system_nccl;
  r.nccl_wheels = find_nccl_wheels(fs, sites, &ctx.nccl_literals);
  if (!r.torch.nccl_requirement.empty())
    r.torch.nccl_requirement_met = requirement_met(r.torch.nccl_requirement, r.nccl_wheels);
  step("JAX's CUDA plugin and CuPy (the NCCL each loads)");
  r.jax = probe_jax(ctx, sites, &r.untrusted_libraries);
  CupyProbe cp = probe_cupy(ctx, sites, &r.untrusted_libraries);
  r.cupy = cp.cupy;
  r.abi.insert(r.abi.end(), cp.abi.begin(), cp.abi.end());
  step("other NCCL libraries on the node");
  r.nccl_candidates = find_nccl_candidates(
      ctx, sites, tp.effective.method == "static" ? tp.effective : NcclInfo{},
      &r.foreign_libraries);
  step("the CUDA driver (libcuda.so.1, the kernel module)");
  // The device child made the driver's call: its answer is needed now.
  if (!devices.driver.empty()) {
    r.devices = finish_device_read(&devices, o.step_timeout);
    ctx.prefetched.push_back({devices.driver, devices.driver_symbol, devices.driver_answer});
  }
  r.cuda_driver = probe_cuda_driver(ctx, &r.untrusted_libraries);
  // The emulation checked against the real loader for what was loaded live.
  if (loader_check_possible(ctx)) {
    step("checking the loader emulation against ld.so");
    if (r.system_nccl.status == NcclStatus::ok)
      r.loader_checks.push_back(check_against_loader(ctx, "libnccl.so.2"));
    if (r.cuda_driver.status == DriverStatus::ok || r.cuda_driver.status == DriverStatus::stub)
      r.loader_checks.push_back(check_against_loader(ctx, "libcuda.so.1"));
  }
  step("NCCL plugins and settings (NCCL_*, nccl.conf)");
  const std::string nccl_path =
      r.nccl.method == "dlopen" && !r.nccl.path.empty() ? r.nccl.path : "";
  r.net_plugin = probe_plugin(ctx, PluginKind::net, nccl_path);
  r.tuner_plugin = probe_plugin(ctx, PluginKind::tuner, nccl_path);
  r.profiler_plugin = probe_plugin(ctx, PluginKind::profiler, nccl_path);
  r.nccl_env = nccl_env_settings(ctx);
  r.nccl_conf = nccl_conf_settings(ctx);
  // An image's devices are the nodes' it will run on: they are read there, not here.
  // An image's settings that name devices (its ENV, its nccl.conf) are kept, unknown: they are
  // checked on each node, against that node's devices.
  if (image) {
    r.devices = devices_not_probed();
  } else {
    step("the devices (GPUs, RDMA devices, GPUDirect, NVSwitch)");
    if (devices.driver.empty()) r.devices = finish_device_read(&devices, o.step_timeout);
  }
  r.devices.settings = check_device_settings(
      o.env, r.nccl_conf, r.devices,
      SettingHost{r.container, r.net_plugin.status == PluginStatus::ok});
  return r;
}

}  // namespace denpex
