#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "probe/ld_cache.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

TEST_CASE("the machine's loader cache maps libnccl.so.2 where ldconfig -p says", "[real-nccl]") {
  LdCache c = read_ld_cache("/etc/ld.so.cache");
  REQUIRE(c.status == LdCacheStatus::ok);
  CHECK(c.entries.size() > 10);
  REQUIRE_FALSE(real_nccl().empty());  // run only where the loader cache has one (tests/run_catch.sh)
  const LdCacheEntry* e = find_in_cache(c, "libnccl.so.2");
  REQUIRE(e != nullptr);
  CHECK(e->path == real_nccl());
}

TEST_CASE("a corrupt or missing cache is reported, not trusted") {
  Scratch s;
  CHECK(read_ld_cache(s.path("none")).status == LdCacheStatus::missing);
  LdCache bad = read_ld_cache(s.write("bad", "glibc-ld.so.cache1.1 but then garbage"));
  CHECK(bad.status == LdCacheStatus::malformed);
  // A header claiming more entries than the file holds.
  std::string h = "glibc-ld.so.cache1.1";
  h.resize(48, '\0');
  h[20] = '\xff';
  h[21] = '\xff';
  CHECK(read_ld_cache(s.write("short", h)).status == LdCacheStatus::malformed);
}

TEST_CASE("ld.so.conf include globs are followed inside a root") {
  Scratch s;
  s.write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/a # comment\n");
  s.write("etc/ld.so.conf.d/x.conf", "/opt/nccl/lib\n");
  auto dirs = read_ld_so_conf(s.dir(), "/etc/ld.so.conf");
  CHECK(dirs == std::vector<std::string>{"/opt/nccl/lib", "/opt/a"});
}

// A FIFO at /etc/ld.so.cache would block std::ifstream's open forever.
TEST_CASE("a FIFO in place of the cache is reported, not waited on") {
  Scratch s;
  std::string fifo = s.path("ld.so.cache");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  LdCache c = read_ld_cache(fifo);
  CHECK(c.status == LdCacheStatus::malformed);
  CHECK(c.error == "is a FIFO (named pipe), not a regular file");
  CHECK(read_ld_cache(s.path("absent")).status == LdCacheStatus::missing);
  s.write("etc/ld.so.conf", "include ld.so.conf.d/*.conf\n");
  std::string d = s.path("etc/ld.so.conf.d");
  std::filesystem::create_directories(d);
  REQUIRE(::mkfifo((d + "/x.conf").c_str(), 0644) == 0);
  s.write("etc/ld.so.conf.d/y.conf", "/opt/y/lib\n");
  CHECK(read_ld_so_conf(s.dir(), "/etc/ld.so.conf") == std::vector<std::string>{"/opt/y/lib"});
}
