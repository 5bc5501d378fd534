// host_cpu_hwcaps() for x86_64 builds (probe/hwcaps.h). GCC's ISA level checks test the same
// CPUID bits (and XCR0 state for AVX/AVX-512) as glibc's sysdeps/x86/get-isa-level.h.
#include "probe/hwcaps.h"

namespace denpex {

std::vector<std::string> host_cpu_hwcaps() {
  __builtin_cpu_init();
  std::vector<std::string> out;
  if (__builtin_cpu_supports("x86-64-v4")) out.push_back("x86-64-v4");
  if (__builtin_cpu_supports("x86-64-v3")) out.push_back("x86-64-v3");
  if (__builtin_cpu_supports("x86-64-v2")) out.push_back("x86-64-v2");
  return out;
}

}  // namespace denpex
