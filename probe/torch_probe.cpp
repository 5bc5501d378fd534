#include "probe/torch_probe.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "probe/elf_file.h"
#include "probe/nccl_probe.h"
#include "probe/nccl_version.h"
#include "probe/text.h"
#include "probe/wheel_metadata.h"

namespace denpex {

namespace {

// version.py is a few hundred bytes; anything past this is not a version file.
constexpr size_t kMaxVersionPy = 64 * 1024;

// Value of a quoted literal, "" for None; false when the right-hand side is neither.
bool literal_value(const std::string& rhs, std::string* out) {
  std::string v = trim(rhs);
  if (v == "None") {
    out->clear();
    return true;
  }
  if (v.size() >= 2 && (v[0] == '\'' || v[0] == '"')) {
    size_t close = v.find(v[0], 1);
    if (close == std::string::npos) return false;
    *out = v.substr(1, close - 1);
    return true;
  }
  return false;
}

}  // namespace

VersionPy parse_version_py(const std::string& text) {
  VersionPy v;
  if (text.find('\0') != std::string::npos) {
    v.error = "not a text file (contains NUL bytes)";
    return v;
  }
  bool have_version = false;
  for (const std::string& line : split_lines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos || line.empty() || line[0] == ' ' || line[0] == '#') continue;
    std::string name = trim(line.substr(0, eq));
    name = trim(name.substr(0, name.find(':')));  // `cuda: Optional[str] = ...`
    std::string value;
    if (!literal_value(line.substr(eq + 1), &value)) continue;
    if (name == "__version__") {
      v.version = value;
      have_version = !value.empty();
    } else if (name == "cuda") {
      v.cuda = value;
    }
  }
  if (!have_version) {
    v.error = "no __version__ assignment";
    return v;
  }
  v.ok = true;
  return v;
}

std::string nccl_wheel_version(const FsView& fs, const std::string& site) {
  // nvidia_nccl_cu12-2.21.5.dist-info: the wheel name, a dash, the version.
  for (const auto& name : list_dir(fs, site, 100000, nullptr, "nvidia_nccl_cu")) {
    const std::string suffix = ".dist-info";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string stem = name.substr(0, name.size() - suffix.size());
    size_t dash = stem.find('-');
    if (dash != std::string::npos) return stem.substr(dash + 1);
  }
  return "";
}

namespace {

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::vector<std::string> nccl_imports(const ElfInfo& elf) {
  std::set<std::string> names;
  for (const auto& s : elf.dynsyms)
    if (!s.defined && s.name.rfind(kNcclPrefix, 0) == 0) names.insert(s.name);
  return {names.begin(), names.end()};
}

}  // namespace

AbiCheck check_nccl_abi(const std::string& consumer, const ElfInfo& consumer_elf,
                        const std::string& library, const std::string& library_host) {
  AbiCheck a;
  a.consumer = consumer;
  a.library = library;
  // A symbol table that cannot be read says nothing about what is exported; counting every
  // import as missing would make a false nccl-abi-mismatch.
  if (!consumer_elf.dynsyms_read) {
    a.error = fmt::format("cannot read the dynamic symbols of {}: {}", consumer,
                          consumer_elf.dynsyms_error);
    return a;
  }
  a.imported = nccl_imports(consumer_elf);
  // Only nccl* names are imported, so only they need to be known as exported.
  ElfInfo lib = read_elf(library_host, true, SymbolFilter{kNcclPrefix, false});
  if (lib.status != ElfStatus::ok || !lib.dynsyms_read) {
    a.error = fmt::format("cannot read the dynamic symbols of {}: {}", library,
                          lib.status != ElfStatus::ok ? to_string(lib.status) : lib.dynsyms_error);
    a.imported.clear();
    return a;
  }
  std::set<std::string> exported;
  for (const auto& s : lib.dynsyms)
    if (s.defined) exported.insert(s.name);
  for (const auto& name : a.imported)
    if (!exported.count(name)) a.missing.push_back(name);
  return a;
}

