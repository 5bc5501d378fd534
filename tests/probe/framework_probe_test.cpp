// JAX's and CuPy's NCCL rules on trees assembled from stand-in libraries (tests/real checks the
// same rules against the real jax and cupy wheels and /proc/PID/maps of their real imports).
#include <catch2/catch.hpp>

#include "probe/cupy_probe.h"
#include "probe/jax_probe.h"
#include "probe/probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

std::vector<SitePackagesDir> sites_of(const Scratch& s, std::vector<std::string> rels) {
  std::vector<SitePackagesDir> out;
  for (const auto& r : rels) out.push_back({s.path(r), "test"});
  return out;
}

// jax with its CUDA 12 plugin in `site`; the plugin library is the torch stand-in, whose forced
// DT_RPATH is the real plugin's first NCCL entry ($ORIGIN/../../nvidia/nccl/lib).
void make_jax(const Scratch& s, const std::string& site) {
  s.write(site + "/jax/__init__.py", "");
  s.write(site + "/jax/version.py", "_version = \"0.6.2\"\n");
  s.write(site + "/jax_plugins/xla_cuda12/__init__.py", "");
  s.copy(standin("torch-dyn/libtorch_cuda.so"), site + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so");
  s.write(site + "/jax_cuda12_plugin-0.6.2.dist-info/METADATA", "Name: jax-cuda12-plugin\n");
}

void nccl_wheel(const Scratch& s, const std::string& site, const std::string& variant) {
  std::string version = variant.substr(variant.find('-') + 1);
  s.write(site + "/nvidia/__init__.py", "");
  s.write(site + "/nvidia/nccl/__init__.py", "");
  s.copy(standin(variant + "/libnccl.so." + version), site + "/nvidia/nccl/lib/libnccl.so.2");
  s.write(site + "/nvidia_nccl_cu12-" + version + ".dist-info/METADATA", "Name: nvidia-nccl-cu12\n");
}

void make_cupy(const Scratch& s, const std::string& site, const std::string& min_pypi) {
  s.write(site + "/cupy/__init__.py", "");
  s.write(site + "/cupy/_version.py", "__version__ = '13.6.0'\n");
  s.write(site + "/cupy/.data/_wheel.json",
          "{\"cuda\": \"12.x\", \"packaging\": \"pip\", \"nccl\": {\"version\": \"2.25.1\", "
          "\"min_pypi_version\": \"" + min_pypi + "\", \"filenames\": [\"libnccl.so.2.25.1\"]}}");
  // An extension importing ncclCommRegister, with DT_NEEDED libnccl.so.2.
  s.copy(standin("torch-dyn-reg/libtorch_cuda.so"),
         site + "/cupy_backends/cuda/libs/nccl.cpython-311-x86_64-linux-gnu.so");
  s.write(site + "/cupy_cuda12x-13.6.0.dist-info/METADATA", "Name: cupy-cuda12x\n");
}

}  // namespace

TEST_CASE("standin NCCL: jax's plugin loads the nvidia.nccl package's library") {
  Scratch s;
  make_jax(s, "site");
  nccl_wheel(s, "site", "nccl-2.21.5");
  FrameworkInfo f = probe_jax(context_with_only(s.path("none")), sites_of(s, {"site"}), nullptr);
  REQUIRE(f.status == FrameworkStatus::ok);
  CHECK(f.version == "0.6.2");
  CHECK(f.package == "jax-cuda12-plugin 0.6.2");
  CHECK(f.nccl.path == s.path("site/nvidia/nccl/lib/libnccl.so.2"));
  CHECK(f.nccl.version == "2.21.5");
  CHECK(f.nccl.linkage == "wheel");
  CHECK(f.nccl_rule.find("nvidia.nccl") != std::string::npos);
}

