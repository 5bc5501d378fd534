// wait_until_read: a pipe is drained only once its reader has taken every byte; a pipe nobody
// reads times out at the deadline; files are not pipes; a closed descriptor is an error.
#include "collect/forwarded_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <thread>

#include "probe/monotonic_clock.h"

using denpex::DrainStatus;
using denpex::monotonic_seconds;
using denpex::wait_until_read;

namespace {

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { REQUIRE(::pipe(fds) == 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  int reader() const { return fds[0]; }
  int writer() const { return fds[1]; }
};

void put(int fd, const std::string& text) {
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

}  // namespace

TEST_CASE("an empty pipe is drained at once, from either end") {
  Pipe p;
  CHECK(wait_until_read(p.writer(), monotonic_seconds() + 5) == DrainStatus::drained);
  CHECK(wait_until_read(p.reader(), monotonic_seconds() + 5) == DrainStatus::drained);
}

TEST_CASE("bytes nobody reads keep the writer waiting until the deadline") {
  Pipe p;
  put(p.writer(), "denpex-probe: REJECT\n");
  const double deadline = monotonic_seconds() + 0.2;
  CHECK(wait_until_read(p.writer(), deadline) == DrainStatus::timed_out);
  CHECK(monotonic_seconds() >= deadline);
  // Waiting never consumes the bytes: the reader still gets all of them.
  char buf[64] = {};
  CHECK(::read(p.reader(), buf, sizeof buf) == 21);
}

TEST_CASE("the wait ends when the reader has taken the last byte") {
  Pipe p;
  put(p.writer(), std::string(3000, 'x'));
  std::thread reader([&] {
    ::usleep(100 * 1000);
    char buf[1000];
    for (int i = 0; i < 3; ++i) REQUIRE(::read(p.reader(), buf, sizeof buf) == 1000);
  });
  const DrainStatus s = wait_until_read(p.writer(), monotonic_seconds() + 30);
  reader.join();
  CHECK(s == DrainStatus::drained);
  // Drained means read: nothing is left for a second reader.
  ::fcntl(p.reader(), F_SETFL, O_NONBLOCK);
  char byte = 0;
  CHECK(::read(p.reader(), &byte, 1) == -1);
}

TEST_CASE("a file is not a pipe, a closed descriptor is an error") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  std::fputs("report\n", f);
  std::fflush(f);
  CHECK(wait_until_read(::fileno(f), monotonic_seconds() + 5) == DrainStatus::not_a_pipe);
  std::fclose(f);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  ::close(fds[1]);
  CHECK(wait_until_read(fds[1], monotonic_seconds() + 5) == DrainStatus::error);
}