namespace {

// glibc's l_loader chain above libtorch_cuda.so in a Python process, nearest first: libtorch.so
// and libtorch_python.so (DT_NEEDED), the torch._C extension, the interpreter that dlopened it
// (<prefix>/bin/python3.X; conda's carries RPATH $ORIGIN/../lib, where conda's nccl package puts
// libnccl.so.2). Objects that are not there are left out. `elfs` keeps the ElfInfo the links
// point to.
std::vector<LoaderLink> python_loader_chain(const FsView& fs, const std::string& torch_dir,
                                            const std::string& site, std::vector<ElfInfo>* elfs) {
  std::vector<std::string> paths = {join_path(torch_dir, "lib/libtorch.so"),
                                    join_path(torch_dir, "lib/libtorch_python.so")};
  std::vector<std::string> names = list_dir(fs, torch_dir, 4096, nullptr);
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (n.rfind("_C.", 0) == 0 && n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) {
      paths.push_back(join_path(torch_dir, n));
      break;
    }
  // <prefix>/lib/python3.X/site-packages -> <prefix>/bin/python3.X
  const std::string pydir = dir_name(site);
  paths.push_back(join_path(join_path(dir_name(dir_name(pydir)), "bin"), base_name(pydir)));
  elfs->reserve(paths.size());
  std::vector<LoaderLink> chain;
  for (const auto& p : paths) {
    Resolved r = resolve(fs, p);
    if (r.status != ResolveStatus::ok) continue;
    elfs->push_back(read_elf(host_path(fs, r.path), false));
    if (elfs->back().status != ElfStatus::ok) {
      elfs->pop_back();
      continue;
    }
    chain.push_back({p, &elfs->back()});
  }
  return chain;
}

// The nvidia-nccl requirement in the METADATA of the torch distribution installed in `site`
// ("nvidia-nccl-cu12==2.20.5"), "" when there is none. Of several torch dist-infos (a broken
// upgrade leaves the old one), the one whose version is torch/version.py's without its local
// part (2.3.1 for 2.3.1+cu121).
std::string nccl_requirement_of(const FsView& fs, const std::string& site,
                                const std::string& version, const std::string& machine) {
  std::vector<DistInfo> dists;
  for (auto& d : list_dist_infos(fs, site, "torch"))
    if (d.project == "torch") dists.push_back(std::move(d));
  if (dists.empty()) return "";
  const std::string public_version = version.substr(0, version.find('+'));
  const DistInfo* chosen = &dists.front();
  for (const auto& d : dists)
    if (d.version == version || d.version == public_version) chosen = &d;
  std::vector<Requirement> reqs;
  if (!read_requirements(fs, chosen->dir, &reqs, nullptr)) return "";
  for (const auto& r : reqs)
    if (r.project.rfind("nvidia-nccl-", 0) == 0 && marker_applies(r.marker, machine))
      return r.project + r.spec;
  return "";
}

}  // namespace

namespace {

// torch/version.py read and parsed into t (version, CUDA); false with t's status and error set.
bool read_torch_version(const FsView& fs, TorchInfo* t, VersionPy* v) {
  std::string text;
  bool truncated = false;
  std::string why;
  if (!read_small_file(fs, join_path(t->path, "version.py"), kMaxVersionPy, &text, &truncated,
                       &why)) {
    t->status = TorchStatus::error;
    t->error = fmt::format("{}/version.py cannot be read: {}", t->path, why);
    return false;
  }
  if (truncated) {
    t->status = TorchStatus::error;
    t->error = fmt::format("{}/version.py is larger than {} KiB: not a torch version file",
                           t->path, kMaxVersionPy / 1024);
    return false;
  }
  *v = parse_version_py(text);
  if (!v->ok) {
    t->status = TorchStatus::error;
    t->error = fmt::format("{}/version.py: {}", t->path, v->error);
    return false;
  }
  return true;
}

// The NCCL libtorch_cuda.so names in DT_NEEDED, resolved as the loader would from torch/lib.
void torch_dynamic_nccl(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                        const SitePackagesDir& site, const Resolved& lib, const ElfInfo& elf,
                        const std::string& needed, TorchProbe* out, std::vector<std::string>* untrusted) {
  const FsView& fs = ctx.loader.fs;
  TorchInfo& t = out->torch;
  // $ORIGIN is the directory of the name the loader opened (torch/lib), not of the file a
  // symlinked libtorch_cuda.so points to (glibc _dl_new_object: l_origin from the open name).
  std::vector<ElfInfo> chain_elfs;
  Requester rq{join_path(t.path, "lib/libtorch_cuda.so"), &elf,
               python_loader_chain(fs, t.path, site.path, &chain_elfs), {}};
  Resolution res = resolve_library(ctx.loader, needed, rq);
  out->effective = inspect_nccl(ctx, res, untrusted);
  if (res.origin == "rpath" || res.origin == "runpath") {
    // Found through libtorch_cuda.so's own search path: the wheel (or a copy beside torch).
    out->effective.origin = "torch-" + res.origin;
  }
  t.nccl.path = out->effective.path;
  t.nccl.version = out->effective.version;
  t.nccl.cuda_build = out->effective.cuda_build;
  bool in_env = std::any_of(sites.begin(), sites.end(), [&](const SitePackagesDir& s) {
    return under(out->effective.path, s.path);
  });
  t.nccl.linkage = res.status != LoadStatus::found ? "" : in_env ? "wheel" : "system";
  if (res.status == LoadStatus::found) {
    out->abi.push_back(check_nccl_abi(lib.path, elf, res.real_path, host_path(fs, res.real_path)));
  }
}

}  // namespace

