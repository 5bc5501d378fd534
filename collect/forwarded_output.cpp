#include "collect/forwarded_output.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/monotonic_clock.h"

namespace denpex {

DrainStatus wait_until_read(int fd, double deadline) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return DrainStatus::error;
  if (!S_ISFIFO(st.st_mode)) return DrainStatus::not_a_pipe;
  for (;;) {
    // Linux answers FIONREAD on either end of a pipe with the bytes not yet read.
    int unread = 0;
    if (::ioctl(fd, FIONREAD, &unread) != 0) return DrainStatus::error;
    if (unread <= 0) return DrainStatus::drained;
    if (monotonic_seconds() >= deadline) return DrainStatus::timed_out;
    ::usleep(5 * 1000);
  }
}

}  // namespace denpex
