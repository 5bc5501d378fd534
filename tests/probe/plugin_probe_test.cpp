#include <catch2/catch.hpp>

#include "probe/plugin_probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

ProbeContext context(std::map<std::string, std::string> env, const std::string& llp) {
  ProbeContext ctx;
  ctx.env = std::move(env);
  ctx.loader = make_loader_env(FsView{}, "", llp);
  return ctx;
}

}  // namespace

TEST_CASE("the default net plugin name is found on LD_LIBRARY_PATH and its API read") {
  PluginInfo p = probe_plugin(context({}, standin("net-v8")), PluginKind::net, "");
  CHECK(p.status == PluginStatus::ok);
  CHECK(p.requested == "libnccl-net.so");
  CHECK(p.path == standin("net-v8/libnccl-net.so"));
  CHECK(p.api_versions == std::vector<std::string>{"ncclCollNetPlugin_v8", "ncclNetPlugin_v8"});
}

TEST_CASE("NCCL_NET_PLUGIN names: none, short names, paths, comma lists") {
  Scratch s;
  s.copy(standin("net-v8/libnccl-net.so"), "p/libnccl-net-ofi.so");
  CHECK(probe_plugin(context({{"NCCL_NET_PLUGIN", "none"}}, standin("net-v8")), PluginKind::net, "")
            .status == PluginStatus::disabled);
  PluginInfo short_name =
      probe_plugin(context({{"NCCL_NET_PLUGIN", "ofi"}}, s.path("p")), PluginKind::net, "");
  CHECK(short_name.status == PluginStatus::ok);
  CHECK(short_name.path == s.path("p/libnccl-net-ofi.so"));
  PluginInfo list = probe_plugin(
      context({{"NCCL_NET_PLUGIN", "absent," + s.path("p/libnccl-net-ofi.so")}}, ""),
      PluginKind::net, "");
  CHECK(list.status == PluginStatus::ok);
  CHECK(probe_plugin(context({}, s.path("p")), PluginKind::net, "").status ==
        PluginStatus::missing);
}

TEST_CASE("a library without plugin symbols is an error; tuner and profiler use their names") {
  Scratch s;
  s.copy(standin("nccl-2.21.5/libnccl.so.2.21.5"), "q/libnccl-net.so");
  PluginInfo p = probe_plugin(context({}, s.path("q")), PluginKind::net, "");
  CHECK(p.status == PluginStatus::error);
  CHECK(p.error.find("ncclNetPlugin_v") != std::string::npos);
  CHECK(probe_plugin(context({}, ""), PluginKind::tuner, "").requested == "libnccl-tuner.so");
  CHECK(probe_plugin(context({}, ""), PluginKind::profiler, "").requested ==
        "libnccl-profiler.so");
}
