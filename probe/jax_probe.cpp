#include "probe/jax_probe.h"

#include <fmt/format.h>

#include "probe/elf_file.h"
#include "probe/nccl_probe.h"
#include "probe/wheel_metadata.h"

namespace denpex {

namespace {

// "jax-cuda12-plugin 0.6.2" from the dist-info beside the plugin, "" when there is none.
std::string plugin_package(const FsView& fs, const std::string& site) {
  for (const char* project : {"jax-cuda12-plugin", "jax-cuda12-pjrt"})
    for (const auto& d : list_dist_infos(fs, site, project))
      if (d.project == project) return fmt::format("{} {}", d.project, d.version);
  return "";
}

// What the plugin would load: the nvidia.nccl package's library, else the plugin's dlopen.
Resolution jax_nccl_resolution(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                               const std::string& plugin_dir, std::string* rule) {
  const FsView& fs = ctx.loader.fs;
  std::string nvidia_nccl = find_python_package(fs, sites, "nvidia.nccl");
  if (!nvidia_nccl.empty()) {
    std::string lib = join_path(nvidia_nccl, "lib/libnccl.so.2");
    if (resolve(fs, lib).status == ResolveStatus::ok) {
      *rule = "the nvidia.nccl package's lib/libnccl.so.2 (loaded by path)";
      return resolve_library(ctx.loader, lib, Requester{});
    }
  }
  *rule = "xla_cuda_plugin.so's dlopen of libnccl.so.2 (no nvidia.nccl package with the library)";
  std::string so = join_path(plugin_dir, "xla_cuda_plugin.so");
  Resolved real = resolve(fs, so);
  if (real.status != ResolveStatus::ok) {
    Resolution none;
    none.error = so + " is missing";
    return none;
  }
  ElfInfo elf = read_elf(host_path(fs, real.path), false);
  return resolve_library(ctx.loader, "libnccl.so.2", Requester{so, &elf, {}, {}});
}

}  // namespace

FrameworkInfo probe_jax(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                        std::vector<std::string>* untrusted) {
  FrameworkInfo f;
  const FsView& fs = ctx.loader.fs;
  const std::string jax_dir = find_python_package(fs, sites, "jax");
  const std::string plugin_dir = find_python_package(fs, sites, "jax_plugins.xla_cuda12");
  if (jax_dir.empty() || plugin_dir.empty()) return f;  // missing: no CUDA JAX, no NCCL
  f.path = plugin_dir;
  f.site_packages = dir_name(dir_name(plugin_dir));
  std::string why;
  if (!read_python_string(fs, join_path(jax_dir, "version.py"), "_version", &f.version, &why)) {
    f.status = FrameworkStatus::error;
    f.error = why;
    return f;
  }
  f.status = FrameworkStatus::ok;
  f.package = plugin_package(fs, f.site_packages);
  Resolution res = jax_nccl_resolution(ctx, sites, plugin_dir, &f.nccl_rule);
  if (res.status != LoadStatus::found && !res.error.empty() && res.path.empty()) {
    f.error = res.error;
    return f;
  }
  NcclInfo n = inspect_nccl(ctx, res, untrusted);
  if (n.path.empty()) {
    f.error = n.error;
    return f;
  }
  f.nccl = {n.path, n.version.empty() ? n.static_version : n.version, n.cuda_build,
            in_site_packages(n.path, sites) ? "wheel" : "system"};
  if (n.status == NcclStatus::unloadable) f.error = n.error;
  return f;
}

}  // namespace denpex
