#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>

#include "probe/probe_inputs.h"

using namespace denpex;

namespace {

ProbeOptions options() {
  ProbeOptions o;
  o.env = {{"PATH", "/usr/bin"}, {"LD_LIBRARY_PATH", "/opt/nccl/lib"}, {"RANK", "0"},
           {"LOCAL_RANK", "0"}, {"TORCHELASTIC_ERROR_FILE", "/tmp/x/0/error.json"}};
  return o;
}

}  // namespace

TEST_CASE("ranks that differ only in their launcher's per-rank variables share a probe key") {
  const ProbeOptions a = options();
  REQUIRE_FALSE(probe_input_key(a).empty());
  ProbeOptions b = a;
  b.env["RANK"] = "3";
  b.env["LOCAL_RANK"] = "1";
  b.env["GROUP_RANK"] = "1";
  b.env["ROLE_RANK"] = "3";
  b.env["TORCHELASTIC_ERROR_FILE"] = "/tmp/x/1/error.json";
  CHECK(probe_input_key(b) == probe_input_key(a));
}

TEST_CASE("anything else a probe could see differently gives another key") {
  const ProbeOptions a = options();
  const std::string key = probe_input_key(a);
  auto differs = [&](ProbeOptions b) { return probe_input_key(b) != key; };
  ProbeOptions b = a;
  b.env["LD_PRELOAD"] = "/opt/other/libnccl.so.2";
  CHECK(differs(b));
  b = a;
  b.env["LD_LIBRARY_PATH"] = "/opt/nccl/lib:";
  CHECK(differs(b));
  b = a;
  b.env["NCCL_PROTO"] = "Simple";
  CHECK(differs(b));
  b = a;
  b.env["LD_LIBRARY_PATH"] = "";  // set but empty is not unset
  ProbeOptions c = a;
  c.env.erase("LD_LIBRARY_PATH");
  CHECK(probe_input_key(b) != probe_input_key(c));
  b = a;
  b.site_packages = {"/opt/venv/lib/python3.11/site-packages"};
  CHECK(differs(b));
  b = a;
  b.running_as_root = !a.running_as_root;
  CHECK(differs(b));
  // A relative LD_LIBRARY_PATH entry resolves against the working directory.
  char here[4096];
  REQUIRE(::getcwd(here, sizeof here));
  REQUIRE(::chdir("/") == 0);
  const std::string from_root = probe_input_key(a);
  REQUIRE(::chdir(here) == 0);
  CHECK(from_root != key);
  CHECK(probe_input_key(a) == key);
}
