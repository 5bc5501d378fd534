#include "probe/python_env.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>

#include "probe/text.h"

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

// A venv's own site-packages, then, when its pyvenv.cfg says `include-system-site-packages =
// true`, those of the base interpreter it names with `home = <prefix>/bin` (Python's site.py
// appends them after the venv's).
std::vector<SitePackagesDir> venv_site_dirs(const FsView& fs, const std::string& venv,
                                            const std::string& source) {
  std::vector<SitePackagesDir> out;
  for (auto& d : prefix_site_dirs(fs, venv)) out.push_back({d, source});
  std::string text;
  if (!read_small_file(fs, join_path(venv, "pyvenv.cfg"), 64 * 1024, &text, nullptr)) return out;
  std::string home;
  bool system = false;
  for (const std::string& line : split_lines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key == "home") home = value;
    if (key == "include-system-site-packages") {
      std::transform(value.begin(), value.end(), value.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      system = value == "true";
    }
  }
  if (!system || home.empty() || home[0] != '/') return out;
  for (auto& d : interpreter_site_dirs(fs, dir_name(home)))
    out.push_back({d, source + " (base interpreter, include-system-site-packages)"});
  return out;
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
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    std::string prefix = env_value(ctx, var);
    if (!prefix.empty() && prefix[0] != '/') prefix = join_path(ctx.loader.cwd, prefix);
    if (!prefix.empty())
      for (auto& d : venv_site_dirs(fs, prefix, var)) all.push_back(d);
  }
  for (auto& d : from_path_python(ctx)) all.push_back(d);
  std::string home = env_value(ctx, "HOME");
  if (!home.empty())
    for (auto& d : prefix_site_dirs(fs, join_path(home, ".local"))) all.push_back({d, "user site"});
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

}  // namespace denpex
