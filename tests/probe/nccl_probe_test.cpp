#include <catch2/catch.hpp>

#include <elf.h>

#include <fstream>

#include "probe/monotonic_clock.h"
#include "probe/nccl_literals.h"
#include "probe/nccl_probe.h"
#include "probe/probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

ProbeContext context(const std::string& llp, const std::string& preload = "") {
  ProbeContext ctx;
  ctx.loader = make_loader_env(FsView{}, preload, llp);
  ctx.running_as_root = ::geteuid() == 0;
  ctx.step_timeout = 2.0;
  return ctx;
}

// Only what the test puts on LD_LIBRARY_PATH.
ProbeContext isolated_context(const std::string& llp) { return context_with_only(llp); }

}  // namespace

TEST_CASE("the real NCCL 2.28.9 is found through the loader cache and confirmed live", "[real-nccl]") {
  REQUIRE_FALSE(real_nccl().empty());  // run only where the loader cache has one (tests/run_catch.sh)
  NcclInfo n = probe_system_nccl(context(""), nullptr);
  CHECK(n.status == NcclStatus::ok);
  CHECK(n.path == real_nccl_file());
  CHECK(n.version == "2.28.9");
  CHECK(n.version_code == 22809);
  CHECK(n.cuda_build == "13.0");
  CHECK(n.method == "dlopen");
  CHECK(n.origin == "ld.so.cache");
}

TEST_CASE("standin NCCLs report their exact versions, including the pre-2.9 code") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "a");
  s.install_nccl("nccl-2.8.4", "b");
  NcclInfo a = probe_system_nccl(isolated_context(s.path("a")), nullptr);
  CHECK(a.status == NcclStatus::ok);
  CHECK(a.version == "2.21.5");
  CHECK(a.version_code == 22105);
  CHECK(a.cuda_build == "12.4");
  CHECK(a.path == s.path("a/libnccl.so.2.21.5"));
  CHECK(a.origin == "LD_LIBRARY_PATH");

  NcclInfo b = probe_system_nccl(isolated_context(s.path("b")), nullptr);
  CHECK(b.status == NcclStatus::ok);
  CHECK(b.version == "2.8.4");
  CHECK(b.version_code == 2804);
  CHECK(b.cuda_build == "11.2");
}

TEST_CASE("no NCCL anywhere is missing, with a reason") {
  Scratch s;
  NcclInfo n = probe_system_nccl(isolated_context(s.path("empty")), nullptr);
  CHECK(n.status == NcclStatus::missing);
  CHECK(n.error.find("no libnccl.so.2") != std::string::npos);
}

TEST_CASE("broken NCCLs are unloadable and say why in plain words") {
  Scratch s;
  struct Case {
    const char* variant;
    const char* says;
  };
  const Case cases[] = {
      {"nccl-ctor-crash", "crashed with SIGSEGV"},
      {"nccl-ctor-hang", "did not return within"},
      {"nccl-getversion-hang", "did not return within"},
      {"nccl-no-getversion", "does not export ncclGetVersion"},
  };
  for (const auto& c : cases) {
    INFO(c.variant);
    s.copy(standin(std::string(c.variant) + "/libnccl.so.2"), std::string(c.variant) + "/libnccl.so.2");
    ProbeContext ctx = isolated_context(s.path(c.variant));
    ctx.step_timeout = 0.5;
    double t0 = monotonic_seconds();
    NcclInfo n = probe_system_nccl(ctx, nullptr);
    // Far below "never": a step that ignored the deadline would hang here for good.
    CHECK(monotonic_seconds() - t0 < 30.0);
    CHECK(n.status == NcclStatus::unloadable);
    CHECK(n.error.find(c.says) != std::string::npos);
    // The literal is still read, so the report can name the version that failed.
    CHECK(n.static_version == "2.21.5");
  }
  s.write("junk/libnccl.so.2", "random bytes, not a library");
  NcclInfo junk = probe_system_nccl(isolated_context(s.path("junk")), nullptr);
  CHECK(junk.status == NcclStatus::unloadable);
  CHECK(junk.error.find("not an ELF") != std::string::npos);

  std::string arm = s.copy(standin("nccl-2.21.5/libnccl.so.2.21.5"), "arm/libnccl.so.2");
  {
    std::fstream f(arm, std::ios::in | std::ios::out | std::ios::binary);
    uint16_t other = other_machine();
    f.seekp(18);
    f.write(reinterpret_cast<const char*>(&other), 2);
  }
  NcclInfo a = probe_system_nccl(isolated_context(s.path("arm")), nullptr);
  CHECK(a.status == NcclStatus::unloadable);
  CHECK(a.error.find(other_machine_reason()) != std::string::npos);

  ::mkdir(s.path("dir").c_str(), 0755);
  ::mkdir(s.path("dir/libnccl.so.2").c_str(), 0755);
  NcclInfo d = probe_system_nccl(isolated_context(s.path("dir")), nullptr);
  CHECK(d.status == NcclStatus::unloadable);
  CHECK(d.error.find("directory") != std::string::npos);

  s.link("loop2", "loop/libnccl.so.2");
  s.link("libnccl.so.2", "loop/loop2");
  NcclInfo l = probe_system_nccl(isolated_context(s.path("loop")), nullptr);
  CHECK(l.status == NcclStatus::unloadable);
  CHECK(l.error.find("symbolic links") != std::string::npos);
}

