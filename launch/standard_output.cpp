#include "launch/standard_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

int close_standard_output(const std::string& tool, int code) {
  // stdio keeps what a failed write could not send and tries it again here, so errno says why
  // (ENOSPC, EPIPE, EIO); a flush that failed earlier emptied the buffer and left only the
  // error indicator, whose cause is gone.
  errno = 0;
  bool failed = std::fflush(stdout) != 0;
  int why = failed ? errno : 0;
  if (std::ferror(stdout)) failed = true;
  // close() is where NFS and some FUSE file systems report a write that never reached the
  // server; they report it on every descriptor's close, so a duplicate is closed and stdout
  // stays open for whatever still runs after main (a thread, an exit handler). No duplicate
  // (EBADF): stdout was closed before the program started, and nothing was printed.
  if (!failed) {
    const int fd = ::dup(STDOUT_FILENO);
    if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
      failed = true;
      why = errno;
    }
  }
  if (!failed) return code;
  if (code != 2) {
    const std::string reason = why ? std::strerror(why) : "a write failed earlier";
    fmt::print(stderr, "{}: cannot write to standard output: {}\n", tool, reason);
    std::fflush(stderr);
  }
  return 2;
}

}  // namespace denpex
