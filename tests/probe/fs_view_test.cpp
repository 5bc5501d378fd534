#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include "probe/fs_view.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

TEST_CASE("resolve follows symlinks inside a root and never out of it") {
  Scratch s;
  s.write("usr/lib/real.so", "x");
  s.link("real.so", "usr/lib/rel.so");
  s.link("/usr/lib/real.so", "usr/lib/abs.so");
  s.link("../../../../../../etc/passwd", "usr/lib/escape.so");
  s.link("loop2", "usr/lib/loop1");
  s.link("loop1", "usr/lib/loop2");
  FsView v{s.dir()};
  CHECK(resolve(v, "/usr/lib/rel.so").path == "/usr/lib/real.so");
  // An absolute target is taken inside the root, as a process in the image sees it.
  CHECK(resolve(v, "/usr/lib/abs.so").path == "/usr/lib/real.so");
  // ".." stops at the root: the host's /etc/passwd is not what this names.
  Resolved esc = resolve(v, "/usr/lib/escape.so");
  CHECK(esc.status == ResolveStatus::not_found);
  CHECK(resolve(v, "/usr/lib/loop1").status == ResolveStatus::loop);
  CHECK(resolve(v, "/usr/lib/none").status == ResolveStatus::not_found);
}

// The live view is resolved by the kernel in one walk; a root of "/." names the same live
// system but takes the component-by-component walk that image roots use. Both must agree on
// every shape: relative, absolute and chained links, "." and "..", a trailing slash, a link
// that dangles, a loop, a file used as a directory.
TEST_CASE("the kernel's resolution of the live view agrees with the walk") {
  Scratch s;
  s.write("lib/real.so", "x");
  s.link("real.so", "lib/rel.so");
  s.link(s.path("lib/rel.so"), "lib/abs.so");
  s.link("abs.so", "lib/chain.so");
  s.link("lib", "dirlink");
  s.link("missing.so", "lib/dangling.so");
  s.link("loop2", "lib/loop1");
  s.link("loop1", "lib/loop2");
  const std::vector<std::string> paths = {
      s.path("lib/real.so"),          s.path("lib/rel.so"),    s.path("lib/abs.so"),
      s.path("lib/chain.so"),         s.path("dirlink/chain.so"),
      s.path("dirlink/../lib/./rel.so"), s.path("lib/"),       s.path("lib/real.so/"),
      s.path("lib/dangling.so"),      s.path("lib/none.so"),   s.path("lib/real.so/x"),
      "/etc/ld.so.cache",             "/",                     "/proc/self",
  };
  FsView walked{"/."};
  for (const std::string& p : paths) {
    INFO(p);
    Resolved kernel = resolve(FsView{}, p);
    Resolved walk = resolve(walked, p);
    CHECK(kernel.status == walk.status);
    if (walk.status == ResolveStatus::ok) CHECK(kernel.path == walk.path);
  }
  CHECK(resolve(FsView{}, s.path("lib/chain.so")).path == s.path("lib/real.so"));
  CHECK(resolve(FsView{}, s.path("lib/loop1")).status == ResolveStatus::loop);
  CHECK(resolve(walked, s.path("lib/loop1")).status == ResolveStatus::loop);
}

TEST_CASE("list_dir keeps the names with a prefix and bounds the entries it reads") {
  Scratch s;
  for (const char* n : {"libnccl.so.2", "libnccl.so", "libc.so.6", "libnccl-net.so"})
    s.write(std::string("d/") + n, "x");
  bool truncated = true;
  std::vector<std::string> kept = list_dir(FsView{}, s.path("d"), 100, &truncated, "libnccl.so");
  std::sort(kept.begin(), kept.end());
  CHECK(kept == std::vector<std::string>{"libnccl.so", "libnccl.so.2"});
  CHECK_FALSE(truncated);
  CHECK(list_dir(FsView{}, s.path("d"), 100, nullptr).size() == 4);
  // The bound counts every entry read, kept or not: a huge directory costs the same either way.
  list_dir(FsView{}, s.path("d"), 3, &truncated, "libnccl.so");
  CHECK(truncated);
}

TEST_CASE("read_small_file is bounded and refuses non-files") {
  Scratch s;
  std::string out;
  bool truncated = false;
  s.write("big", std::string(1000, 'a'));
  REQUIRE(read_small_file(FsView{}, s.path("big"), 100, &out, &truncated));
  CHECK(out.size() == 100);
  CHECK(truncated);
  CHECK_FALSE(read_small_file(FsView{}, s.dir(), 100, &out, nullptr));
  REQUIRE(::mkfifo(s.path("fifo").c_str(), 0600) == 0);
  CHECK_FALSE(read_small_file(FsView{}, s.path("fifo"), 100, &out, nullptr));
}

// A FIFO where a file is expected blocks open() (and the probe with it) until a writer comes.
// Every probe read goes through open_regular_file.
TEST_CASE("special files are refused without blocking, naming what they are") {
  Scratch s;
  std::string fifo = s.path("version.py");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::string error;
  CHECK(open_regular_file(fifo, nullptr, &error) == -1);
  CHECK(error == "is a FIFO (named pipe), not a regular file");
  std::string text;
  CHECK_FALSE(read_small_file(FsView{s.dir()}, "/version.py", 4096, &text, nullptr, &error));
  CHECK(error == "is a FIFO (named pipe), not a regular file");
  CHECK(open_regular_file(s.dir(), nullptr, &error) == -1);
  CHECK(error == "is a directory");
  CHECK(open_regular_file("/dev/null", nullptr, &error) == -1);
  CHECK(error == "is a character device, not a regular file");
  int err = 0;
  CHECK(open_regular_file(s.path("absent"), nullptr, &error, &err) == -1);
  CHECK(err == ENOENT);
  s.write("real.txt", "hello");
  struct stat st {};
  int fd = open_regular_file(s.path("real.txt"), &st, &error);
  REQUIRE(fd >= 0);
  CHECK(st.st_size == 5);
  ::close(fd);
}

// Refused without being opened at all: a writer blocked in open(O_WRONLY) on a FIFO is released
// by any reader's open; open_regular_file must not be that reader (nor, for a device, trigger
// whatever its open() does).
TEST_CASE("a FIFO is refused without being opened") {
  Scratch s;
  std::string fifo = s.path("libnccl.so.2");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  std::atomic<bool> writer_opened{false};
  std::thread writer([&] {
    int w = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);  // blocks until a reader opens
    writer_opened = true;
    if (w >= 0) ::close(w);
  });
  std::string error;
  for (int i = 0; i < 20; ++i) {
    CHECK(open_regular_file(fifo, nullptr, &error) == -1);
    ::usleep(5000);
  }
  CHECK(error == "is a FIFO (named pipe), not a regular file");
  CHECK_FALSE(writer_opened.load());
  // Release the writer.
  int r = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  writer.join();
  if (r >= 0) ::close(r);
  CHECK(writer_opened.load());
}
