// Helpers shared by the fuzz targets: the readers under test take a path, so the input is put in
// an anonymous memory file (memfd) and handed over as /proc/self/fd/N: no disk traffic, nothing
// left behind, and regular-file semantics (stat size, pread) like a real file.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace denpex_fuzz {

class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(::memfd_create("denpex-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) return;
    size_t done = 0;
    while (done < size) {
      ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace denpex_fuzz