TorchProbe probe_torch(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                       std::vector<std::string>* untrusted) {
  TorchProbe out;
  const FsView& fs = ctx.loader.fs;
  const SitePackagesDir* site = nullptr;
  for (const auto& s : sites) {
    if (resolve(fs, join_path(s.path, "torch/version.py")).status == ResolveStatus::ok) {
      site = &s;
      break;
    }
  }
  if (!site) return out;  // missing
  TorchInfo& t = out.torch;
  t.site_packages = site->path;
  t.path = join_path(site->path, "torch");
  VersionPy v;
  if (!read_torch_version(fs, &t, &v)) return out;
  t.status = TorchStatus::ok;
  t.version = v.version;
  t.cuda = v.cuda;
  t.nccl_requirement =
      nccl_requirement_of(fs, site->path, t.version, machine_name(ctx.loader.machine));

  // The wheel NCCL pip installed for this torch, whether or not it is what gets loaded.
  std::string wheel_lib = join_path(site->path, "nvidia/nccl/lib/libnccl.so.2");
  Resolved wheel = resolve(fs, wheel_lib);
  if (wheel.status == ResolveStatus::ok) {
    t.bundled.path = wheel.path;
    t.bundled.linkage = "wheel";
    ctx.nccl_literals.read(host_path(fs, wheel.path), &t.bundled.version, &t.bundled.cuda_build);
    if (t.bundled.version.empty()) t.bundled.version = nccl_wheel_version(fs, site->path);
  }

  Resolved lib = resolve(fs, join_path(t.path, "lib/libtorch_cuda.so"));
  if (lib.status != ResolveStatus::ok) {
    t.build = "cpu";  // no libtorch_cuda.so: uses no NCCL
    return out;
  }
  t.build = "cuda";
  t.libtorch_cuda = lib.path;
  ElfInfo elf = read_elf(host_path(fs, lib.path), true, kNcclImports);
  if (elf.status != ElfStatus::ok) {
    t.status = TorchStatus::error;
    t.error = fmt::format("{}: {}", lib.path, to_string(elf.status));
    return out;
  }
  auto needs = std::find_if(elf.needed.begin(), elf.needed.end(), [](const std::string& n) {
    return n.rfind("libnccl.so", 0) == 0;
  });
  out.has_nccl = true;
  if (needs != elf.needed.end()) {
    torch_dynamic_nccl(ctx, sites, *site, lib, elf, *needs, &out, untrusted);
    return out;
  }
  // No libnccl in DT_NEEDED: NCCL linked in (USE_STATIC_NCCL); its literal is in .rodata.
  std::string version, cuda_build;
  if (ctx.nccl_literals.read(host_path(fs, lib.path), &version, &cuda_build)) {
    NcclInfo& n = out.effective;
    n.status = NcclStatus::ok;
    n.method = "static";
    n.origin = "torch-static";
    n.path = lib.path;
    n.version = n.static_version = version;
    n.cuda_build = cuda_build;
    n.version_code = nccl_version_code(parse_nccl_literal("NCCL version " + version));
    t.nccl = {lib.path, version, cuda_build, "static"};
    return out;
  }
  out.has_nccl = false;  // a CUDA torch without NCCL (USE_NCCL=0)
  return out;
}

}  // namespace denpex
