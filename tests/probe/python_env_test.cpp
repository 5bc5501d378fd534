#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "probe/python_env.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

std::vector<SitePackagesDir> sites_of(const Scratch& s, std::vector<std::string> rels) {
  std::vector<SitePackagesDir> out;
  for (const auto& r : rels) out.push_back({s.path(r), "test"});
  return out;
}

long long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

// An nvidia-nccl wheel's dist-info whose RECORD lists libnccl.so.2 at `size` bytes.
void dist_info(const Scratch& s, const std::string& site, const std::string& project_version,
               long long size) {
  s.write(site + "/" + project_version + ".dist-info/RECORD",
          "nvidia/nccl/lib/libnccl.so.2,sha256=x," + std::to_string(size) + "\n");
}

}  // namespace

TEST_CASE("import finds a regular package first and namespace portions only without one") {
  Scratch s;
  s.write("a/nvidia/cublas/lib/libcublas.so.12", "");  // a namespace portion, no nccl
  s.write("b/nvidia/__init__.py", "");                 // a regular package: ends the search
  s.write("b/nvidia/cudnn/__init__.py", "");
  s.write("c/nvidia/__init__.py", "");
  s.write("c/nvidia/nccl/__init__.py", "");
  FsView fs;
  // nvidia is b's package (a's portion is dropped), which has no nccl: c's is not importable.
  CHECK(find_python_package(fs, sites_of(s, {"a", "b", "c"}), "nvidia.nccl").empty());
  CHECK(find_python_package(fs, sites_of(s, {"a", "c"}), "nvidia.nccl") == s.path("c/nvidia/nccl"));
  // Namespace portions only: the first one holding the subpackage.
  s.write("d/jax_plugins/xla_cuda12/__init__.py", "");
  CHECK(find_python_package(fs, sites_of(s, {"a", "d"}), "jax_plugins.xla_cuda12") ==
        s.path("d/jax_plugins/xla_cuda12"));
  CHECK(find_python_package(fs, sites_of(s, {"a"}), "jax").empty());
}

TEST_CASE("string assignments in version files, and what is not one") {
  Scratch s;
  s.write("jax/version.py", "import os\n_version = \"0.6.2\"\n_release_version: str = '0.6.2'\n");
  s.write("cupy/_version.py", "__version__ = '13.6.0'\n");
  s.write("bin/_version.py", std::string("\x7f" "ELF\0\0", 6));
  FsView fs;
  std::string v, error;
  REQUIRE(read_python_string(fs, s.path("jax/version.py"), "_version", &v, &error));
  CHECK(v == "0.6.2");
  REQUIRE(read_python_string(fs, s.path("jax/version.py"), "_release_version", &v, &error));
  CHECK(v == "0.6.2");
  REQUIRE(read_python_string(fs, s.path("cupy/_version.py"), "__version__", &v, &error));
  CHECK(v == "13.6.0");
  CHECK_FALSE(read_python_string(fs, s.path("cupy/_version.py"), "_version", &v, &error));
  CHECK(error.find("no _version") != std::string::npos);
  CHECK_FALSE(read_python_string(fs, s.path("bin/_version.py"), "__version__", &v, &error));
  CHECK(error.find("NUL") != std::string::npos);
  CHECK_FALSE(read_python_string(fs, s.path("none.py"), "x", &v, &error));
}

TEST_CASE("two NCCL wheels in one site-packages (standin NCCL): the file is one wheel's") {
  Scratch s;
  std::string lib = s.copy(standin("nccl-2.21.5/libnccl.so.2.21.5"),
                           "site/nvidia/nccl/lib/libnccl.so.2");
  long long size = file_size(lib);
  dist_info(s, "site", "nvidia_nccl_cu12-2.20.5", size + 4096);  // overwritten
  dist_info(s, "site", "nvidia_nccl_cu13-2.21.5", size);           // installed last
  dist_info(s, "other", "nvidia_nccl_cu12-2.21.5", 123);           // its file is gone
  s.write("third/nvidia_nccl_cu12-2.19.3.dist-info/METADATA", "");  // no RECORD
  FsView fs;
  auto wheels = find_nccl_wheels(fs, sites_of(s, {"site", "other", "third"}));
  REQUIRE(wheels.size() == 4);
  CHECK(wheels[0].project == "nvidia-nccl-cu12");
  CHECK(wheels[0].owns_library == "no");
  CHECK(wheels[1].project == "nvidia-nccl-cu13");
  CHECK(wheels[1].owns_library == "yes");
  CHECK(wheels[2].owns_library == "no");
  CHECK(wheels[2].site_packages == s.path("other"));
  CHECK(wheels[3].owns_library == "unknown");
  // Right size, wrong version: the literal says 2.21.5, the wheel says 2.20.5.
  dist_info(s, "site", "nvidia_nccl_cu12-2.20.5", size);
  CHECK(find_nccl_wheels(fs, sites_of(s, {"site"}))[0].owns_library == "no");

  // The pin is met only by a wheel whose file is on disk.
  CHECK(requirement_met("nvidia-nccl-cu13==2.21.5", wheels) == "yes");
  CHECK(requirement_met("nvidia-nccl-cu13==2.20.5", wheels) == "no");
  CHECK(requirement_met("nvidia-nccl-cu12==2.20.5", {wheels[0]}) == "no");
  CHECK(requirement_met("nvidia-nccl-cu12==2.21.5", wheels) == "no");   // its file is gone
  CHECK(requirement_met("nvidia-nccl-cu12==2.19.3", wheels) == "yes");  // RECORD silent
  CHECK(requirement_met("nvidia-nccl-cu11==2.21.5", wheels) == "no");
  CHECK(requirement_met("nvidia-nccl-cu13~=2.21", wheels) == "unknown");
}
