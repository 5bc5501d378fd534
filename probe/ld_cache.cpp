#include "probe/ld_cache.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "probe/fs_view.h"
#include "probe/text.h"

namespace denpex {

namespace {

// Layout from glibc sysdeps/generic/dl-cache.h (struct cache_file_new, struct file_entry_new).
constexpr char kOldMagic[] = "ld.so-1.7.0";
constexpr char kNewMagic[] = "glibc-ld.so.cache";
constexpr char kNewVersion[] = "1.1";
constexpr size_t kNewHeader = 48;
constexpr size_t kNewEntry = 24;
constexpr size_t kOldEntry = 12;
constexpr size_t kMaxCache = 64u << 20;
constexpr uint64_t kHwcapExtension = 1ull << 62;  // DL_CACHE_HWCAP_EXTENSION

uint32_t u32(const std::string& b, size_t off) {
  uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}

// The whole of a regular file of at most `limit` bytes, opened without blocking (a FIFO planted
// at /etc/ld.so.cache must not hang the probe). False with *error when it cannot be read.
bool read_whole(const std::string& path, size_t limit, std::string* out, std::string* error,
                int* err) {
  struct stat st {};
  int fd = open_regular_file(path, &st, error, err);
  if (fd < 0) return false;
  if (static_cast<uint64_t>(st.st_size) > limit) {
    *error = fmt::format("larger than {} MB", limit >> 20);
    ::close(fd);
    return false;
  }
  out->clear();
  char buf[65536];
  while (out->size() <= limit) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (out->size() > limit) {
    *error = fmt::format("larger than {} MB", limit >> 20);
    return false;
  }
  return true;
}

std::string cstr(const std::string& b, size_t off) {
  if (off >= b.size()) return "";
  return std::string(b.data() + off, strnlen(b.data() + off, b.size() - off));
}

}  // namespace

uint32_t host_cache_flags() {
#if defined(__x86_64__)
  return 0x0303;  // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64
#elif defined(__aarch64__)
  return 0x0a03;  // FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64
#elif defined(__powerpc64__)
  return 0x0503;  // FLAG_ELF_LIBC6 | FLAG_POWERPC_LIB64
#else
  return 0;
#endif
}

LdCache read_ld_cache(const std::string& path) {
  LdCache c;
  std::string b;
  int err = 0;
  if (!read_whole(path, kMaxCache, &b, &c.error, &err)) {
    // Absent is normal (an image where ldconfig never ran); anything else is named.
    c.status = err == ENOENT ? LdCacheStatus::missing : LdCacheStatus::malformed;
    if (err == ENOENT) c.error.clear();
    return c;
  }
  size_t base = 0;
  if (b.compare(0, sizeof kOldMagic - 1, kOldMagic) == 0) {
    // Old table first; the new header follows it, aligned to 8 bytes.
    if (b.size() < 16) {
      c.status = LdCacheStatus::malformed;
      c.error = "truncated old-format header";
      return c;
    }
    uint32_t nold = u32(b, 12);
    base = 16 + size_t(nold) * kOldEntry;
    base = (base + 7) & ~size_t(7);
  }
  if (b.size() < base + kNewHeader || b.compare(base, sizeof kNewMagic - 1, kNewMagic) != 0 ||
      b.compare(base + 17, 3, kNewVersion) != 0) {
    c.status = LdCacheStatus::malformed;
    c.error = "no glibc-ld.so.cache1.1 header";
    return c;
  }
  uint32_t n = u32(b, base + 20);
  if ((b.size() - base - kNewHeader) / kNewEntry < n) {
    c.status = LdCacheStatus::malformed;
    c.error = "entry table runs past the end of the file";
    return c;
  }
  c.entries.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    size_t e = base + kNewHeader + size_t(i) * kNewEntry;
    LdCacheEntry entry;
    entry.flags = u32(b, e);
    // String offsets are relative to the new header in a combined file and to the file start in
    // a new-only one; both are `base` here.
    entry.name = cstr(b, base + u32(b, e + 4));
    entry.path = cstr(b, base + u32(b, e + 8));
    uint64_t hwcap;
    std::memcpy(&hwcap, b.data() + e + 16, 8);
    if (hwcap & kHwcapExtension) {
      // The level is the directory the entry lives in (ldconfig indexes the same names in its
      // extension table): <dir>/glibc-hwcaps/<level>/<file>.
      const std::string marker = "/glibc-hwcaps/";
      size_t at = entry.path.rfind(marker);
      size_t end = at == std::string::npos ? at : entry.path.find('/', at + marker.size());
      entry.hwcaps = end == std::string::npos ? "?"
                                              : entry.path.substr(at + marker.size(),
                                                                  end - at - marker.size());
    }
    c.entries.push_back(std::move(entry));
  }
  c.status = LdCacheStatus::ok;
  return c;
}

const LdCacheEntry* find_in_cache(const LdCache& cache, const std::string& soname,
                                  uint32_t want) {
  for (const auto& e : cache.entries) {
    if (e.name == soname && (want == 0 || e.flags == want) && e.hwcaps.empty()) return &e;
  }
  return nullptr;
}

std::vector<const LdCacheEntry*> find_all_in_cache(const LdCache& cache,
                                                   const std::string& soname, uint32_t want) {
  std::vector<const LdCacheEntry*> out;
  for (const auto& e : cache.entries)
    if (e.name == soname && (want == 0 || e.flags == want)) out.push_back(&e);
  return out;
}

namespace {

std::string join_root(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  return root + (path.empty() || path[0] != '/' ? "/" : "") + path;
}

void read_conf(const std::string& root, const std::string& conf_path, int depth,
               std::vector<std::string>* out) {
  if (depth > 8) return;  // include cycles
  std::string text, error;
  int err = 0;
  // A configuration file is a few hundred bytes; 1 MB is generous.
  if (!read_whole(join_root(root, conf_path), 1u << 20, &text, &error, &err)) return;
  for (std::string line : split_lines(text)) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    if (!(words >> w)) continue;
    if (w == "include") {
      std::string pattern;
      while (words >> pattern) {
        if (pattern[0] != '/') {
          auto slash = conf_path.rfind('/');
          pattern = conf_path.substr(0, slash + 1) + pattern;
        }
        glob_t g{};
        if (::glob(join_root(root, pattern).c_str(), 0, nullptr, &g) == 0) {
          size_t strip = (root.empty() || root == "/") ? 0 : root.size();
          for (size_t i = 0; i < g.gl_pathc; ++i)
            read_conf(root, std::string(g.gl_pathv[i]).substr(strip), depth + 1, out);
        }
        ::globfree(&g);
      }
    } else if (w[0] == '/') {
      out->push_back(w);
    }
  }
}

}  // namespace

std::vector<std::string> read_ld_so_conf(const std::string& root, const std::string& conf_path) {
  std::vector<std::string> dirs;
  read_conf(root, conf_path, 0, &dirs);
  return dirs;
}

}  // namespace denpex
