#include "compare/config_diff.h"

#include <catch2/catch.hpp>

#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

TEST_CASE("what_sets_apart: the same configuration gives nothing, identity fields are ignored") {
  RankRecord a = load_record("rank_ok.json");
  CHECK(what_sets_apart(at(a, 3, "node9"), a).empty());
}

TEST_CASE("what_sets_apart: an NCCL_* variable names its value on one side and 'unset' on the other") {
  RankRecord ref = load_record("rank_ok.json");
  RankRecord r = ref;
  r.nccl_env["NCCL_PROTO"] = "Simple";
  CHECK(what_sets_apart(r, ref) == std::vector<std::string>{"NCCL_PROTO=Simple"});
  CHECK(what_sets_apart(ref, r) == std::vector<std::string>{"NCCL_PROTO unset"});
  r.nccl_conf["NCCL_ALGO"] = "Ring";
  CHECK(what_sets_apart(r, ref).back() == "NCCL_ALGO=Ring (nccl.conf)");
}

TEST_CASE("what_sets_apart: a different NCCL names its version and how the loader found it") {
  RankRecord ref = load_record("rank_ok.json");
  RankRecord r = ref;
  r.nccl.version = "2.21.5";
  r.nccl.path = "/opt/nccl-2.21/lib/libnccl.so.2.21.5";
  r.nccl.origin = "LD_LIBRARY_PATH";
  REQUIRE_FALSE(what_sets_apart(r, ref).empty());
  CHECK(what_sets_apart(r, ref).front() == "NCCL 2.21.5+cuda13.0 via LD_LIBRARY_PATH=/opt/nccl-2.21/lib");
  // Same version from another file: the file and its origin are what differ.
  r.nccl.version = ref.nccl.version;
  r.nccl.path = "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9";
  r.nccl.origin = "LD_PRELOAD";
  CHECK(what_sets_apart(r, ref).front() ==
        "NCCL 2.28.9+cuda13.0 /usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9 via LD_PRELOAD");
}

TEST_CASE("what_sets_apart: PyTorch's NCCL from its wheel says so") {
  RankRecord ref = load_record("rank_ok.json");
  RankRecord r = ref;
  r.nccl.version = "2.21.5";
  r.nccl.path = "/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2";
  r.nccl.origin = "torch-rpath";
  r.torch.nccl.linkage = "wheel";
  auto phrases = what_sets_apart(r, ref);
  REQUIRE(phrases.size() == 2);
  CHECK(phrases[0] ==
        "NCCL 2.21.5+cuda13.0 /venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2 torch wheel RPATH");
  CHECK(phrases[1] == "torch's NCCL linkage wheel");
  CHECK(nccl_origin_phrase(r.nccl, TorchInfo{}) == "libtorch_cuda.so RPATH");
}

TEST_CASE("what_sets_apart: a difference without a phrase of its own is named by its key") {
  RankRecord ref = load_record("rank_ok.json");
  RankRecord r = ref;
  r.nccl_candidates.push_back({"/opt/other/libnccl.so.2", "2.19.3", "", "default-dir"});
  CHECK(what_sets_apart(r, ref) == std::vector<std::string>{"nccl_candidates differs"});
  r.probe_errors.push_back("torch: timed out");
  CHECK(what_sets_apart(r, ref) == std::vector<std::string>{"nccl_candidates, probe_errors differ"});
}

TEST_CASE("what_sets_apart: driver and plugins") {
  RankRecord ref = load_record("rank_ok.json");
  RankRecord r = ref;
  r.cuda_driver.library_version = "550.54.15";
  r.net_plugin.status = PluginStatus::ok;
  r.net_plugin.path = "/opt/hpcx/lib/libnccl-net.so";
  auto phrases = what_sets_apart(r, ref);
  REQUIRE(phrases.size() == 2);
  CHECK(phrases[0] == "driver 550.54.15 (kernel module 580.65.06)");
  CHECK(phrases[1].rfind("net plugin ok /opt/hpcx/lib/libnccl-net.so", 0) == 0);
}
