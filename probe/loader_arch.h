// The loader's rules that follow the target's ELF machine: which ld.so.cache entries apply, the
// system directories, $LIB and $PLATFORM, the glibc-hwcaps subdirectory names; and which machine
// an image tree is for. Covers x86_64 and aarch64 (Debian/Ubuntu multiarch and RHEL-style lib64
// layouts); any other machine is "unsupported", never treated as one of these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probe/fs_view.h"

namespace denpex {

struct LoaderArch {
  uint16_t machine = 0;              // e_machine (EM_X86_64, EM_AARCH64)
  std::string name;                  // uname -m spelling: "x86_64", "aarch64"
  bool supported = false;            // false: a machine this emulation has no rules for
  uint32_t cache_flags = 0;          // ld.so.cache flags ld.so accepts (exact match, glibc
                                     // sysdeps/unix/sysv/linux/<arch>/dl-cache.h)
  std::string triplet;               // Debian multiarch tuple: "aarch64-linux-gnu"
  std::string platform;              // $PLATFORM (AT_PLATFORM): "x86_64", "aarch64"
  std::vector<std::string> ldso_paths;   // where the tree's dynamic loader lives, in order
  std::vector<std::string> hwcaps;   // glibc-hwcaps subdirectories, most capable first
};

// The rules for `machine`; supported = false (and name "machine N") for any other.
LoaderArch loader_arch_for(uint16_t machine);

// e_machine for an architecture name: "x86_64"/"amd64" (OCI spelling) and "aarch64"/"arm64".
// 0 for any other name.
uint16_t machine_for_arch_name(const std::string& name);

// ld.so's built-in system search path read statically from its binary (glibc keeps it as one
// string of NUL-separated directories with a trailing '/', e.g. "/lib/x86_64-linux-gnu/\0
// /usr/lib/x86_64-linux-gnu/\0/lib/\0/usr/lib/\0"): the directories without the trailing '/'.
// Empty when the file cannot be read (at most 16 MB) or holds no such list. Never runs it.
std::vector<std::string> ldso_builtin_dirs(const std::string& host_file);

// What the probe reads from the target's ld.so, in one read of its file (at most 16 MB, never
// run): the built-in directories (as ldso_builtin_dirs) and whether it searches glibc-hwcaps
// subdirectories (the "glibc-hwcaps" literal: glibc 2.33+). `read` is false, and the rest empty,
// when the file cannot be read.
struct LdsoFacts {
  bool read = false;
  std::vector<std::string> builtin_dirs;
  bool has_glibc_hwcaps = false;
};
LdsoFacts read_ldso(const std::string& host_file);

// The system directories and $LIB for `arch` in the tree: from the tree's own ld.so when it can
// be read (`*from` names it), otherwise the glibc defaults for the layout the tree has (Debian
// multiarch when /usr/lib/<triplet> exists, lib64 otherwise; `*from` says "default ...").
struct SystemDirs {
  std::vector<std::string> dirs;
  std::string dst_lib;   // $LIB: "lib/x86_64-linux-gnu" (Debian), "lib64" (RHEL)
  std::string from;      // "/lib/ld-linux-aarch64.so.1" or "default for aarch64 (no ld.so read)"
  // Whether ld.so may search glibc-hwcaps subdirectories: what the ld.so named in `from` holds;
  // true (possible) when no ld.so was read.
  bool glibc_hwcaps_possible = true;
};
SystemDirs system_dirs_for(const FsView& fs, const LoaderArch& arch);

// The image's machine.
//   ok           `machine` is known; `source` says from what ("--arch", "/bin/sh", ...)
//   unknown      nothing in the tree says (no ld.so, no /bin/sh ELF) and no --arch
//   conflict     --arch (or the image config) says one machine and the tree's files another
//   unsupported  the tree is for a machine this emulation has no rules for (riscv64, ...)
//   bad_name     --arch names no architecture this program knows
enum class TreeArchStatus { ok, unknown, conflict, unsupported, bad_name };

struct TreeArch {
  TreeArchStatus status = TreeArchStatus::unknown;
  uint16_t machine = 0;
  std::string name;      // "aarch64"
  std::string source;    // "--arch", "/lib/ld-linux-aarch64.so.1", "/bin/sh"
  std::string error;     // for every status but ok: the message to show
};

// Decides the machine of the tree under `fs` ("/" = this system: the host's machine). `declared`
// is --arch ("" when not given): it decides when the tree's files are silent and must agree with
// them when they speak. Never throws.
TreeArch decide_tree_arch(const FsView& fs, const std::string& declared);

const char* to_string(TreeArchStatus s);

}  // namespace denpex
