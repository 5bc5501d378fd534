// host_cpu_hwcaps() for machines whose glibc has no glibc-hwcaps names (aarch64 in glibc 2.36:
// sysdeps/generic/dl-hwcaps-subdirs.c) (probe/hwcaps.h).
#include "probe/hwcaps.h"

namespace denpex {

std::vector<std::string> host_cpu_hwcaps() { return {}; }

}  // namespace denpex
