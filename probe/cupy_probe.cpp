#include "probe/cupy_probe.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "probe/elf_file.h"
#include "probe/nccl_probe.h"
#include "probe/torch_probe.h"
#include "probe/wheel_metadata.h"

namespace denpex {

namespace {

// _wheel.json is a few hundred bytes; past this it is not CuPy's.
constexpr size_t kMaxWheelJson = 64 * 1024;

// What cupy/.data/_wheel.json says about NCCL. `preload` is false when CuPy would not preload
// (no file, conda packaging, no nccl entry, or a file that does not parse).
struct PreloadConfig {
  bool preload = false;
  std::string cuda;              // "12.x"
  std::string version;           // "2.25.1"
  std::string min_pypi_version;  // "2.16.5"
  std::vector<std::string> filenames;  // "libnccl.so.2.25.1"
};

std::string json_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

PreloadConfig read_preload_config(const FsView& fs, const std::string& cupy_dir) {
  PreloadConfig c;
  std::string text;
  bool truncated = false;
  if (!read_small_file(fs, join_path(cupy_dir, ".data/_wheel.json"), kMaxWheelJson, &text,
                       &truncated) || truncated)
    return c;
  // Depth-capped: the file is CuPy's two levels; anything deeper is not it.
  auto shallow = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    return depth <= 4;
  };
  nlohmann::json j = nlohmann::json::parse(text, shallow, false);
  if (!j.is_object() || json_string(j, "packaging") != "pip") return c;
  auto n = j.find("nccl");
  if (n == j.end() || !n->is_object()) return c;
  c.cuda = json_string(j, "cuda");
  c.version = json_string(*n, "version");
  c.min_pypi_version = json_string(*n, "min_pypi_version");
  auto files = n->find("filenames");
  if (files != n->end() && files->is_array())
    for (const auto& f : *files)
      if (f.is_string() && f.get<std::string>().find('/') == std::string::npos)
        c.filenames.push_back(f.get<std::string>());
  c.preload = !c.cuda.empty() && !c.version.empty() && !c.filenames.empty();
  return c;
}

// CuPy's _find_compatible_wheel: same major, and at least the minimum.
bool compatible(const std::string& have, const std::string& minimum) {
  std::string major = minimum.substr(0, minimum.find('.'));
  return spec_matches(have, "==" + major + ".*") == SpecMatch::yes &&
         spec_matches(have, ">=" + minimum) == SpecMatch::yes;
}

// The files CuPy tries, in its order, each with the words that say why.
std::vector<std::pair<std::string, std::string>> preload_candidates(
    const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites, const PreloadConfig& c) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string cuda_major = c.cuda.substr(0, c.cuda.find('.'));
  const std::string project = "nvidia-nccl-cu" + cuda_major;
  for (const auto& s : sites) {
    std::vector<DistInfo> dists = list_dist_infos(ctx.loader.fs, s.path, project);
    auto d = std::find_if(dists.begin(), dists.end(),
                          [&](const DistInfo& x) { return x.project == project; });
    if (d == dists.end()) continue;  // importlib.metadata takes the first on the path
    if (compatible(d->version, c.min_pypi_version))
      out.push_back({join_path(s.path, "nvidia/nccl/lib/libnccl.so." +
                                           c.min_pypi_version.substr(0, c.min_pypi_version.find('.'))),
                     fmt::format("the {} {} wheel (at least {})", project, d->version,
                                 c.min_pypi_version)});
    break;
  }
  std::string lib_path = env_value(ctx, "CUPY_CUDA_LIB_PATH");
  if (lib_path.empty()) {
    std::string home = env_value(ctx, "HOME");
    if (!home.empty()) lib_path = join_path(home, ".cupy/cuda_lib");
  } else if (lib_path[0] != '/') {
    lib_path = join_path(ctx.loader.cwd, lib_path);
  }
  for (const auto& file : c.filenames)
    for (const char* sub : {"lib", "lib64", "bin"})
      if (!lib_path.empty())
        out.push_back({join_path(lib_path, fmt::format("{}/nccl/{}/{}/{}", c.cuda, c.version,
                                                       sub, file)),
                       "CuPy's library directory (CUPY_CUDA_LIB_PATH, ~/.cupy/cuda_lib)"});
  return out;
}

