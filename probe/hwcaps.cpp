#include "probe/hwcaps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace denpex {

bool ldso_has_glibc_hwcaps(const std::string& host_file) {
  constexpr off_t kMax = 16 << 20;
  int fd = ::open(host_file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMax) {
    ::close(fd);
    return false;
  }
  std::string b(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < b.size()) {
    ssize_t n = ::read(fd, &b[got], b.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  b.resize(got);
  return b.find("glibc-hwcaps") != std::string::npos;
}

Hwcaps hwcaps_for(const LoaderArch& arch, const std::string& ldso_host_file, bool live) {
  Hwcaps h;
  h.names = arch.hwcaps;
  if (h.names.empty()) return h;
  if (!ldso_host_file.empty() && !ldso_has_glibc_hwcaps(ldso_host_file)) return h;
  if (!live) {
    h.mode = HwcapsMode::cpu_unknown;
    return h;
  }
  h.mode = HwcapsMode::cpu_known;
  h.supported = host_cpu_hwcaps();
  return h;
}

std::string hwcaps_subdir(const std::string& name) { return "glibc-hwcaps/" + name; }

}  // namespace denpex
