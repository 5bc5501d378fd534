// Where Python would import packages from, found from files only (never by running Python:
// starting an interpreter costs more than the whole probe, and as root it would run code from
// the environment being checked).
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

struct SitePackagesDir {
  std::string path;     // view path
  std::string source;   // "--site-packages", "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX",
                        // "python3 on PATH", "pyenv", "user site", "image"
};

// The site-packages directories to search for PyTorch, in the order Python's sys.path would
// put them: --site-packages first, then PYTHONPATH, the user site (~/.local, unless
// PYTHONNOUSERSITE or a venv without the system site-packages turns it off), the active
// venv/conda, the python3 on PATH (a venv via its pyvenv.cfg, a pyenv shim via the pyenv
// version file, else the interpreter's prefix; Debian's dist-packages for /usr). A venv whose
// pyvenv.cfg says `include-system-site-packages = true` is followed by its base interpreter's
// directories (from `home`). Existing directories only, no duplicates.
std::vector<SitePackagesDir> find_site_packages(const ProbeContext& ctx);

// "<prefix>/lib/python3.*/site-packages" (and dist-packages) that exist under `prefix`.
std::vector<std::string> prefix_site_dirs(const FsView& fs, const std::string& prefix);

// The directory `import <dotted>` would load the package from, searching `sites` in order the
// way Python's path finder does (PEP 420): the first directory with <name>/__init__.py is a
// regular package and ends the search; directories without one are namespace portions, used
// only when no regular package is found, the first portion holding the next name winning.
// "" when the package is not importable from these directories.
std::string find_python_package(const FsView& fs, const std::vector<SitePackagesDir>& sites,
                                const std::string& dotted);

// The value of a top-level string assignment in a small Python file (`_version = "0.6.2"`,
// `__version__: str = '13.6.0'`). False with *error when the file cannot be read, is larger
// than 64 KiB, is not text, or has no such assignment.
bool read_python_string(const FsView& fs, const std::string& file, const std::string& name,
                        std::string* value, std::string* error);

// Every nvidia-nccl-cu* distribution pip recorded in `sites`, in search order, with whether the
// file they all install (nvidia/nccl/lib/libnccl.so.2) is the one its RECORD lists. The
// library's literal is read through `literals` when given (the probe's cache).
std::vector<NcclWheel> find_nccl_wheels(const FsView& fs,
                                        const std::vector<SitePackagesDir>& sites,
                                        NcclLiterals* literals = nullptr);

// Whether the first installed distribution of the project `requirement` names
// ("nvidia-nccl-cu12==2.20.5") satisfies it: "yes", "no" (a different version, or the project not
// installed, or its libnccl.so.2 overwritten by another wheel's), "unknown" (a specifier it
// cannot evaluate).
std::string requirement_met(const std::string& requirement, const std::vector<NcclWheel>& wheels);

// Whether a view path lies inside one of `sites` (an NCCL "wheel" linkage rather than "system").
bool in_site_packages(const std::string& path, const std::vector<SitePackagesDir>& sites);

}  // namespace denpex
