#include "probe/python_env.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "probe/nccl_literals.h"
#include "probe/text.h"
#include "probe/wheel_metadata.h"

namespace denpex {

namespace {

bool is_dir(const FsView& fs, const std::string& view) {
  struct stat st {};
  return ::stat(host_path(fs, view).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const FsView& fs, const std::string& view) {
  struct stat st {};
  return ::stat(host_path(fs, view).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string first_line(const FsView& fs, const std::string& view) {
  std::string text;
  if (!read_small_file(fs, view, 4096, &text, nullptr)) return "";
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

// The site-packages of an interpreter installed at `prefix`; Debian's /usr adds /usr/local (pip
// as root) and /usr/lib/python3/dist-packages (packages).
std::vector<std::string> interpreter_site_dirs(const FsView& fs, const std::string& prefix) {
  std::vector<std::string> out = prefix_site_dirs(fs, prefix);
  if (prefix == "/usr") {
    for (auto& d : prefix_site_dirs(fs, "/usr/local")) out.push_back(d);
    if (is_dir(fs, "/usr/lib/python3/dist-packages"))
      out.push_back("/usr/lib/python3/dist-packages");
  }
  return out;
}

struct PyvenvCfg {
  bool found = false;
  std::string home;     // `home = <prefix>/bin` of the base interpreter
  bool system = false;  // include-system-site-packages = true
};

PyvenvCfg read_pyvenv_cfg(const FsView& fs, const std::string& venv) {
  PyvenvCfg cfg;
  std::string text;
  if (!read_small_file(fs, join_path(venv, "pyvenv.cfg"), 64 * 1024, &text, nullptr)) return cfg;
  cfg.found = true;
  for (const std::string& line : split_lines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "home") cfg.home = value;
    if (key == "include-system-site-packages") {
      std::transform(value.begin(), value.end(), value.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      cfg.system = value == "true";
    }
  }
  return cfg;
}

// A venv's own site-packages, then, when its pyvenv.cfg says `include-system-site-packages =
// true`, those of the base interpreter it names with `home = <prefix>/bin` (Python's site.py
// appends them after the venv's).
std::vector<SitePackagesDir> venv_site_dirs(const FsView& fs, const std::string& venv,
                                            const std::string& source) {
  std::vector<SitePackagesDir> out;
  for (auto& d : prefix_site_dirs(fs, venv)) out.push_back({d, source});
  PyvenvCfg cfg = read_pyvenv_cfg(fs, venv);
  if (!cfg.system || cfg.home.empty() || cfg.home[0] != '/') return out;
  for (auto& d : interpreter_site_dirs(fs, dir_name(cfg.home)))
    out.push_back({d, source + " (base interpreter, include-system-site-packages)"});
  return out;
}

// The venv the first python3 on PATH belongs to, "" when it is not a venv's.
std::string path_python_venv(const ProbeContext& ctx) {
  for (const std::string& dir : split_nonempty(env_value(ctx, "PATH"), ':')) {
    if (dir[0] != '/' || !is_file(ctx.loader.fs, join_path(dir, "python3"))) continue;
    return is_file(ctx.loader.fs, join_path(dir_name(dir), "pyvenv.cfg")) ? dir_name(dir) : "";
  }
  return "";
}

// Whether Python adds the user site directory (~/.local/lib/python3.X/site-packages, where
// `pip install --user` puts packages): not under PYTHONNOUSERSITE, and not in a venv that
// leaves the system site-packages out (site.py's venv() turns ENABLE_USER_SITE off there).
bool user_site_enabled(const ProbeContext& ctx) {
  if (!env_value(ctx, "PYTHONNOUSERSITE").empty()) return false;
  std::string venv = env_value(ctx, "VIRTUAL_ENV");
  if (venv.empty()) venv = path_python_venv(ctx);
  if (venv.empty()) return true;
  if (venv[0] != '/') venv = join_path(ctx.loader.cwd, venv);
  PyvenvCfg cfg = read_pyvenv_cfg(ctx.loader.fs, venv);
  return !cfg.found || cfg.system;
}

// The interpreter prefix (or venv) behind the python3 first on PATH.
std::vector<SitePackagesDir> from_path_python(const ProbeContext& ctx) {
  std::vector<SitePackagesDir> out;
  const FsView& fs = ctx.loader.fs;
  for (const std::string& dir : split_nonempty(env_value(ctx, "PATH"), ':')) {
    if (dir[0] != '/') continue;
    std::string exe = join_path(dir, "python3");
    if (!is_file(fs, exe)) continue;
    std::string bin_parent = dir_name(dir);
    // A venv: bin/python3 is a symlink to the base interpreter, pyvenv.cfg marks the venv.
    if (is_file(fs, join_path(bin_parent, "pyvenv.cfg")))
      return venv_site_dirs(fs, bin_parent, "python3 on PATH (venv)");
    // A pyenv shim is a shell script; the version it runs is in PYENV_VERSION or the version
    // file of its root.
    if (base_name(dir) == "shims") {
      std::string version = env_value(ctx, "PYENV_VERSION");
      if (version.empty()) version = first_line(fs, join_path(bin_parent, "version"));
      version = version.substr(0, version.find(':'));
      if (!version.empty() && version != "system") {
        for (auto& d : prefix_site_dirs(fs, join_path(bin_parent, "versions/" + version)))
          out.push_back({d, "pyenv"});
        return out;
      }
      continue;  // "system": the next python3 on PATH is the one
    }
    Resolved real = resolve(fs, exe);
    if (real.status != ResolveStatus::ok) continue;
    std::string prefix = dir_name(dir_name(real.path));
    for (auto& d : interpreter_site_dirs(fs, prefix)) out.push_back({d, "python3 on PATH"});
    return out;
  }
  return out;
}

}  // namespace

std::vector<std::string> prefix_site_dirs(const FsView& fs, const std::string& prefix) {
  std::vector<std::string> out;
  std::string lib = join_path(prefix, "lib");
  std::vector<std::string> names = list_dir(fs, lib, 4096, nullptr);
  std::sort(names.begin(), names.end());
  // Newest interpreter first: a prefix with several is rare, and the newest is the default.
  std::reverse(names.begin(), names.end());
  for (const auto& n : names) {
    if (n.rfind("python3", 0) != 0) continue;
    for (const char* leaf : {"site-packages", "dist-packages"}) {
      std::string d = join_path(join_path(lib, n), leaf);
      if (is_dir(fs, d)) out.push_back(d);
    }
  }
  return out;
}

std::vector<SitePackagesDir> find_site_packages(const ProbeContext& ctx) {
  std::vector<SitePackagesDir> all;
  const FsView& fs = ctx.loader.fs;
  for (const auto& d : ctx.site_packages) {
    // Under --root a --site-packages path is a path inside the image; a host path that points
    // into the image (ROOT/opt/...) is taken as the same directory.
    std::string view = d;
    if (fs.root != "/" && d.size() > fs.root.size() && d.compare(0, fs.root.size(), fs.root) == 0 &&
        d[fs.root.size()] == '/')
      view = d.substr(fs.root.size());
    all.push_back({view, "--site-packages"});
  }
  for (const auto& d : split_nonempty(env_value(ctx, "PYTHONPATH"), ':'))
    all.push_back({d, "PYTHONPATH"});
  // site.py adds the user site before the interpreter's own site-packages: a `pip install
  // --user` torch shadows a conda environment's.
  std::string home = env_value(ctx, "HOME");
  if (!home.empty() && user_site_enabled(ctx))
    for (auto& d : prefix_site_dirs(fs, join_path(home, ".local"))) all.push_back({d, "user site"});
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    std::string prefix = env_value(ctx, var);
    if (!prefix.empty() && prefix[0] != '/') prefix = join_path(ctx.loader.cwd, prefix);
    if (!prefix.empty())
      for (auto& d : venv_site_dirs(fs, prefix, var)) all.push_back(d);
  }
  for (auto& d : from_path_python(ctx)) all.push_back(d);
  if (fs.root != "/" && !fs.root.empty()) {
    // Under --root the environment above is the probing process's, not the image's: the
    // image's own PATH/VIRTUAL_ENV/CONDA_PREFIX are unknown (they live in the image config, not
    // in its files). So the layouts images commonly install Python into are searched as well,
    // after everything the environment named: conda (base and envs), pip into /usr/local
    // (NGC images: /usr/local/lib/python3.X/dist-packages), a venv at /opt/venv, and Debian's
    // packaged /usr/lib/python3/dist-packages.
    for (const char* prefix : {"/opt/conda", "/usr/local", "/usr", "/opt/venv"})
      for (auto& d : prefix_site_dirs(fs, prefix)) all.push_back({d, "image"});
    std::vector<std::string> envs = list_dir(fs, "/opt/conda/envs", 256, nullptr);
    std::sort(envs.begin(), envs.end());
    for (const auto& e : envs)
      for (auto& d : prefix_site_dirs(fs, join_path("/opt/conda/envs", e)))
        all.push_back({d, "image"});
    all.push_back({"/usr/lib/python3/dist-packages", "image"});
  }

  std::vector<SitePackagesDir> out;
  for (auto& d : all) {
    // PYTHONPATH=lib, --site-packages ./venv/...: Python takes these relative to the current
    // directory, and so does the probe.
    if (!d.path.empty() && d.path[0] != '/') d.path = join_path(ctx.loader.cwd, d.path);
    if (!is_dir(fs, d.path)) continue;
    bool dup = std::any_of(out.begin(), out.end(),
                           [&](const SitePackagesDir& o) { return o.path == d.path; });
    if (!dup) out.push_back(d);
  }
  return out;
}

namespace {

// Where `name` is found among `dirs` (the parent package's __path__): a regular package wins
// at once; otherwise the namespace portions, in order.
std::vector<std::string> package_path(const FsView& fs, const std::vector<std::string>& dirs,
                                      const std::string& name) {
  std::vector<std::string> portions;
  for (const auto& d : dirs) {
    std::string pkg = join_path(d, name);
    if (is_file(fs, join_path(pkg, "__init__.py"))) return {pkg};
    if (is_dir(fs, pkg)) portions.push_back(pkg);
  }
  return portions;
}

// Python files read for one assignment are a few KiB; anything past this is not one.
constexpr size_t kMaxPythonFile = 64 * 1024;

bool under_dir(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// "yes", "no" or "unknown": whether `lib` is the libnccl.so.2 this wheel's RECORD lists.
std::string owns(const FsView& fs, const DistInfo& d, const std::string& lib_version,
                 long long lib_size) {
  const long long listed = record_size(fs, d.dir, "nvidia/nccl/lib/libnccl.so.2");
  if (listed < 0) return "unknown";
  if (lib_size < 0) return "no";  // listed, and gone: another wheel's uninstall took it
  if (listed != lib_size) return "no";
  if (!lib_version.empty() && spec_matches(d.version, "==" + lib_version) == SpecMatch::no)
    return "no";
  return "yes";
}

}  // namespace

std::string find_python_package(const FsView& fs, const std::vector<SitePackagesDir>& sites,
                                const std::string& dotted) {
  std::vector<std::string> path;
  for (const auto& s : sites) path.push_back(s.path);
  for (const std::string& name : split_nonempty(dotted, '.')) {
    path = package_path(fs, path, name);
    if (path.empty()) return "";
  }
  return path.front();
}

bool read_python_string(const FsView& fs, const std::string& file, const std::string& name,
                        std::string* value, std::string* error) {
  std::string text, why;
  bool truncated = false;
  if (!read_small_file(fs, file, kMaxPythonFile, &text, &truncated, &why)) {
    *error = file + " cannot be read: " + why;
    return false;
  }
  if (truncated || text.find('\0') != std::string::npos) {
    *error = file + (truncated ? " is larger than 64 KiB" : " is not text (contains NUL bytes)");
    return false;
  }
  for (const std::string& line : split_lines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos || line.empty() || line[0] == ' ' || line[0] == '#') continue;
    std::string lhs = trim(line.substr(0, eq));
    if (trim(lhs.substr(0, lhs.find(':'))) != name) continue;
    std::string rhs = trim(line.substr(eq + 1));
    if (rhs.size() < 2 || (rhs[0] != '\'' && rhs[0] != '"')) continue;
    size_t close = rhs.find(rhs[0], 1);
    if (close == std::string::npos || close == 1) continue;
    *value = rhs.substr(1, close - 1);
    return true;
  }
  *error = file + " has no " + name + " = '...' assignment";
  return false;
}

std::vector<NcclWheel> find_nccl_wheels(const FsView& fs,
                                        const std::vector<SitePackagesDir>& sites,
                                        NcclLiterals* literals) {
  NcclLiterals own;
  if (literals == nullptr) literals = &own;
  std::vector<NcclWheel> out;
  for (const auto& s : sites) {
    std::vector<DistInfo> dists = list_dist_infos(fs, s.path, "nvidia-nccl-cu");
    if (dists.empty()) continue;
    const std::string lib = join_path(s.path, "nvidia/nccl/lib/libnccl.so.2");
    struct stat st {};
    long long size = ::stat(host_path(fs, lib).c_str(), &st) == 0 && S_ISREG(st.st_mode)
                         ? static_cast<long long>(st.st_size)
                         : -1;
    std::string version, cuda_build;
    if (size >= 0) literals->read(host_path(fs, lib), &version, &cuda_build);
    for (const auto& d : dists)
      out.push_back({d.project, d.version, s.path, d.dir, owns(fs, d, version, size)});
  }
  return out;
}

std::string requirement_met(const std::string& requirement, const std::vector<NcclWheel>& wheels) {
  Requirement req;
  if (!parse_requirement(requirement, &req)) return "unknown";
  // importlib.metadata (and pip) take the first distribution of the project on the path. One
  // whose library another wheel has overwritten is not what PyTorch loads, whatever pip says.
  for (const auto& w : wheels) {
    if (w.project != req.project || w.owns_library == "no") continue;
    switch (spec_matches(w.version, req.spec)) {
      case SpecMatch::yes: return "yes";
      case SpecMatch::no: return "no";
      case SpecMatch::unknown: return "unknown";
    }
  }
  return "no";
}

bool in_site_packages(const std::string& path, const std::vector<SitePackagesDir>& sites) {
  return std::any_of(sites.begin(), sites.end(),
                     [&](const SitePackagesDir& s) { return under_dir(path, s.path); });
}

}  // namespace denpex
