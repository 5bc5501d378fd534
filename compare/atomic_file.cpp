#include "compare/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
  if (path == "-") {
    bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
    ok = std::fflush(stdout) == 0 && ok;
    if (!ok) *error = fmt::format("standard output: cannot write: {}", std::strerror(errno));
    return ok;
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    *error = fmt::format("{}: cannot create {}: {}", path, tmp, std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fflush(f) == 0 && ok;
  int write_errno = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    *error = fmt::format("{}: cannot write {}: {}", path, tmp, std::strerror(write_errno ? write_errno : errno));
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = fmt::format("{}: cannot rename {} into place: {}", path, tmp, std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace denpex
