// The NCCL that JAX's CUDA 12 plugin loads, found from files as for PyTorch. The plugin
// (jax_plugins/xla_cuda12, from the jax-cuda12-plugin and jax-cuda12-pjrt wheels) loads NCCL
// when JAX initialises its backends (jax.devices(), the first array), with or without a GPU:
// its initialize() does ctypes.cdll.LoadLibrary(<nvidia.nccl package>/lib/libnccl.so.2) when
// `import nvidia.nccl` succeeds, and otherwise XLA dlopens libnccl.so.2 from xla_cuda_plugin.so,
// whose DT_RPATH names the wheel directory ($ORIGIN/../../nvidia/nccl/lib) before the loader's
// usual order. The plugin finds NCCL's functions with dlsym, so there are no imports to check
// against the library's exports.
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/python_env.h"
#include "probe/record.h"

namespace denpex {

// Never throws. status: missing (no importable jax, or no jax_plugins.xla_cuda12), error (jax's
// version cannot be read; `error` says why), ok. With ok, `nccl` is empty and `error` says why
// when nothing would be loaded.
FrameworkInfo probe_jax(const ProbeContext& ctx, const std::vector<SitePackagesDir>& sites,
                        std::vector<std::string>* untrusted);

}  // namespace denpex
