// Where Python would import packages from, found from files only (never by running Python:
// starting an interpreter costs more than the whole probe, and as root it would run code from
// the environment being checked).
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"

namespace denpex {

struct SitePackagesDir {
  std::string path;     // view path
  std::string source;   // "--site-packages", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
                        // "python3 on PATH", "pyenv", "user site", "image"
};

// The site-packages directories to search for PyTorch, in the order Python's sys.path would
// put them: --site-packages first, then PYTHONPATH, the active venv/conda, the python3 on PATH
// (a venv via its pyvenv.cfg, a pyenv shim via the pyenv version file, else the interpreter's
// prefix; Debian's dist-packages for /usr). A venv whose pyvenv.cfg says
// `include-system-site-packages = true` is followed by its base interpreter's directories (from
// `home`). Existing directories only, no duplicates.
std::vector<SitePackagesDir> find_site_packages(const ProbeContext& ctx);

// "<prefix>/lib/python3.*/site-packages" (and dist-packages) that exist under `prefix`.
std::vector<std::string> prefix_site_dirs(const FsView& fs, const std::string& prefix);

}  // namespace denpex
