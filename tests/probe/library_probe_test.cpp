// probe/library_probe: the resolve -> trust -> isolate -> call sequence the NCCL, driver and
// plugin probes share, and the child's answer through the pipe.
#include <catch2/catch.hpp>

#include "probe/library_probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

// Only what the test puts in `dir` is found; a hung child is given up after 0.5 s.
ProbeContext only(const std::string& dir) { return context_with_only(dir, 0.5); }

LibraryProbe nccl_in(const ProbeContext& ctx, const char* symbol = "ncclGetVersion",
                     std::vector<std::string>* untrusted = nullptr) {
  return probe_library(ctx, resolve_library(ctx.loader, "libnccl.so.2", Requester{}), symbol,
                       untrusted);
}

}  // namespace

TEST_CASE("a version call survives the pipe exactly, newlines and all") {
  VersionCall c;
  c.status = VersionCallStatus::loaded;
  c.rc = -3;
  c.value = 22809;
  c.loaded_path = "/odd\ndir/libnccl.so.2";
  c.error = "two\nlines";
  VersionCall back;
  REQUIRE(decode_version_call(encode_version_call(c), &back));
  CHECK(back.status == c.status);
  CHECK(back.rc == c.rc);
  CHECK(back.value == c.value);
  CHECK(back.loaded_path == c.loaded_path);
  CHECK(back.error == c.error);

  VersionCall missing;
  missing.status = VersionCallStatus::no_library;
  missing.error = "libx.so: cannot open shared object file";
  REQUIRE(decode_version_call(encode_version_call(missing), &back));
  CHECK(back.status == VersionCallStatus::no_library);
  CHECK(back.loaded_path.empty());
  CHECK(back.error == missing.error);
}

TEST_CASE("what the encoder did not write is no answer") {
  VersionCall c;
  CHECK_FALSE(decode_version_call("", &c));
  CHECK_FALSE(decode_version_call("0 0 0 0", &c));           // no end of line
  CHECK_FALSE(decode_version_call("7 0 0 0\n", &c));         // no such status
  CHECK_FALSE(decode_version_call("0 0 0 99\nshort", &c));   // path longer than the text
  CHECK_FALSE(decode_version_call("0 0 0 0 extra\n", &c));
  CHECK_FALSE(decode_version_call("V 22809 /x\n", &c));      // the old NCCL answer format
}

TEST_CASE("the loader's answer: nothing found, or a file it would stop at") {
  Scratch s;
  LibraryProbe none = nccl_in(only(s.path("empty")));
  CHECK(none.step == LibraryStep::not_found);
  CHECK(none.path.empty());
  s.write("junk/libnccl.so.2", "random bytes, not a library");
  LibraryProbe junk = nccl_in(only(s.path("junk")));
  CHECK(junk.step == LibraryStep::fatal);
}

TEST_CASE("found and loaded in the child: the call's answer comes back") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "a");
  LibraryProbe lp = nccl_in(only(s.path("a")));
  REQUIRE(lp.step == LibraryStep::called);
  CHECK(lp.path == s.path("a/libnccl.so.2.21.5"));
  CHECK(lp.host == lp.path);
  CHECK(lp.call.status == VersionCallStatus::loaded);
  CHECK(lp.call.rc == 0);
  CHECK(lp.call.value == 22105);
  CHECK(lp.call.loaded_path == s.path("a/libnccl.so.2.21.5"));

  LibraryProbe other = nccl_in(only(s.path("a")), "cuDriverGetVersion");
  REQUIRE(other.step == LibraryStep::called);
  CHECK(other.call.status == VersionCallStatus::no_symbol);
}

TEST_CASE("not loaded: under --root, or when no call is asked for") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "a");
  ProbeContext image = only(s.path("a"));
  image.allow_load = false;
  std::vector<std::string> untrusted;
  LibraryProbe lp = nccl_in(image, "ncclGetVersion", &untrusted);
  CHECK(lp.step == LibraryStep::not_loaded);
  CHECK(lp.not_loaded == NotLoaded::image);
  CHECK(lp.path == s.path("a/libnccl.so.2.21.5"));
  CHECK(untrusted.empty());
  LibraryProbe read_only = nccl_in(only(s.path("a")), nullptr);
  CHECK(read_only.step == LibraryStep::not_loaded);
  CHECK(read_only.not_loaded == NotLoaded::no_call);
}

TEST_CASE("a child that crashes or hangs is a step, not the probe's end") {
  Scratch s;
  s.copy(standin("nccl-ctor-crash/libnccl.so.2"), "crash/libnccl.so.2");
  LibraryProbe crash = nccl_in(only(s.path("crash")));
  CHECK(crash.step == LibraryStep::isolation_failed);
  CHECK(crash.error.find("crashed with SIGSEGV") != std::string::npos);
  s.copy(standin("nccl-getversion-hang/libnccl.so.2"), "hang/libnccl.so.2");
  LibraryProbe hang = nccl_in(only(s.path("hang")));
  CHECK(hang.step == LibraryStep::isolation_failed);
  CHECK(hang.error.find("did not return within 0.5 s") != std::string::npos);
}
