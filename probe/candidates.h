// Every NCCL a user could trip over on this node, read statically (nothing is loaded): what
// LD_LIBRARY_PATH, the loader cache, the system directories, the CUDA toolkit's default install
// locations and Python environments hold, and NCCL linked into libtorch_cuda.so.
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/python_env.h"
#include "probe/record.h"

namespace denpex {

// Candidates in discovery order, one per distinct real file; `static_torch` (may be empty) is a
// libtorch_cuda.so with NCCL linked in. Directory listings are capped so a huge directory
// cannot stall the probe. A file built for another machine than the loader's (an x86_64 libnccl
// in an arm64 image) is no candidate: it goes to `*foreign` (may be null) as "path (built for
// x86_64, the image is aarch64)".
std::vector<NcclCandidate> find_nccl_candidates(const ProbeContext& ctx,
                                                const std::vector<SitePackagesDir>& sites,
                                                const NcclInfo& static_torch,
                                                std::vector<std::string>* foreign = nullptr);

}  // namespace denpex
