// The CUDA driver a process gets: the user-space libcuda.so.1 it resolves (version from the
// real file name, libcuda.so.<driver version>), cuDriverGetVersion asked live in an isolated
// child (the toolkit stub answers CUDA_ERROR_STUB_LIBRARY = 34), and the loaded kernel module's
// version.
#pragma once

#include <string>
#include <vector>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

// The driver's library and the version call asked of it (an `int f(int*)`).
constexpr const char* kDriverLibrary = "libcuda.so.1";
constexpr const char* kDriverVersionSymbol = "cuDriverGetVersion";

// Never throws. status: ok (real driver answered; or, read statically, its file name gave the
// driver version and cuda_version comes from NVIDIA's table), missing (no libcuda.so.1), stub
// (the toolkit stub: the answer 34 or, when not loaded, its contents), version_unknown (read
// statically, no version in its real file name), error (any other failure, hang or crash;
// `error` says which). Under --root a missing driver is normal: images get the host's driver
// injected at run time. The call is made in a child of its own unless ctx.prefetched holds its
// answer (the device child made it).
CudaDriverInfo probe_cuda_driver(const ProbeContext& ctx, std::vector<std::string>* untrusted);

// True when `host_file` (seen as `view_path`) is the CUDA toolkit's stub libcuda: its symbol
// table names stub.c, or it is a small file (< 2 MB) in a stubs/ directory without a version in
// its name. A real driver is tens of MB. False when unreadable.
bool is_toolkit_stub(const std::string& host_file, const std::string& view_path);

// True when `path` lies in the cuda-compat package's directory (.../cuda*/compat/...).
bool in_cuda_compat_dir(const std::string& path);

// "550.54.15" from "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"; "" when the name has no
// version (libcuda.so, libcuda.so.1).
std::string driver_version_from_filename(const std::string& path);

// Kernel module version from the text of /sys/module/nvidia/version ("550.54.15\n") or of
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05 ...").
// "" when the text holds no version.
std::string parse_kernel_module_version(const std::string& text);

// "12.4" from 12040 (cuDriverGetVersion's 1000*major + 10*minor).
std::string cuda_version_from_code(int code);

}  // namespace denpex
