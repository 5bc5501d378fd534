#include <catch2/catch.hpp>

#include "probe/wheel_metadata.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

TEST_CASE("project names in PEP 503 form") {
  CHECK(normalize_project("nvidia_nccl_cu12") == "nvidia-nccl-cu12");
  CHECK(normalize_project("NVIDIA-NCCL.cu13") == "nvidia-nccl-cu13");
  CHECK(normalize_project("MarkupSafe") == "markupsafe");
  CHECK(normalize_project("jax__cuda12--plugin") == "jax-cuda12-plugin");
}

TEST_CASE("Requires-Dist in the forms torch 2.3.1 and 2.7.1 write it") {
  Requirement old_form, new_form, extra;
  REQUIRE(parse_requirement(
      " nvidia-nccl-cu12 (==2.20.5) ; platform_system == \"Linux\" and platform_machine == "
      "\"x86_64\"",
      &old_form));
  CHECK(old_form.project == "nvidia-nccl-cu12");
  CHECK(old_form.spec == "==2.20.5");
  CHECK(old_form.marker == "platform_system == \"Linux\" and platform_machine == \"x86_64\"");
  REQUIRE(parse_requirement("nvidia-nccl-cu12==2.26.2; platform_system == \"Linux\"", &new_form));
  CHECK(new_form.spec == "==2.26.2");
  REQUIRE(parse_requirement("jax-cuda12-plugin[with-cuda]<=0.6.2,>=0.6.2; extra == \"cuda\"",
                            &extra));
  CHECK(extra.project == "jax-cuda12-plugin");
  CHECK(extra.spec == "<=0.6.2,>=0.6.2");
  Requirement url;
  REQUIRE(parse_requirement("foo @ https://example.com/foo.whl", &url));
  CHECK(url.spec.empty());
  CHECK_FALSE(parse_requirement("  ; extra == 'x'", &url));
}

TEST_CASE("markers: platform and extra clauses are evaluated, others taken to hold") {
  const std::string linux_x86 = "platform_system == \"Linux\" and platform_machine == \"x86_64\"";
  CHECK(marker_applies(linux_x86, "x86_64"));
  CHECK_FALSE(marker_applies(linux_x86, "aarch64"));
  CHECK_FALSE(marker_applies("platform_system == \"Windows\"", "x86_64"));
  CHECK_FALSE(marker_applies("extra == \"tests\"", "x86_64"));
  CHECK(marker_applies("python_version >= \"3.12\"", "x86_64"));
  CHECK(marker_applies("sys_platform == 'linux' or sys_platform == 'win32'", "x86_64"));
  CHECK(marker_applies("", "x86_64"));
}

TEST_CASE("version specifiers: ==, ranges, wildcards; unknown operators say so") {
  CHECK(spec_matches("2.20.5", "==2.20.5") == SpecMatch::yes);
  CHECK(spec_matches("2.21.5", "==2.20.5") == SpecMatch::no);
  CHECK(spec_matches("2.26.2.post1", "==2.26.2") == SpecMatch::yes);
  CHECK(spec_matches("2.18.1", ">=2.16.5,<3") == SpecMatch::yes);
  CHECK(spec_matches("3.0", ">=2.16.5,<3") == SpecMatch::no);
  CHECK(spec_matches("2.20.5", "==2.*") == SpecMatch::yes);
  CHECK(spec_matches("12.1", "==2.*") == SpecMatch::no);
  CHECK(spec_matches("2.20.5", "~=2.20") == SpecMatch::unknown);
  CHECK(spec_matches("dev", "==2.20.5") == SpecMatch::unknown);
  CHECK(spec_matches("2.20.5", "") == SpecMatch::yes);
}

TEST_CASE("dist-info directories, METADATA headers and RECORD sizes") {
  Scratch s;
  s.write("site/nvidia_nccl_cu12-2.20.5.dist-info/METADATA",
          "Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: 2.20.5\n");
  s.write("site/nvidia_nccl_cu12-2.20.5.dist-info/RECORD",
          "nvidia/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
          "nvidia/nccl/lib/libnccl.so.2,sha256=abc,176249402\n"
          "nvidia_nccl_cu12-2.20.5.dist-info/RECORD,,\n");
  s.write("site/nvidia_nccl_cu13-2.27.7.dist-info/METADATA", "Name: nvidia-nccl-cu13\n");
  s.write("site/torch-2.3.1.dist-info/METADATA",
          "Name: torch\nVersion: 2.3.1\nRequires-Dist: filelock\n"
          "Requires-Dist: nvidia-nccl-cu12 (==2.20.5) ; platform_system == \"Linux\"\n"
          "\nRequires-Dist: this-is-the-description (==1)\n");
  s.write("site/not-a-dist.dist-info/METADATA", "");
  FsView fs;
  auto nccl = list_dist_infos(fs, s.path("site"), "nvidia-nccl-cu");
  REQUIRE(nccl.size() == 2);
  CHECK(nccl[0].project == "nvidia-nccl-cu12");
  CHECK(nccl[0].version == "2.20.5");
  CHECK(nccl[1].project == "nvidia-nccl-cu13");
  CHECK(list_dist_infos(fs, s.path("site"), "").size() == 4);
  std::vector<Requirement> reqs;
  std::string error;
  REQUIRE(read_requirements(fs, s.path("site/torch-2.3.1.dist-info"), &reqs, &error));
  REQUIRE(reqs.size() == 2);  // the body after the blank line is not read
  CHECK(reqs[1].spec == "==2.20.5");
  CHECK_FALSE(read_requirements(fs, s.path("site/missing.dist-info"), &reqs, &error));
  CHECK(error.find("METADATA") != std::string::npos);
  CHECK(record_size(fs, nccl[0].dir, "nvidia/nccl/lib/libnccl.so.2") == 176249402);
  CHECK(record_size(fs, nccl[0].dir, "nvidia/__init__.py") == 0);
  CHECK(record_size(fs, nccl[0].dir, "nvidia_nccl_cu12-2.20.5.dist-info/RECORD") == -1);
  CHECK(record_size(fs, nccl[1].dir, "nvidia/nccl/lib/libnccl.so.2") == -1);
}