// The nccl extension module: cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so.
std::string nccl_extension(const FsView& fs, const std::string& site) {
  const std::string dir = join_path(site, "cupy_backends/cuda/libs");
  std::vector<std::string> names = list_dir(fs, dir, 4096, nullptr);
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (n.rfind("nccl.", 0) == 0 && n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0)
      return join_path(dir, n);
  return "";
}

// The library CuPy's preload picks: the first candidate the loader can map (ctypes.CDLL of a
// path), else the json's file names through the loader. false when there is nothing to preload.
bool preload_resolution(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                        const PreloadConfig& c, Resolution* res, std::string* rule) {
  for (const auto& [path, why] : preload_candidates(ctx, sites, c)) {
    if (resolve(ctx.loader.fs, path).status != ResolveStatus::ok) continue;
    *res = resolve_library(ctx.loader, path, Requester{});
    // A file that does not load is warned about by CuPy, which goes on to the next.
    if (res->status != LoadStatus::found) continue;
    *rule = "preloaded by import cupy.cuda.nccl: " + why;
    return true;
  }
  for (const auto& file : c.filenames) {
    *res = resolve_library(ctx.loader, file, Requester{});
    if (res->status != LoadStatus::found) continue;
    *rule = "preloaded by import cupy.cuda.nccl: " + file + " through the loader";
    return true;
  }
  return false;
}

CupyProbe probe_cupy_nccl(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                          const std::string& ext, std::vector<std::string>* untrusted,
                          CupyProbe out) {
  FrameworkInfo& f = out.cupy;
  const FsView& fs = ctx.loader.fs;
  Resolved ext_real = resolve(fs, ext);
  ElfInfo elf = read_elf(host_path(fs, ext_real.path), true, kNcclImports);
  PreloadConfig c = read_preload_config(fs, f.path);
  Resolution res;
  if (!c.preload || !preload_resolution(ctx, sites, c, &res, &f.nccl_rule)) {
    f.nccl_rule = c.preload ? "nothing to preload: the nccl extension's DT_NEEDED libnccl.so.2"
                            : "no preload (not a pip wheel of CuPy): the nccl extension's "
                              "DT_NEEDED libnccl.so.2";
    res = resolve_library(ctx.loader, "libnccl.so.2", Requester{ext_real.path, &elf, {}, {}});
  }
  NcclInfo n = inspect_nccl(ctx, res, untrusted);
  if (n.path.empty()) {
    f.error = n.error;
    return out;
  }
  f.nccl = {n.path, n.version.empty() ? n.static_version : n.version, n.cuda_build,
            in_site_packages(n.path, sites) ? "wheel" : "system"};
  if (n.status == NcclStatus::unloadable) f.error = n.error;
  if (res.status == LoadStatus::found && elf.status == ElfStatus::ok)
    out.abi.push_back(check_nccl_abi(ext, elf, res.real_path, host_path(fs, res.real_path)));
  return out;
}

}  // namespace

CupyProbe probe_cupy(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                     std::vector<std::string>* untrusted) {
  CupyProbe out;
  FrameworkInfo& f = out.cupy;
  const FsView& fs = ctx.loader.fs;
  const std::string dir = find_python_package(fs, sites, "cupy");
  if (dir.empty()) return out;
  f.path = dir;
  f.site_packages = dir_name(dir);
  std::string why;
  if (!read_python_string(fs, join_path(dir, "_version.py"), "__version__", &f.version, &why)) {
    f.status = FrameworkStatus::error;
    f.error = why;
    return out;
  }
  f.status = FrameworkStatus::ok;
  for (const auto& d : list_dist_infos(fs, f.site_packages, "cupy"))
    if (d.project.rfind("cupy", 0) == 0) f.package = fmt::format("{} {}", d.project, d.version);
  const std::string ext = nccl_extension(fs, f.site_packages);
  if (ext.empty()) {
    f.error = "this CuPy has no NCCL extension (cupy_backends/cuda/libs/nccl.*.so)";
    return out;
  }
  return probe_cupy_nccl(ctx, sites, ext, untrusted, std::move(out));
}

}  // namespace denpex
