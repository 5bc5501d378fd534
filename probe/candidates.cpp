#include "probe/candidates.h"

#include <algorithm>
#include <set>

#include "probe/elf_file.h"
#include "probe/nccl_probe.h"

namespace denpex {

namespace {

constexpr size_t kMaxDirEntries = 20000;

struct Collector {
  const ProbeContext& ctx;
  std::set<std::string> seen;     // real view paths of files
  std::set<std::string> scanned;  // real view paths of directories
  std::vector<NcclCandidate> out;
  std::vector<std::string>* foreign;

  void add_file(const std::string& view_path, const std::string& origin) {
    Resolved r = resolve(ctx.loader.fs, view_path);
    if (r.status != ResolveStatus::ok || !seen.insert(r.path).second) return;
    ElfInfo elf = read_elf(host_path(ctx.loader.fs, r.path), false);
    if ((elf.status == ElfStatus::ok || elf.status == ElfStatus::unsupported) &&
        elf.machine != ctx.loader.machine) {
      // The loader passes over it: it is nobody's NCCL here.
      if (foreign)
        foreign->push_back(r.path + " (built for " + machine_name(elf.machine) +
                           (ctx.loader.image_arch_known ? ", the image is " : ", this is ") +
                           machine_name(ctx.loader.machine) + ")");
      return;
    }
    NcclCandidate c;
    c.path = r.path;
    c.origin = origin;
    ctx.nccl_literals.read(host_path(ctx.loader.fs, r.path), &c.version, &c.cuda_build);
    out.push_back(std::move(c));
  }

  void scan_dir(const std::string& dir, const std::string& origin) {
    // /lib is /usr/lib on merged-/usr systems and /usr/local/cuda is /usr/local/cuda-X.Y: list
    // each real directory once.
    Resolved real = resolve(ctx.loader.fs, dir);
    if (real.status != ResolveStatus::ok || !scanned.insert(real.path).second) return;
    std::vector<std::string> names =
        list_dir(ctx.loader.fs, real.path, kMaxDirEntries, nullptr, "libnccl.so");
    std::sort(names.begin(), names.end());
    for (const auto& n : names) add_file(join_path(real.path, n), origin);
  }
};

}  // namespace

std::vector<NcclCandidate> find_nccl_candidates(const ProbeContext& ctx,
                                                const std::vector<SitePackagesDir>& sites,
                                                const NcclInfo& static_torch,
                                                std::vector<std::string>* foreign) {
  Collector c{ctx, {}, {}, {}, foreign};
  for (const auto& d : ctx.loader.library_path) c.scan_dir(d, "LD_LIBRARY_PATH");
  for (const auto& e : ctx.loader.cache.entries)
    if (e.name.rfind("libnccl.so", 0) == 0 && e.flags == ctx.loader.arch.cache_flags)
      c.add_file(e.path, "ld.so.cache");
  for (const auto& d : ctx.loader.system_dirs) c.scan_dir(d, "system-dir");
  // The CUDA toolkit's default install locations (/usr/local/cuda, /usr/local/cuda-X.Y).
  std::vector<std::string> local =
      list_dir(ctx.loader.fs, "/usr/local", kMaxDirEntries, nullptr, "cuda");
  std::sort(local.begin(), local.end());
  for (const auto& n : local) {
    for (const char* sub : {"lib", "lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib",
                            "targets/aarch64-linux/lib"})
      c.scan_dir(join_path(join_path("/usr/local", n), sub), "cuda-toolkit");
  }
  for (const auto& s : sites) c.scan_dir(join_path(s.path, "nvidia/nccl/lib"), "python-env");
  if (!static_torch.path.empty() && c.seen.insert(static_torch.path).second)
    c.out.push_back({static_torch.path, static_torch.version, static_torch.cuda_build,
                     "torch-static"});
  return c.out;
}

}  // namespace denpex
