#include "compare/atomic_file.h"

#include <fcntl.h>
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

namespace {

// Writes all of `text` to `fd` and closes it. False (errno kept) when any step fails.
bool write_and_close(int fd, const std::string& text) {
  size_t off = 0;
  bool ok = true;
  while (ok && off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n > 0) off += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR) continue;
    else ok = false;
  }
  int saved = errno;
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok && saved) errno = saved;
  return ok;
}

NewFileStatus write_exclusive_in_place(const std::string& path, const std::string& text,
                                       std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = errno == EEXIST ? fmt::format("{}: exists", path)
                             : fmt::format("{}: cannot create: {}", path, std::strerror(errno));
    return errno == EEXIST ? NewFileStatus::exists : NewFileStatus::failed;
  }
  if (!write_and_close(fd, text)) {
    *error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
    std::remove(path.c_str());
    return NewFileStatus::failed;
  }
  return NewFileStatus::written;
}

}  // namespace

NewFileStatus write_new_file(const std::string& path, const std::string& text,
                             std::string* error) {
  if (::access(path.c_str(), F_OK) == 0) {
    *error = fmt::format("{}: exists", path);
    return NewFileStatus::exists;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = fmt::format("{}: cannot create {}: {}", path, tmp, std::strerror(errno));
    return NewFileStatus::failed;
  }
  if (!write_and_close(fd, text)) {
    *error = fmt::format("{}: cannot write {}: {}", path, tmp, std::strerror(errno));
    std::remove(tmp.c_str());
    return NewFileStatus::failed;
  }
  if (::link(tmp.c_str(), path.c_str()) == 0) {
    ::unlink(tmp.c_str());
    return NewFileStatus::written;
  }
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (link_errno == EEXIST) {
    *error = fmt::format("{}: exists", path);
    return NewFileStatus::exists;
  }
  // Filesystems without hard links (vfat, some FUSE and object-store mounts).
  if (link_errno == EPERM || link_errno == ENOTSUP ||
      link_errno == ENOSYS || link_errno == EMLINK)
    return write_exclusive_in_place(path, text, error);
  *error = fmt::format("{}: cannot link {} into place: {}", path, tmp, std::strerror(link_errno));
  return NewFileStatus::failed;
}

}  // namespace denpex
