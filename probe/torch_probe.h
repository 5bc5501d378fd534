// PyTorch as a process importing it would get it: the first torch package on the search path,
// its version from torch/version.py (read as text), and the NCCL its libtorch_cuda.so would load
// (following that library's DT_RPATH/DT_RUNPATH like the loader does), or the NCCL linked into
// it statically. Also the ABI check: the nccl* symbols libtorch_cuda.so imports against those
// the NCCL it would bind to exports.
#pragma once

#include <string>
#include <vector>

#include "probe/elf_file.h"
#include "probe/probe_context.h"
#include "probe/python_env.h"
#include "probe/record.h"

namespace denpex {

struct TorchProbe {
  TorchInfo torch;
  bool has_nccl = false;   // torch needs an NCCL (a CUDA build); `effective` is then valid
  NcclInfo effective;      // what libtorch_cuda.so would load, or its static copy
  std::vector<AbiCheck> abi;
};

// Never throws. torch.status: missing (no torch/version.py in any directory), error (found but
// version.py unreadable or without __version__; `error` says which), ok.
TorchProbe probe_torch(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                       std::vector<std::string>* untrusted);

struct VersionPy {
  bool ok = false;
  std::string version;   // __version__
  std::string cuda;      // cuda ("" when None: a CPU build)
  std::string error;
};

// Parses torch/version.py's plain assignments (`__version__ = '2.5.1+cu124'`,
// `cuda: Optional[str] = '12.4'`). ok=false with `error` when there is no __version__ or the
// text is not text.
VersionPy parse_version_py(const std::string& text);

// The prefix of every NCCL symbol, and what the ABI check needs of a consumer's dynamic symbols:
// its nccl* imports (read_elf with kNcclImports).
inline constexpr const char* kNcclPrefix = "nccl";
inline constexpr SymbolFilter kNcclImports{kNcclPrefix, true};

// The ABI check for any library that imports NCCL (PyTorch's libtorch_cuda.so, CuPy's nccl
// extension): the nccl* symbols `consumer_elf` (read with dynamic symbols: all, or
// kNcclImports) imports against those `library` (host path `library_host`) exports. `error` is
// set, and nothing listed, when either symbol table cannot be read.
AbiCheck check_nccl_abi(const std::string& consumer, const ElfInfo& consumer_elf,
                        const std::string& library, const std::string& library_host);

// Version of the nvidia-nccl-cu* wheel installed in `site` (from its dist-info directory name),
// "" when none.
std::string nccl_wheel_version(const FsView& fs, const std::string& site);

}  // namespace denpex
