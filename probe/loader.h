// Which file the dynamic loader would map for a soname, computed from files only: the same
// search order as glibc's ld.so, so the probe can name the library a process gets without
// loading it (and, under --root, for a process inside an image).
//
// Order for a name without '/' (glibc elf/dl-load.c, _dl_map_object): an already-preloaded
// object with that soname; DT_RPATH of the requester (only when it has no DT_RUNPATH);
// LD_LIBRARY_PATH; DT_RUNPATH of the requester; /etc/ld.so.cache; the system directories.
// Within each directory a file of another ELF class or machine is passed over silently (that is
// why glibc says "No such file or directory" for an aarch64 library on x86_64); a file that is
// not an ELF, is cut short or cannot be read stops the search with an error.
#pragma once

#include <string>
#include <vector>

#include "probe/elf_file.h"
#include "probe/fs_view.h"
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
  std::vector<std::string> library_path;   // LD_LIBRARY_PATH entries ("" already turned into ".")
  LdCache cache;
  std::vector<std::string> system_dirs;    // ld.so's built-in directories
  std::string system_dirs_from;            // the ld.so they were read from, or "default ..."
  std::string dst_lib;                     // $LIB ("lib/aarch64-linux-gnu", "lib64")
  std::vector<std::string> conf_dirs;      // used instead of the cache when it is missing
  uint16_t machine = 0;                    // e_machine the loader accepts
  LoaderArch arch;                         // the rules for `machine`
  bool image = false;                      // fs.root != "/"
  bool image_arch_known = false;           // the image's machine was established (given, or
                                           // read from its files): messages say "the image
                                           // is ..."; otherwise "this is ..."
  std::string cwd = "/";                   // for relative LD_LIBRARY_PATH entries
};

// Builds the loader environment of this process (live) or of an image (fs.root != "/") from
// the given variables. In an image LD_PRELOAD/LD_LIBRARY_PATH come from `env` as well (the
// image's declared environment, if the caller knows it). Each LD_PRELOAD entry is resolved
// here, once, as ld.so does at start-up: a path is opened as given; a name without '/' is
// searched like a DT_NEEDED entry of the executable (its RPATH/RUNPATH, which the probe does not
// know and takes as empty, then LD_LIBRARY_PATH, the cache, the system directories). An entry
// that is not found is dropped, as ld.so drops it.
// `machine` is the target's e_machine; 0 = this program's machine for a live system, and for an
// image the machine its files say (decide_tree_arch), or this program's when they say nothing.
// The cache entries, system directories (read from the target's ld.so), $LIB and $PLATFORM
// follow it.
LoaderEnv make_loader_env(const FsView& fs, const std::string& ld_preload,
                          const std::string& ld_library_path, uint16_t machine = 0);

// found      `path` is what the loader maps
// not_found  nothing in the search order (files of another machine skipped: see `skipped`)
// fatal      the loader would stop with an error at `path`: `error` says why
enum class LoadStatus { found, not_found, fatal };

struct Skipped {
  std::string path;
  std::string reason;   // "built for aarch64, this is x86_64"
};

struct Resolution {
  LoadStatus status = LoadStatus::not_found;
  std::string path;      // as the loader names it (view path, before symlink resolution)
  std::string real_path; // symlinks resolved (view path)
  std::string origin;    // "LD_PRELOAD", "rpath", "rpath-of-loader" (Requester::loaders),
                         // "LD_LIBRARY_PATH", "runpath", "ld.so.cache",
                         // "system-dir", "path" (name contained '/')
  std::string error;
  std::vector<Skipped> skipped;
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
};

// Resolves `name` ("libnccl.so.2", or a path) in the loader's order. Never throws. A preloaded
// object answers to its soname, to the LD_PRELOAD entry as written and to its path, before any
// directory is searched (glibc _dl_map_object: objects already loaded match first), so a
// preloaded libnccl.so.2 wins even over PyTorch's RPATH.
Resolution resolve_library(const LoaderEnv& env, const std::string& name,
                           const Requester& requester);

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
