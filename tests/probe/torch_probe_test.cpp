#include <catch2/catch.hpp>

#include "probe/probe.h"
#include "probe/torch_probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

// A venv-style site-packages with torch and (optionally) the nvidia-nccl wheel.
std::string make_site(const Scratch& s, const std::string& torch_variant,
                      const std::string& wheel_variant, const std::string& version = "2.5.1+cu124") {
  std::string site = "env/lib/python3.11/site-packages";
  s.write(site + "/torch/version.py",
          "from typing import Optional\n__all__ = ['__version__', 'debug', 'cuda']\n"
          "__version__ = '" + version + "'\ndebug = False\n"
          "cuda: Optional[str] = '12.4'\ngit_version = 'abc'\nhip: Optional[str] = None\n");
  s.copy(standin(torch_variant + "/libtorch_cuda.so"), site + "/torch/lib/libtorch_cuda.so");
  if (!wheel_variant.empty()) {
    std::string ver = wheel_variant.substr(wheel_variant.find('-') + 1);
    s.copy(standin(wheel_variant + "/libnccl.so." + ver), site + "/nvidia/nccl/lib/libnccl.so.2");
    s.write(site + "/nvidia_nccl_cu12-" + ver + ".dist-info/METADATA", "Name: nvidia-nccl-cu12\n");
  }
  return s.path(site);
}

}  // namespace

