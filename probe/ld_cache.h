// The dynamic loader's cache (/etc/ld.so.cache, written by ldconfig): which file a soname maps
// to when no RPATH/LD_LIBRARY_PATH/RUNPATH directory has it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace denpex {

struct LdCacheEntry {
  std::string name;   // soname, e.g. "libnccl.so.2"
  std::string path;   // the file, as written by ldconfig
  uint32_t flags = 0; // FLAG_ELF_LIBC6 | arch bits (0x0303 = x86-64 libc6)
  // glibc 2.33+ caches list a library's glibc-hwcaps copies too (the entry's hwcap field has
  // DL_CACHE_HWCAP_EXTENSION set): the level ("x86-64-v3", from the entry's
  // glibc-hwcaps/<level>/ directory); "" for the plain entry every CPU may use.
  std::string hwcaps;
};

// ok         parsed
// missing    no cache file (containers without ldconfig run): not an error for the loader
// malformed  not a cache this reader understands (magic, bounds), or there but unreadable (a
//            FIFO, a device, permissions); `error` says which; entries is empty
enum class LdCacheStatus { ok, missing, malformed };

struct LdCache {
  LdCacheStatus status = LdCacheStatus::missing;
  std::string error;
  std::vector<LdCacheEntry> entries;  // in file order (the loader's lookup order)
};

// Reads glibc's "glibc-ld.so.cache1.1" format, alone or behind the old "ld.so-1.7.0" one.
// Never throws; files larger than 64 MB are malformed.
LdCache read_ld_cache(const std::string& path);

// The cache's arch flags for this program's architecture (x86-64: 0x0303), 0 when unknown.
uint32_t host_cache_flags();

// First plain (non-glibc-hwcaps) entry for `soname` whose flags are exactly `flags` (glibc's
// _dl_cache_check_flags on x86_64 and aarch64: an arm64 image's cache is read with 0x0a03), or
// nullptr. flags 0 takes any flags.
const LdCacheEntry* find_in_cache(const LdCache& cache, const std::string& soname,
                                  uint32_t flags = host_cache_flags());

// Every entry for `soname` with exactly `flags` (0: any), in file order: the plain one and its
// glibc-hwcaps copies.
std::vector<const LdCacheEntry*> find_all_in_cache(const LdCache& cache,
                                                   const std::string& soname, uint32_t flags);

// Directories listed by an ld.so.conf file and its "include" globs, read with every path taken
// inside `root` ("/" for the live system). Used under --root when an image has no cache.
std::vector<std::string> read_ld_so_conf(const std::string& root, const std::string& conf_path);

}  // namespace denpex
