#include "compare/baseline.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include "compare/bounded_json.h"
#include "compare/judge.h"
#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

// A fresh temporary directory, removed (with the files the test names) at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/denpex-baseline-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const char* f : {"/b.json", "/big.json", "/b.json.tmp"}) std::remove((path + f).c_str());
    rmdir(path.c_str());
  }
};

}  // namespace

TEST_CASE("a valid baseline loads with every field") {
  BaselineLoad load = load_baseline(fixture_path("baseline_ok.json"));
  REQUIRE(load.status == BaselineStatus::ok);
  CHECK(load.error.empty());
  const Baseline& b = load.baseline;
  CHECK(b.nccl_version == "2.28.9");
  CHECK(b.nccl_cuda_build == "13.0");
  CHECK(b.torch_version == "2.5.1+cu124");
  CHECK(b.driver_library_version == "580.65.06");
  CHECK(b.driver_cuda_version == "13.0");
  CHECK(b.pin_net_plugin);
  CHECK(b.net_plugin_status == "missing");
  CHECK(b.pin_nccl_env);
  CHECK(b.nccl_env == std::map<std::string, std::string>{{"NCCL_PROTO", "Simple"}});
  CHECK(b.source == fixture_path("baseline_ok.json"));
}

TEST_CASE("absent sections are not pinned; unknown keys are ignored") {
  BaselineLoad load = load_baseline(fixture_path("baseline_pin_version_only.json"));
  REQUIRE(load.status == BaselineStatus::ok);
  CHECK(load.baseline.nccl_version == "2.28.9");
  CHECK(load.baseline.torch_version.empty());
  CHECK_FALSE(load.baseline.pin_net_plugin);
  CHECK_FALSE(load.baseline.pin_nccl_env);
}

TEST_CASE("a missing baseline file") {
  std::string path = fixture_path("no_such_baseline.json");
  BaselineLoad load = load_baseline(path);
  CHECK(load.status == BaselineStatus::missing_file);
  CHECK(load.error == "baseline " + path + ": no such file");
}

TEST_CASE("a directory is not a baseline") {
  BaselineLoad load = load_baseline(DENPEX_COMPARE_FIXTURES);
  CHECK(load.status == BaselineStatus::unreadable);
  CHECK(load.error.find(DENPEX_COMPARE_FIXTURES) != std::string::npos);
}

TEST_CASE("malformed baselines: truncated JSON, wrong types") {
  BaselineLoad truncated = load_baseline(fixture_path("baseline_truncated.json"));
  CHECK(truncated.status == BaselineStatus::malformed);
  CHECK(truncated.error ==
        "baseline " + fixture_path("baseline_truncated.json") + ": not valid JSON");

  BaselineLoad bad_type = load_baseline(fixture_path("baseline_bad_type.json"));
  CHECK(bad_type.status == BaselineStatus::malformed);
  CHECK(bad_type.error.find(fixture_path("baseline_bad_type.json")) != std::string::npos);

  CHECK(parse_baseline("[1,2]", "x").status == BaselineStatus::malformed);
  CHECK(parse_baseline("", "x").status == BaselineStatus::malformed);
}

TEST_CASE("wrong schema: another version, or none") {
  BaselineLoad v2 = load_baseline(fixture_path("baseline_v2.json"));
  CHECK(v2.status == BaselineStatus::wrong_schema);
  CHECK(v2.error == "baseline " + fixture_path("baseline_v2.json") +
                        ": schema \"denpex.baseline.v2\" is not supported (this denpex-probe "
                        "reads \"denpex.baseline.v1\")");

  BaselineLoad none = load_baseline(fixture_path("baseline_no_schema.json"));
  CHECK(none.status == BaselineStatus::wrong_schema);
  CHECK(none.error.find("no \"schema\" key") != std::string::npos);
}

TEST_CASE("a baseline over the size limit is refused") {
  TempDir dir;
  std::string path = dir.path + "/big.json";
  {
    std::ofstream out(path);
    out << "{\"schema\": \"denpex.baseline.v1\", \"pad\": \"";
    out << std::string(static_cast<std::size_t>(kBaselineMaxBytes), 'x') << "\"}";
  }
  BaselineLoad load = load_baseline(path);
  CHECK(load.status == BaselineStatus::too_large);
  CHECK(load.error.find(path) != std::string::npos);
}

TEST_CASE("a baseline written from a group loads back equal and passes that group") {
  RankRecord base = load_record("rank_ok.json");
  base.nccl_env["NCCL_PROTO"] = "Simple";
  base.nccl_conf["NCCL_SOCKET_IFNAME"] = "=eth0";
  auto groups = group_records(ranks_of(base, 0, 4, 2));
  Baseline written = baseline_from_group(groups[0]);
  CHECK(written.nccl_version == "2.28.9");
  CHECK(written.nccl_env.size() == 2);

  TempDir dir;
  std::string path = dir.path + "/b.json";
  std::string error;
  REQUIRE(write_baseline(path, written, &error));
  BaselineLoad load = load_baseline(path);
  REQUIRE(load.status == BaselineStatus::ok);
  const Baseline& b = load.baseline;
  CHECK(b.nccl_version == written.nccl_version);
  CHECK(b.nccl_cuda_build == written.nccl_cuda_build);
  CHECK(b.torch_version == written.torch_version);
  CHECK(b.driver_library_version == written.driver_library_version);
  CHECK(b.driver_cuda_version == written.driver_cuda_version);
  CHECK(b.net_plugin_status == written.net_plugin_status);
  CHECK(b.net_plugin_api_versions == written.net_plugin_api_versions);
  CHECK(b.nccl_env == written.nccl_env);

  JudgeOptions options;
  options.baseline = &b;
  CHECK(judge(groups, {}, options).empty());
}

TEST_CASE("writing a baseline where it cannot go fails with the path in the error") {
  std::string error;
  CHECK_FALSE(write_baseline("/nonexistent-dir/b.json", Baseline{}, &error));
  CHECK(error.find("/nonexistent-dir/b.json") != std::string::npos);
}

TEST_CASE("a baseline nested up to the shared cap loads; one level more is malformed") {
  // An unknown key is ignored, so only the cap decides (compare/bounded_json.h).
  auto with_extra = [](int levels) {  // the document nests `levels` levels in all
    return std::string(R"({"schema": "denpex.baseline.v1", "extra": )") +
           std::string(static_cast<size_t>(levels - 1), '[') +
           std::string(static_cast<size_t>(levels - 1), ']') + "}";
  };
  CHECK(parse_baseline(with_extra(kMaxJsonDepth), "at-cap").status == BaselineStatus::ok);
  BaselineLoad deep = parse_baseline(with_extra(kMaxJsonDepth + 1), "past-cap");
  CHECK(deep.status == BaselineStatus::malformed);
  CHECK(deep.error == "baseline past-cap: nested more than 64 levels deep: not a baseline");
}