TEST_CASE("version.py parses the way torch writes it, and refuses what is not one") {
  VersionPy v = parse_version_py("__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
  REQUIRE(v.ok);
  CHECK(v.version == "2.5.1+cu124");
  CHECK(v.cuda == "12.4");
  VersionPy cpu = parse_version_py("__version__ = \"2.4.0+cpu\"\ncuda = None\n");
  REQUIRE(cpu.ok);
  CHECK(cpu.cuda.empty());
  CHECK_FALSE(parse_version_py("").ok);
  CHECK(parse_version_py(std::string("\x7f" "ELF\0\0\0", 7)).error.find("NUL") != std::string::npos);
}

TEST_CASE("a wheel NCCL 2.21.5 beside the system 2.28.9 is what PyTorch gets (standin)") {
  Scratch s;
  std::string site = make_site(s, "torch-dyn", "nccl-2.21.5");
  ProbeOptions o = options_with({{"VIRTUAL_ENV", s.path("env")}});
  RankRecord r = probe_rank(o);
  REQUIRE(r.torch.status == TorchStatus::ok);
  CHECK(r.torch.version == "2.5.1+cu124");
  CHECK(r.torch.cuda == "12.4");
  CHECK(r.torch.nccl.linkage == "wheel");
  CHECK(r.torch.nccl.version == "2.21.5");
  CHECK(r.torch.nccl.path == site + "/nvidia/nccl/lib/libnccl.so.2");
  CHECK(r.nccl.status == NcclStatus::ok);
  CHECK(r.nccl.version == "2.21.5");
  CHECK(r.nccl.version_code == 22105);
  CHECK(r.nccl.origin == "torch-rpath");
  CHECK(r.torch.bundled.version == "2.21.5");
  if (!real_nccl().empty()) {
    CHECK(r.system_nccl.version == "2.28.9");
    CHECK(r.system_nccl.path == real_nccl_file());
  }
  // The wheel appears among the candidates, with its origin.
  bool listed = false;
  for (const auto& c : r.nccl_candidates)
    if (c.path == site + "/nvidia/nccl/lib/libnccl.so.2" && c.version == "2.21.5" &&
        c.origin == "python-env")
      listed = true;
  CHECK(listed);
  // The wheel lacks ncclCommRegister only if torch imports it: this torch does not.
  REQUIRE(r.abi.size() == 1);
  CHECK(r.abi[0].missing.empty());
}

TEST_CASE("a torch that imports ncclCommRegister beside a wheel NCCL without it: ABI mismatch (standin)") {
  Scratch s;
  std::string site = make_site(s, "torch-dyn-reg", "nccl-2.21.5");
  RankRecord r = probe_rank(options_with({{"VIRTUAL_ENV", s.path("env")}}));
  REQUIRE(r.abi.size() == 1);
  CHECK(r.abi[0].consumer == site + "/torch/lib/libtorch_cuda.so");
  CHECK(r.abi[0].library == site + "/nvidia/nccl/lib/libnccl.so.2");
  CHECK(r.abi[0].missing == std::vector<std::string>{"ncclCommRegister"});
}

TEST_CASE("LD_PRELOAD of the system NCCL wins inside PyTorch over its wheel (standin)", "[real-nccl]") {
  REQUIRE_FALSE(real_nccl().empty());  // run only where the loader cache has one (tests/run_catch.sh)
  Scratch s;
  make_site(s, "torch-dyn", "nccl-2.21.5");
  RankRecord r = probe_rank(
      options_with({{"VIRTUAL_ENV", s.path("env")}, {"LD_PRELOAD", real_nccl()}}));
  CHECK(r.torch.nccl.linkage == "system");
  CHECK(r.torch.nccl.version == "2.28.9");
  CHECK(r.nccl.origin == "LD_PRELOAD");
  CHECK(r.torch.bundled.version == "2.21.5");
}

TEST_CASE("NCCL linked statically into libtorch_cuda.so is read from its literal (standin)") {
  Scratch s;
  std::string site = make_site(s, "torch-static", "");
  RankRecord r = probe_rank(options_with({{"PYTHONPATH", s.path("env/lib/python3.11/site-packages")}}));
  REQUIRE(r.torch.status == TorchStatus::ok);
  CHECK(r.torch.nccl.linkage == "static");
  CHECK(r.torch.nccl.version == "2.18.1");
  CHECK(r.nccl.method == "static");
  CHECK(r.nccl.version == "2.18.1");
  CHECK(r.nccl.version_code == 21801);
  CHECK(r.nccl.cuda_build == "12.1");
  CHECK(r.nccl.path == site + "/torch/lib/libtorch_cuda.so");
}

TEST_CASE("--site-packages is searched first; broken version.py files are errors, not crashes (standin)") {
  Scratch s;
  make_site(s, "torch-dyn", "nccl-2.21.5");
  std::string other = "other/site-packages";
  s.write(other + "/torch/version.py", "");
  ProbeOptions o = options_with({{"VIRTUAL_ENV", s.path("env")}});
  o.site_packages = {s.path(other)};
  RankRecord r = probe_rank(o);
  CHECK(r.torch.status == TorchStatus::error);
  CHECK(r.torch.error.find("no __version__") != std::string::npos);

  s.write(other + "/torch/version.py", std::string(200 * 1024, '#'));
  r = probe_rank(o);
  CHECK(r.torch.status == TorchStatus::error);
  CHECK(r.torch.error.find("larger than") != std::string::npos);
}

TEST_CASE("no torch anywhere: missing, and the effective NCCL is the system one (standin)") {
  Scratch s;
  s.install_nccl("nccl-2.21.5", "llp");
  RankRecord r = probe_rank(options_with({{"LD_LIBRARY_PATH", s.path("llp")}}));
  CHECK(r.torch.status == TorchStatus::missing);
  REQUIRE(r.system_nccl.status == NcclStatus::ok);
  CHECK(r.system_nccl.path == s.path("llp/libnccl.so.2.21.5"));
  CHECK(r.nccl.path == s.path("llp/libnccl.so.2.21.5"));
  CHECK(r.nccl.version == "2.21.5");
  CHECK(r.nccl.origin == "LD_LIBRARY_PATH");
}

TEST_CASE("a CPU-only PyTorch (no libtorch_cuda.so) says so in the record (standin)") {
  Scratch s;
  s.write("env/lib/python3.11/site-packages/torch/version.py",
          "__version__ = '1.13.0a0'\ncuda: Optional[str] = None\n");
  RankRecord r = probe_rank(options_with({{"VIRTUAL_ENV", s.path("env")}}));
  REQUIRE(r.torch.status == TorchStatus::ok);
  CHECK(r.torch.build == "cpu");
  CHECK(r.torch.libtorch_cuda.empty());
  CHECK(r.torch.nccl.version.empty());

  Scratch c;
  make_site(c, "torch-dyn", "nccl-2.21.5");
  CHECK(probe_rank(options_with({{"VIRTUAL_ENV", c.path("env")}})).torch.build == "cuda");
}

TEST_CASE("a venv with include-system-site-packages also searches the base interpreter's") {
  Scratch s;
  s.write("base/bin/python3", "#!/bin/false\n");
  ::chmod(s.path("base/bin/python3").c_str(), 0755);
  s.write("base/lib/python3.11/site-packages/torch/version.py",
          "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\n");
  s.link(s.path("base/bin/python3"), "venv/bin/python3");
  s.write("venv/lib/python3.11/site-packages/README", "the venv's own packages\n");
  auto cfg = [&](const char* system) {
    s.write("venv/pyvenv.cfg", std::string("home = ") + s.path("base/bin") +
                                   "\ninclude-system-site-packages = " + system +
                                   "\nversion = 3.11.2\n");
  };
  cfg("true");
  for (const auto& env : std::vector<std::map<std::string, std::string>>{
           {{"PATH", s.path("venv/bin")}}, {{"VIRTUAL_ENV", s.path("venv")}}}) {
    RankRecord r = probe_rank(options_with(env));
    CHECK(r.torch.status == TorchStatus::ok);
    CHECK(r.torch.site_packages == s.path("base/lib/python3.11/site-packages"));
  }
  cfg("false");
  CHECK(probe_rank(options_with({{"PATH", s.path("venv/bin")}})).torch.status ==
        TorchStatus::missing);
}
