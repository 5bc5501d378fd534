// host_cpu_hwcaps() for x86_64 builds (probe/hwcaps.h): glibc's ISA levels
// (sysdeps/x86/get-isa-level.h) from CPUID and XCR0, as glibc tests them: a level needs every
// feature of the levels below it, and AVX/AVX-512 only count when the OS saves their state.
// Read directly rather than with __builtin_cpu_supports("x86-64-v3"), which clang 14 (the fuzz
// build) does not know.
#include <cpuid.h>

#include <cstdint>

#include "probe/hwcaps.h"

namespace denpex {

namespace {

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

uint64_t xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

}  // namespace

std::vector<std::string> host_cpu_hwcaps() {
  unsigned a = 0, b = 0, c1 = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c1, &d)) return {};
  unsigned b7 = 0, c7 = 0, d7 = 0, a7 = 0;
  __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7);
  unsigned ce = 0, ae = 0, be = 0, de = 0;
  __get_cpuid(0x80000001, &ae, &be, &ce, &de);
  const bool osxsave = bit(c1, 27);
  const uint64_t xcr = osxsave ? xcr0() : 0;
  const bool avx_state = (xcr & 0x6) == 0x6;
  const bool avx512_state = (xcr & 0xe6) == 0xe6;

  const bool v2 = bit(c1, 13) /* CMPXCHG16B */ && bit(ce, 0) /* LAHF */ &&
                  bit(c1, 23) /* POPCNT */ && bit(c1, 0) /* SSE3 */ && bit(c1, 19) /* SSE4_1 */ &&
                  bit(c1, 20) /* SSE4_2 */ && bit(c1, 9) /* SSSE3 */;
  const bool avx = avx_state && bit(c1, 28);
  const bool v3 = v2 && avx && bit(b7, 5) /* AVX2 */ && bit(b7, 3) /* BMI1 */ &&
                  bit(b7, 8) /* BMI2 */ && bit(c1, 29) /* F16C */ && bit(c1, 12) /* FMA */ &&
                  bit(ce, 5) /* LZCNT */ && bit(c1, 22) /* MOVBE */;
  const bool v4 = v3 && avx512_state && bit(b7, 16) /* AVX512F */ && bit(b7, 30) /* BW */ &&
                  bit(b7, 28) /* CD */ && bit(b7, 17) /* DQ */ && bit(b7, 31) /* VL */;
  std::vector<std::string> out;
  if (v4) out.push_back("x86-64-v4");
  if (v3) out.push_back("x86-64-v3");
  if (v2) out.push_back("x86-64-v2");
  return out;
}

}  // namespace denpex
