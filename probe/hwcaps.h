// glibc-hwcaps subdirectories (glibc 2.33+): before each directory of its search path (RPATH,
// LD_LIBRARY_PATH, RUNPATH, the system directories) ld.so tries DIR/glibc-hwcaps/NAME/ for every
// NAME this CPU supports, most capable first, then DIR itself. x86_64 has x86-64-v4, -v3, -v2;
// glibc 2.36's aarch64 has none. Which names apply depends on the CPU: known for the live
// system, unknown for an image under --root, where the loader reports every possible answer
// instead of picking one.
#pragma once

#include <string>
#include <vector>

#include "probe/loader_arch.h"

namespace denpex {

//   none         the target's ld.so has no glibc-hwcaps (glibc < 2.33), or the machine has no
//                names: only the directories themselves are searched
//   cpu_known    `supported` are the subdirectories ld.so tries (this machine's CPU)
//   cpu_unknown  every name in `names` may apply (an image: its CPU is not this one)
enum class HwcapsMode { none, cpu_known, cpu_unknown };

struct Hwcaps {
  HwcapsMode mode = HwcapsMode::none;
  std::vector<std::string> names;      // the machine's names, most capable first
  std::vector<std::string> supported;  // cpu_known: the names this CPU supports, in that order
};

// The glibc-hwcaps names this program's CPU supports, most capable first, as glibc decides them
// (x86_64: CPUID and XCR0 against glibc's ISA level definitions). Empty on machines
// without names.
std::vector<std::string> host_cpu_hwcaps();

// Whether the ld.so at `host_file` searches glibc-hwcaps subdirectories: its binary holds the
// "glibc-hwcaps" literal (glibc 2.33+). Read, never run. False when it cannot be read (at most
// 16 MB).
bool ldso_has_glibc_hwcaps(const std::string& host_file);

// The subdirectories for `arch`. `ldso_may_search_hwcaps` is what the target's ld.so says
// (SystemDirs::glibc_hwcaps_possible: true when none was read, a glibc 2.33+ loader being
// possible); `live` says the target CPU is this one.
Hwcaps hwcaps_for(const LoaderArch& arch, bool ldso_may_search_hwcaps, bool live);

// "glibc-hwcaps/x86-64-v3"
std::string hwcaps_subdir(const std::string& name);

}  // namespace denpex