TEST_CASE("standin NCCL: without an importable nvidia.nccl, the plugin's dlopen finds NCCL") {
  Scratch s;
  make_jax(s, "site");
  s.install_nccl("nccl-2.27.3", "libs");
  // An earlier nvidia package without nccl hides any later one from `import nvidia.nccl`.
  s.write("first/nvidia/__init__.py", "");
  FrameworkInfo f = probe_jax(context_with_only(s.path("libs")), sites_of(s, {"first", "site"}),
                              nullptr);
  REQUIRE(f.status == FrameworkStatus::ok);
  CHECK(f.nccl.version == "2.27.3");
  CHECK(f.nccl.linkage == "system");
  CHECK(f.nccl_rule.find("xla_cuda_plugin.so") != std::string::npos);
}

TEST_CASE("jax without the CUDA plugin is not recorded; an unreadable version is an error") {
  Scratch s;
  s.write("site/jax/__init__.py", "");
  CHECK(probe_jax(context_with_only(s.path("none")), sites_of(s, {"site"}), nullptr).status ==
        FrameworkStatus::missing);
  s.write("site/jax_plugins/xla_cuda12/__init__.py", "");
  FrameworkInfo f = probe_jax(context_with_only(s.path("none")), sites_of(s, {"site"}), nullptr);
  CHECK(f.status == FrameworkStatus::error);
  CHECK(f.error.find("version.py") != std::string::npos);
}

TEST_CASE("standin NCCL: cupy preloads a new enough nvidia-nccl wheel; its extension's ABI") {
  Scratch s;
  make_cupy(s, "site", "2.16.5");
  nccl_wheel(s, "site", "nccl-2.21.5");
  s.install_nccl("nccl-2.27.3", "libs");
  CupyProbe p = probe_cupy(context_with_only(s.path("libs")), sites_of(s, {"site"}), nullptr);
  REQUIRE(p.cupy.status == FrameworkStatus::ok);
  CHECK(p.cupy.version == "13.6.0");
  CHECK(p.cupy.package == "cupy-cuda12x 13.6.0");
  CHECK(p.cupy.nccl.version == "2.21.5");
  CHECK(p.cupy.nccl.linkage == "wheel");
  CHECK(p.cupy.nccl_rule.find("nvidia-nccl-cu12 2.21.5 wheel") != std::string::npos);
  REQUIRE(p.abi.size() == 1);
  CHECK(p.abi[0].consumer.find("cupy_backends/cuda/libs/nccl.") != std::string::npos);
  CHECK(p.abi[0].missing == std::vector<std::string>{"ncclCommRegister"});
}

TEST_CASE("standin NCCL: a wheel below cupy's minimum is passed over for the loader's NCCL") {
  Scratch s;
  make_cupy(s, "site", "2.25.0");
  nccl_wheel(s, "site", "nccl-2.21.5");
  s.install_nccl("nccl-2.27.3", "libs");
  CupyProbe p = probe_cupy(context_with_only(s.path("libs")), sites_of(s, {"site"}), nullptr);
  REQUIRE(p.cupy.status == FrameworkStatus::ok);
  CHECK(p.cupy.nccl.version == "2.27.3");
  CHECK(p.cupy.nccl.linkage == "system");
  CHECK(p.cupy.nccl_rule.find("DT_NEEDED") != std::string::npos);
  REQUIRE(p.abi.size() == 1);
  CHECK(p.abi[0].missing.empty());
  // CuPy's own library directory holds the json's exact file name: that one is preloaded.
  s.copy(standin("nccl-2.28.9-cu12/libnccl.so.2.28.9"),
         "home/.cupy/cuda_lib/12.x/nccl/2.25.1/lib/libnccl.so.2.25.1");
  ProbeContext ctx = context_with_only(s.path("libs"));
  ctx.env["HOME"] = s.path("home");
  p = probe_cupy(ctx, sites_of(s, {"site"}), nullptr);
  CHECK(p.cupy.nccl.version == "2.28.9");
  CHECK(p.cupy.nccl_rule.find("CUPY_CUDA_LIB_PATH") != std::string::npos);
}
