// What sets one configuration apart from another, in the words a person would use: the field
// that differs and where its value came from ("NCCL 2.21.5 via LD_LIBRARY_PATH=/opt/nccl/lib",
// "NCCL_PROTO=Simple", "torch's NCCL 2.20.5 (torch wheel RPATH)"). Two configurations whose
// summary lines read the same still differ somewhere; this names where.
#pragma once

#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// How the loader found `nccl`, as a phrase: "via LD_LIBRARY_PATH=/opt/nccl/lib" (the directory
// of the file it got), "via LD_PRELOAD=/path", "torch wheel RPATH" (found through
// libtorch_cuda.so's own RPATH inside the Python environment), "linked into libtorch_cuda.so",
// "from ld.so.cache", ... `torch` says whether a torch-* origin is a wheel's. "" when the record
// names no origin.
std::string nccl_origin_phrase(const NcclInfo& nccl, const TorchInfo& torch);

// The values of `r` that differ from `ref`, one phrase each, in a fixed order (NCCL, the system
// NCCL, PyTorch and its NCCL, the driver, plugins, NCCL_* variables, nccl.conf, architecture);
// an NCCL_* variable `r` does not set is "NCCL_X unset". Differences in fields without a phrase
// of their own are named by their record key ("nccl_candidates differ"). Identity fields (rank,
// host, pid) are ignored. Empty when the configurations are the same. Never fails.
std::vector<std::string> what_sets_apart(const RankRecord& r, const RankRecord& ref);

}  // namespace denpex
