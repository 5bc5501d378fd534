// The NCCL that CuPy loads, found from files as for PyTorch (CuPy 13's rules,
// cupy/_environment.py). `import cupy.cuda.nccl` (cupyx.distributed, cupy.cuda.nccl) first
// preloads one library when CuPy is a pip wheel (cupy/.data/_wheel.json says "packaging":
// "pip" and names an NCCL): the nvidia-nccl-cu<major> wheel's nvidia/nccl/lib/libnccl.so.2 if
// that wheel is at least the json's min_pypi_version, else the json's exact file name under
// $CUPY_CUDA_LIB_PATH (default ~/.cupy/cuda_lib)/<cuda>/nccl/<version>/{lib,lib64,bin}, else
// that file name through the loader. Then cupy_backends/cuda/libs/nccl.*.so, which has DT_NEEDED
// libnccl.so.2 and no RPATH, binds to the preloaded library, or to what the loader resolves.
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/python_env.h"
#include "probe/record.h"

namespace denpex {

struct CupyProbe {
  FrameworkInfo cupy;
  std::vector<AbiCheck> abi;   // the nccl extension's imports against the NCCL it gets
};

// Never throws. cupy.status: missing (no importable cupy), error (its version cannot be read;
// `error` says why), ok. With ok, `nccl` is empty and `error` says why when CuPy has no NCCL
// extension or nothing would be loaded.
CupyProbe probe_cupy(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                     std::vector<std::string>* untrusted);

}  // namespace denpex
