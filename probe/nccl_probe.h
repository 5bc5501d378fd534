// The NCCL a process gets: resolved in the loader's order, read statically (the version literal
// every libnccl carries), then confirmed live with dlopen + ncclGetVersion in an isolated child.
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

// Inspects the library a resolution points at. Never throws; every failure is a status:
//   not found                -> missing (or unloadable when only other-machine files were seen)
//   loader would stop        -> unloadable, error = the loader's reason in plain words
//   as root, untrusted file  -> not_loaded, version from the literal; path appended to *untrusted
//   (the file, or a library it needs: trust.h check_trusted_with_needed)
//   --root                   -> not_loaded, version from the literal
//   child crashed/hung       -> unloadable, error says which
//   no ncclGetVersion        -> unloadable
// `untrusted` may be null.
NcclInfo inspect_nccl(const ProbeContext& ctx, const Resolution& res,
                      std::vector<std::string>* untrusted);

// The NCCL a plain (non-PyTorch) process resolves for "libnccl.so.2".
NcclInfo probe_system_nccl(const ProbeContext& ctx, std::vector<std::string>* untrusted);

// Version and CUDA build from a file's "NCCL version ..." literal, without loading it.
// Returns false when the file has no such literal.
bool read_nccl_literal(const std::string& host_path, std::string* version,
                       std::string* cuda_build);

}  // namespace denpex