TEST_CASE("as root, a library in a directory others can write is read, never loaded", "[root]") {
  REQUIRE(::geteuid() == 0);  // run only as root (tests/run_catch.sh)
  Scratch s;
  std::string marker = std::string(DENPEX_MARKER_DIR) + "/nccl-loaded";
  ::unlink(marker.c_str());
  s.copy(standin("nccl-marker/libnccl.so.2.26.2"), "open/libnccl.so.2");
  ::chmod(s.path("open").c_str(), 0777);
  std::vector<std::string> untrusted;
  NcclInfo n = probe_system_nccl(isolated_context(s.path("open")), &untrusted);
  CHECK(n.status == NcclStatus::not_loaded);
  CHECK(n.version == "2.26.2");
  CHECK(n.version_code == 22602);
  REQUIRE(untrusted.size() == 1);
  CHECK(untrusted[0].find("writable by every user") != std::string::npos);
  CHECK(::access(marker.c_str(), F_OK) != 0);

  // Trusted again, the same library is loaded: the marker shows the test can tell.
  ::chmod(s.path("open").c_str(), 0755);
  NcclInfo loaded = probe_system_nccl(isolated_context(s.path("open")), nullptr);
  CHECK(loaded.status == NcclStatus::ok);
  CHECK(::access(marker.c_str(), F_OK) == 0);
  ::unlink(marker.c_str());
}

TEST_CASE("read statically, a libnccl without ncclGetVersion is unloadable too") {
  Scratch s;
  s.copy(standin("nccl-no-getversion/libnccl.so.2"), "img/" + image_lib_dir() + "/libnccl.so.2");
  ProbeContext ctx = isolated_context("");
  ctx.loader = make_loader_env(FsView{s.path("img")}, "", "");
  ctx.loader.cache = LdCache{};
  ctx.allow_load = false;  // as under --root
  NcclInfo n = probe_system_nccl(ctx, nullptr);
  CHECK(n.status == NcclStatus::unloadable);
  CHECK(n.error.find("does not export ncclGetVersion") != std::string::npos);
  CHECK(n.static_version == "2.21.5");

  // A real one in the same place is read statically, not called unloadable.
  s.install_nccl("nccl-2.21.5", "img2/" + image_lib_dir());
  ctx.loader = make_loader_env(FsView{s.path("img2")}, "", "");
  ctx.loader.cache = LdCache{};
  NcclInfo ok = probe_system_nccl(ctx, nullptr);
  CHECK(ok.status == NcclStatus::not_loaded);
  CHECK(ok.version == "2.21.5");
}

TEST_CASE("a probe's literal cache reads a file once, and again once it is replaced") {
  Scratch s;
  const std::string a = s.install_nccl("nccl-2.21.5", "a");
  s.install_nccl("nccl-2.8.4", "b");
  NcclLiterals literals;
  std::string version, cuda;
  REQUIRE(literals.read(a, &version, &cuda));
  CHECK(version + " " + cuda == "2.21.5 12.4");
  version.clear();
  REQUIRE(literals.read(a, &version, &cuda));  // from the cache: the same answer
  CHECK(version == "2.21.5");
  // Another library now where the link points (a new inode, as an upgrade leaves it).
  REQUIRE(::rename(s.path("b/libnccl.so.2.8.4").c_str(), s.path("a/libnccl.so.2.21.5").c_str()) == 0);
  REQUIRE(literals.read(a, &version, &cuda));
  CHECK(version + " " + cuda == "2.8.4 11.2");
  CHECK_FALSE(literals.read(s.path("none/libnccl.so.2"), &version, &cuda));
  const std::string text = s.write("text/libnccl.so.2", "not a library");
  CHECK_FALSE(literals.read(text, &version, &cuda));
}
