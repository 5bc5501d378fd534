// Which file the dynamic loader would map for a soname, computed from files only: the same
// search order as glibc's ld.so, so the probe can name the library a process gets without
// loading it (and, under --root, for a process inside an image).
//
// Order for a name without '/' (glibc elf/dl-load.c, _dl_map_object): an object already loaded
// with that name or soname (a preload, the requester's loader chain, Requester::loaded);
// DT_RPATH of the requester and of its loaders (only when it has no DT_RUNPATH);
// LD_LIBRARY_PATH; DT_RUNPATH of the requester; /etc/ld.so.cache; the system directories.
// Within each directory (but not a cache entry) the glibc-hwcaps subdirectories come first
// (probe/hwcaps.h). Within each directory a file of another ELF class or machine is passed over
// silently (that is why glibc says "No such file or directory" for an aarch64 library on
// x86_64); a file that is not an ELF, is cut short or cannot be read stops the search with an
// error.
#pragma once

#include <string>
#include <vector>

#include "probe/elf_file.h"
#include "probe/fs_view.h"
#include "probe/hwcaps.h"
#include "probe/ld_cache.h"
#include "probe/loader_arch.h"

namespace denpex {

// An LD_PRELOAD entry as ld.so maps it at start-up, before any request is resolved.
struct Preloaded {
  std::string entry;      // as written in LD_PRELOAD ("libjemalloc.so.2", "/opt/x/libfoo.so")
  bool found = false;     // false: ld.so says "cannot be preloaded ... ignored" and goes on
  std::string path;       // view path the loader opened
  std::string real_path;  // symlinks resolved
  std::string soname;     // its DT_SONAME, "" when it has none
};

struct LoaderEnv {
  FsView fs;
  std::vector<Preloaded> preload;          // LD_PRELOAD entries, in order, resolved once
  std::vector<std::string> library_path;   // LD_LIBRARY_PATH entries ("" already turned into
                                           // "."; $ORIGIN, $LIB, $PLATFORM expanded; an entry
                                           // with $ORIGIN of an unknown program dropped)
  LdCache cache;
  std::vector<std::string> system_dirs;    // ld.so's built-in directories
  std::string system_dirs_from;            // the ld.so they were read from, or "default ..."
  std::string dst_lib;                     // $LIB ("lib/aarch64-linux-gnu", "lib64")
  std::vector<std::string> conf_dirs;      // used instead of the cache when it is missing
  uint16_t machine = 0;                    // e_machine the loader accepts
  LoaderArch arch;                         // the rules for `machine`
  Hwcaps hwcaps;                           // glibc-hwcaps subdirectories tried in each directory
  bool image = false;                      // fs.root != "/"
  bool image_arch_known = false;           // the image's machine was established (given, or
                                           // read from its files): messages say "the image
                                           // is ..."; otherwise "this is ..."
  std::string cwd = "/";                   // for relative LD_LIBRARY_PATH entries
};

struct Requester;

// Builds the loader environment of this process (live) or of an image (fs.root != "/") from
// the given variables. In an image LD_PRELOAD/LD_LIBRARY_PATH come from `env` as well (the
// image's declared environment, if the caller knows it). Each LD_PRELOAD entry is resolved
// here, once, as ld.so does at start-up: a path is opened as given; a name without '/' is
// searched like a DT_NEEDED entry of the executable (`program`: its RPATH/RUNPATH, then
// LD_LIBRARY_PATH, the cache, the system directories). An entry that is not found is dropped,
// as ld.so drops it. `program` is the main executable when the caller knows it (path = its real
// view path; $ORIGIN in LD_LIBRARY_PATH is its directory, glibc _dl_init_paths); the probe
// itself does not know which program a rank runs and passes none: an LD_LIBRARY_PATH entry
// with $ORIGIN is then dropped, as ld.so drops it when the origin is unknown.
// `machine` is the target's e_machine; 0 = this program's machine for a live system, and for an
// image the machine its files say (decide_tree_arch), or this program's when they say nothing.
// The cache entries, system directories (read from the target's ld.so), $LIB and $PLATFORM
// follow it.
LoaderEnv make_loader_env(const FsView& fs, const std::string& ld_preload,
                          const std::string& ld_library_path, uint16_t machine = 0,
                          const Requester* program = nullptr);

// found      `path` is what the loader maps
// not_found  nothing in the search order (files of another machine skipped: see `skipped`)
// fatal      the loader would stop with an error at `path`: `error` says why
enum class LoadStatus { found, not_found, fatal };

struct Skipped {
  std::string path;
  std::string reason;   // "built for aarch64, this is x86_64"
};

// Under --root the target CPU is unknown: a file in a glibc-hwcaps subdirectory is the answer
// on CPUs with that level only.
struct CpuAlternative {
  std::string hwcaps;    // "x86-64-v3"
  LoadStatus status = LoadStatus::found;   // found, or fatal (the loader would stop there)
  std::string path;      // DIR/glibc-hwcaps/x86-64-v3/libnccl.so.2
  std::string real_path;
  std::string error;     // for fatal
};

struct Resolution {
  LoadStatus status = LoadStatus::not_found;
  std::string path;      // as the loader names it (view path, before symlink resolution)
  std::string real_path; // symlinks resolved (view path)
  std::string origin;    // "LD_PRELOAD", "already-loaded" (the soname of an object in
                         // Requester::loaders or ::loaded), "rpath", "rpath-of-loader",
                         // "LD_LIBRARY_PATH", "runpath", "ld.so.cache",
                         // "system-dir", "path" (name contained '/')
  std::string error;
  std::vector<Skipped> skipped;
  // Empty unless the CPU is unknown (HwcapsMode::cpu_unknown) and a glibc-hwcaps subdirectory
  // holds the name: in search order, the answer on a CPU is the first alternative whose level it
  // supports, else the fields above (the answer on a CPU that supports none of them).
  std::vector<CpuAlternative> cpu_alternatives;
};

// An object that, directly or through others, caused the requester to be loaded.
struct LoaderLink {
  std::string path;      // view path of the object ($ORIGIN of its RPATH is its directory)
  const ElfInfo* elf = nullptr;
};

// The requesting object: its RPATH/RUNPATH apply, $ORIGIN is its directory.
struct Requester {
  std::string path;      // real view path of the object, "" for the main program
  const ElfInfo* elf = nullptr;
  // glibc's l_loader chain: the object that loaded the requester, that object's loader, and so
  // on up to the executable (last). When the requester has no DT_RUNPATH, ld.so searches the
  // DT_RPATH of the requester, then of each of these in order (one with a DT_RUNPATH has no
  // RPATH for this purpose: glibc drops DT_RPATH when DT_RUNPATH is present), e.g. conda's
  // python ($ORIGIN/../lib) -> _C -> libtorch_python.so -> libtorch_cuda.so -> libnccl.so.2.
  std::vector<LoaderLink> loaders;
  // Other objects already mapped in the process (the executable's other DT_NEEDED libraries,
  // loaded before this request). An object answers to its DT_SONAME whatever name it was loaded
  // by (glibc _dl_name_match_p / l_soname): NEEDED libnccl.so.2 is satisfied by a libnccl.so
  // already loaded whose SONAME is libnccl.so.2. The loaders above count as mapped too.
  std::vector<LoaderLink> loaded;
};

// Resolves `name` ("libnccl.so.2", or a path) in the loader's order. Never throws. A preloaded
// object answers to its soname, to the LD_PRELOAD entry as written and to its path, before any
// directory is searched (glibc _dl_map_object: objects already loaded match first), so a
// preloaded libnccl.so.2 wins even over PyTorch's RPATH.
Resolution resolve_library(const LoaderEnv& env, const std::string& name,
                           const Requester& requester);

// "x86-64-v3: /x/glibc-hwcaps/x86-64-v3/libnccl.so.2" for each alternative, then "otherwise:
// <path>": the words a report uses. Empty when the answer does not depend on the CPU.
std::vector<std::string> describe_cpu_alternatives(const Resolution& r);

// Expands $ORIGIN / ${ORIGIN}, $LIB and $PLATFORM in an RPATH/RUNPATH entry. `lib` and
// `platform` are the target's (LoaderEnv::dst_lib, LoaderEnv::arch.platform); the defaults are
// Debian x86_64's.
std::string expand_dst(const std::string& entry, const std::string& origin_dir,
                       const std::string& lib = "lib/x86_64-linux-gnu",
                       const std::string& platform = "x86_64");

// Splits LD_LIBRARY_PATH the way ld.so does (':' or ';'; an empty entry is the current
// directory).
std::vector<std::string> split_library_path(const std::string& value);

// Splits LD_PRELOAD (spaces or ':').
std::vector<std::string> split_preload(const std::string& value);

}  // namespace denpex
