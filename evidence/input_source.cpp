#include "evidence/input_source.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "evidence/decode.h"

namespace denpex::evidence {
namespace {

class FdSource : public ByteSource {
 public:
  FdSource(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  long read(char* buf, size_t cap, std::string* error) override {
    for (;;) {
      ssize_t n = ::read(fd_, buf, cap);
      if (n >= 0) return static_cast<long>(n);
      if (errno == EINTR) continue;
      *error = fmt::format("{}: read failed: {}", name_, std::strerror(errno));
      return -1;
    }
  }

 private:
  int fd_;
  bool owned_;
  std::string name_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string bytes) : bytes_(std::move(bytes)) {}
  long read(char* buf, size_t cap, std::string*) override {
    size_t n = std::min(cap, bytes_.size() - pos_);
    std::memcpy(buf, bytes_.data() + pos_, n);
    pos_ += n;
    return static_cast<long>(n);
  }

 private:
  std::string bytes_;
  size_t pos_ = 0;
};

}  // namespace

const char* to_string(InputCut::Why why) {
  switch (why) {
    case InputCut::Why::damaged: return "damaged";
    case InputCut::Why::size_limit: return "size-limit";
    case InputCut::Why::ratio_limit: return "ratio-limit";
    case InputCut::Why::none: break;
  }
  return "";
}

OpenedInput open_input(const std::string& path, const DecodeLimits& limits) {
  OpenedInput out;
  if (path == "-") {
    return open_decoded(std::make_unique<FdSource>(0, false, "standard input"), "standard input",
                        limits);
  }
  // O_NONBLOCK so that opening a FIFO cannot hang; special files are refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    out.status = e == ENOENT ? OpenedInput::Status::missing : OpenedInput::Status::unreadable;
    out.message = fmt::format("{}: cannot open: {}", path, std::strerror(e));
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    out.status = OpenedInput::Status::unreadable;
    out.message = fmt::format("{}: not a regular file: give a log file, or - for standard input", path);
    return out;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return open_decoded(std::make_unique<FdSource>(fd, true, path), path, limits);
}

std::unique_ptr<ByteSource> memory_source(std::string bytes) {
  return std::make_unique<MemorySource>(std::move(bytes));
}

}  // namespace denpex::evidence
