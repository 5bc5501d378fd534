#include <catch2/catch.hpp>

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
