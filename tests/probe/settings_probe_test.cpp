#include <catch2/catch.hpp>

#include <sys/utsname.h>

#include "probe/probe.h"
#include "probe/settings_probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

TEST_CASE("only NCCL_* variables are recorded") {
  ProbeContext ctx;
  ctx.env = {{"NCCL_PROTO", "Simple"}, {"NCCL_DEBUG", "INFO"}, {"PATH", "/bin"}, {"NCCLX", "1"}};
  auto m = nccl_env_settings(ctx);
  CHECK(m == std::map<std::string, std::string>{{"NCCL_DEBUG", "INFO"}, {"NCCL_PROTO", "Simple"}});
}

TEST_CASE("nccl.conf files: user file first, /etc second, first one wins") {
  Scratch s;
  s.write("home/.nccl.conf", "# mine\nNCCL_PROTO=LL128\n  NCCL_ALGO = Ring \nnot a setting\n");
  s.write("etc/nccl.conf", "NCCL_PROTO=Simple\nNCCL_IB_HCA=mlx5\n");
  ProbeContext ctx;
  ctx.env = {{"HOME", "/home"}};
  ctx.loader.fs = FsView{s.dir()};
  auto m = nccl_conf_settings(ctx);
  CHECK(m == std::map<std::string, std::string>{
                 {"NCCL_ALGO", "Ring"}, {"NCCL_IB_HCA", "mlx5"}, {"NCCL_PROTO", "LL128"}});
  ctx.env = {{"HOME", "/home"}, {"NCCL_CONF_FILE", "/etc/nccl.conf"}};
  CHECK(nccl_conf_settings(ctx).at("NCCL_PROTO") == "Simple");
}

TEST_CASE("identity: host, pid and architecture are filled") {
  ProbeContext ctx;
  RankRecord r;
  fill_identity(ctx, &r);
  CHECK_FALSE(r.host.empty());
  CHECK(r.pid == ::getpid());
  struct utsname u{};
  REQUIRE(::uname(&u) == 0);
  CHECK(r.arch == u.machine);  // the machine's, not one assumed
}

TEST_CASE("identity: the record carries the rank's pid, and an image is named as the image") {
  Scratch s;
  s.write("etc/os-release", "ID=ubuntu\n");
  ProbeOptions o = options_with({});
  o.pid = 4242;  // the rank's, when a forked child probes for it
  CHECK(probe_rank(o).pid == 4242);
  o.root = s.dir();
  RankRecord image = probe_rank(o);
  CHECK(image.host == "image " + s.dir());
  CHECK(image.container);
  o.image_name = "nvcr.io/nvidia/pytorch:24.05-py3";
  CHECK(probe_rank(o).host == "image nvcr.io/nvidia/pytorch:24.05-py3");
}

TEST_CASE("probe_rank's loader reads LD_LIBRARY_PATH from the options' environment") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "a");
  ProbeOptions o = options_with({{"LD_LIBRARY_PATH", s.path("a")}});
  RankRecord r = probe_rank(o);
  CHECK(r.system_nccl.origin == "LD_LIBRARY_PATH");
  CHECK(r.system_nccl.path == s.path("a/libnccl.so.2.21.5"));
  CHECK(r.nccl_env.empty());
}

TEST_CASE("env_value: the value, or empty when unset") {
  const Environment env = {{"LD_PRELOAD", "/x.so"}, {"EMPTY", ""}};
  CHECK(env_value(env, "LD_PRELOAD") == "/x.so");
  CHECK(env_value(env, "EMPTY").empty());
  CHECK(env_value(env, "UNSET").empty());
  ProbeContext ctx;
  ctx.env = env;
  CHECK(env_value(ctx, "LD_PRELOAD") == "/x.so");
}
