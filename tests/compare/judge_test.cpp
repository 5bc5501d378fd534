#include "compare/judge.h"

#include <catch2/catch.hpp>

#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

std::vector<Finding> judge_records(const std::vector<RankRecord>& records,
                                   const JudgeOptions& options = {},
                                   const std::vector<MissingRank>& missing = {}) {
  return judge(group_records(records), missing, options);
}

// Four ranks, two per host (node1, node2), with `change` applied to rank 3.
template <typename Change>
std::vector<RankRecord> three_and_one(Change change) {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  change(records[3]);
  return records;
}

Finding only(const std::vector<Finding>& findings, const std::string& code) {
  auto matching = with_code(findings, code);
  INFO("codes: " << Catch::Detail::stringify(codes(findings)));
  REQUIRE(matching.size() == 1);
  return matching[0];
}

}  // namespace

TEST_CASE("identical healthy ranks give no findings") {
  CHECK(judge_records(ranks_of(load_record("rank_ok.json"), 0, 4, 2)).empty());
}

TEST_CASE("nccl-version-mismatch blames only the minority") {
  auto findings = judge_records(three_and_one([](RankRecord& r) { r.nccl.version = "2.27.3"; }));
  REQUIRE(findings.size() == 1);
  const Finding& f = findings[0];
  CHECK(f.code == "nccl-version-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.hosts == std::vector<std::string>{"node2"});
  CHECK(f.expected == "2.28.9");
  CHECK(f.found == "2.27.3");
  CHECK(f.message == "rank 3 on node2 loads NCCL 2.27.3, 3 other ranks load 2.28.9");
  CHECK_FALSE(f.fix.empty());
}

TEST_CASE("nccl-version-mismatch with a 2 vs 2 tie names both groups") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[2].nccl.version = records[3].nccl.version = "2.27.3";
  auto findings = judge_records(records);
  Finding f = only(findings, "nccl-version-mismatch");
  CHECK(f.ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(f.hosts == std::vector<std::string>{"node1", "node2"});
  CHECK(f.expected.empty());
  CHECK(f.found == "2.28.9 (ranks 0-1); 2.27.3 (ranks 2-3)");
  CHECK(f.message ==
        "no majority for the NCCL version (2 values, tied): ranks 0-1 on node1 load NCCL "
        "2.28.9; ranks 2-3 on node2 load NCCL 2.27.3");
}

TEST_CASE("three values with a clear plurality blame the two smaller ones") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[2].nccl.version = "2.27.3";
  records[3].nccl.version = "2.26.2";
  auto findings = with_code(judge_records(records), "nccl-version-mismatch");
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].ranks == std::vector<int>{2});
  CHECK(findings[0].found == "2.27.3");
  CHECK(findings[1].ranks == std::vector<int>{3});
  CHECK(findings[1].found == "2.26.2");
  CHECK(findings[1].expected == "2.28.9");
}

TEST_CASE("nccl-build-mismatch: same version, other CUDA build") {
  auto findings = judge_records(three_and_one([](RankRecord& r) { r.nccl.cuda_build = "12.9"; }));
  Finding f = only(findings, "nccl-build-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "13.0");
  CHECK(f.found == "12.9");
  CHECK(with_code(findings, "nccl-version-mismatch").empty());
}

TEST_CASE("nccl-missing, and no version finding for the rank without NCCL") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.nccl = NcclInfo{};
    r.nccl.status = NcclStatus::missing;
  }));
  Finding f = only(findings, "nccl-missing");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.hosts == std::vector<std::string>{"node2"});
  CHECK(f.found == "missing");
  CHECK(with_code(findings, "nccl-version-mismatch").empty());
}

TEST_CASE("nccl-unloadable carries the record's error") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.nccl.status = NcclStatus::unloadable;
    r.nccl.path = "/opt/bad/libnccl.so.2";
    r.nccl.error = "not an ELF file";
  }));
  Finding f = only(findings, "nccl-unloadable");
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.found == "not an ELF file");
  CHECK(f.message ==
        "rank 3 on node2 has NCCL at /opt/bad/libnccl.so.2 that cannot be used: not an ELF file");
}

TEST_CASE("nccl-abi-mismatch names the symbols, the consumer and the library") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.abi[0].missing = {"ncclCommRegister", "ncclCommDeregister"};
  }));
  Finding f = only(findings, "nccl-abi-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.message.find("undefined symbol: ncclCommRegister") != std::string::npos);
  CHECK(f.message.find("ncclCommDeregister") != std::string::npos);
  CHECK(f.message.find("libtorch_cuda.so") != std::string::npos);
  CHECK(f.found == "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9 (NCCL 2.28.9)");
}

TEST_CASE("torch-nccl-mismatch: a warning when PyTorch's wheel NCCL differs from the system's") {
  auto findings = judge_records({load_record("rank_torch_wheel_2215.json")});
  Finding f = only(findings, "torch-nccl-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{0});
  CHECK(f.expected == "2.21.5");
  CHECK(f.found == "2.28.9");
  CHECK(f.message.find("/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9") != std::string::npos);
}

TEST_CASE("torch-nccl-mismatch: an error when the system NCCL wins over PyTorch's own") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.torch.bundled = {"/venv/nvidia/nccl/lib/libnccl.so.2", "2.21.5", "12.4", "wheel"};
  }));
  Finding f = only(findings, "torch-nccl-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "2.21.5");
  CHECK(f.found == "2.28.9");
}

TEST_CASE("torch-nccl-mismatch: none when PyTorch and the system agree") {
  CHECK(with_code(judge_records({load_record("rank_ok.json")}), "torch-nccl-mismatch").empty());
}

TEST_CASE("torch-version-mismatch; a rank without PyTorch is not a mismatch") {
  auto findings =
      judge_records(three_and_one([](RankRecord& r) { r.torch.version = "2.4.0+cu121"; }));
  Finding f = only(findings, "torch-version-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "2.5.1+cu124");
  CHECK(f.found == "2.4.0+cu121");
  CHECK(f.message == "rank 3 on node2 runs PyTorch 2.4.0+cu121, 3 other ranks run 2.5.1+cu124");

  auto without = judge_records(three_and_one([](RankRecord& r) { r.torch = TorchInfo{}; }));
  CHECK(with_code(without, "torch-version-mismatch").empty());
}

TEST_CASE("cuda-driver-missing: warning, error with require_gpu, nothing for static images") {
  auto missing = [](RankRecord& r) { r.cuda_driver = CudaDriverInfo{}; };
  Finding warn = only(judge_records(three_and_one(missing)), "cuda-driver-missing");
  CHECK(warn.severity == Severity::warning);
  CHECK(warn.ranks == std::vector<int>{3});

  JudgeOptions gpu;
  gpu.require_gpu = true;
  CHECK(only(judge_records(three_and_one(missing), gpu), "cuda-driver-missing").severity ==
        Severity::error);

  auto image = judge_records(three_and_one([&](RankRecord& r) {
    missing(r);
    r.mode = "static";
  }));
  CHECK(with_code(image, "cuda-driver-missing").empty());
}

TEST_CASE("cuda-driver-stub") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.cuda_driver = CudaDriverInfo{};
    r.cuda_driver.status = DriverStatus::stub;
    r.cuda_driver.library = "/usr/local/cuda/lib64/stubs/libcuda.so";
  }));
  Finding f = only(findings, "cuda-driver-stub");
  CHECK(f.severity == Severity::error);
  CHECK(f.found == "/usr/local/cuda/lib64/stubs/libcuda.so");
  CHECK(with_code(findings, "cuda-driver-missing").empty());
}

TEST_CASE("cuda-driver-kernel-mismatch") {
  auto findings = judge_records(
      three_and_one([](RankRecord& r) { r.cuda_driver.kernel_module_version = "570.86.10"; }));
  Finding f = only(findings, "cuda-driver-kernel-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "570.86.10");
  CHECK(f.found == "580.65.06");
}

TEST_CASE("cuda-driver-too-old for NCCL and for PyTorch") {
  auto findings = with_code(judge_records(three_and_one([](RankRecord& r) {
                              r.cuda_driver.cuda_version = "12.2";
                            })),
                            "cuda-driver-too-old");
  REQUIRE(findings.size() == 2);
  for (const auto& f : findings) {
    CHECK(f.severity == Severity::error);
    CHECK(f.ranks == std::vector<int>{3});
    CHECK(f.found == "CUDA 12.2");
  }
  CHECK(findings[0].expected != findings[1].expected);  // 13.0 for NCCL, 12.4 for PyTorch
}

TEST_CASE("cuda-driver-too-old: none when the driver is new enough") {
  auto findings = judge_records(
      three_and_one([](RankRecord& r) { r.cuda_driver.cuda_version = "13.1"; }));
  CHECK(with_code(findings, "cuda-driver-too-old").empty());
}

TEST_CASE("probe-untrusted-library") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.untrusted_libraries = {"/tmp/evil/libnccl.so.2"};
  }));
  Finding f = only(findings, "probe-untrusted-library");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.found == "/tmp/evil/libnccl.so.2");
}

TEST_CASE("cuda-driver-version-mismatch votes by host") {
  // 4 hosts with 2 ranks each; node4 runs another driver.
  auto records = ranks_of(load_record("rank_ok.json"), 0, 8, 2);
  for (int r : {6, 7}) {
    records[r].cuda_driver.library_version = "570.86.10";
    records[r].cuda_driver.kernel_module_version = "570.86.10";
  }
  Finding f = only(judge_records(records), "cuda-driver-version-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{6, 7});
  CHECK(f.hosts == std::vector<std::string>{"node4"});
  CHECK(f.message == "ranks 6-7 on node4 run driver 570.86.10, 3 other hosts run 580.65.06");
}

TEST_CASE("nccl-net-plugin-mismatch: a plugin on one rank only") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.net_plugin.status = PluginStatus::ok;
    r.net_plugin.path = "/opt/hpcx/lib/libnccl-net.so";
    r.net_plugin.api_versions = {"ncclNetPlugin_v8"};
  }));
  Finding f = only(findings, "nccl-net-plugin-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "missing");
  CHECK(f.found == "ok /opt/hpcx/lib/libnccl-net.so (ncclNetPlugin_v8)");
}

TEST_CASE("nccl-net-plugin-mismatch: same path, other API version") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  for (auto& r : records) {
    r.net_plugin.status = PluginStatus::ok;
    r.net_plugin.path = "/opt/hpcx/lib/libnccl-net.so";
    r.net_plugin.api_versions = {"ncclNetPlugin_v8"};
  }
  records[0].net_plugin.api_versions = {"ncclNetPlugin_v7"};
  Finding f = only(judge_records(records), "nccl-net-plugin-mismatch");
  CHECK(f.ranks == std::vector<int>{0});
  CHECK(f.found == "ok /opt/hpcx/lib/libnccl-net.so (ncclNetPlugin_v7)");
}

TEST_CASE("nccl-env-mismatch: protocol variables are errors") {
  auto findings =
      judge_records(three_and_one([](RankRecord& r) { r.nccl_env["NCCL_PROTO"] = "Simple"; }));
  Finding f = only(findings, "nccl-env-mismatch");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "(unset)");
  CHECK(f.found == "Simple");
  CHECK(f.message == "rank 3 on node2 has NCCL_PROTO=Simple, 3 other ranks have NCCL_PROTO unset");
}

TEST_CASE("nccl-env-mismatch: other variables are warnings") {
  auto findings =
      judge_records(three_and_one([](RankRecord& r) { r.nccl_env["NCCL_DEBUG"] = "INFO"; }));
  Finding f = only(findings, "nccl-env-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.found == "INFO");
}

TEST_CASE("nccl-env-mismatch: nccl.conf counts, and the environment overrides it") {
  auto conf_only = judge_records(
      three_and_one([](RankRecord& r) { r.nccl_conf["NCCL_ALGO"] = "Tree"; }));
  Finding f = only(conf_only, "nccl-env-mismatch");
  CHECK(f.found == "Tree");
  CHECK(f.severity == Severity::error);

  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  for (auto& r : records) r.nccl_env["NCCL_ALGO"] = "Ring";
  records[3].nccl_conf["NCCL_ALGO"] = "Tree";  // overridden by the environment
  CHECK(with_code(judge_records(records), "nccl-env-mismatch").empty());
}

TEST_CASE("rank-timeout names the missing ranks and their known hosts") {
  std::vector<MissingRank> missing = {{5, "node3", "no report within 30 s"},
                                      {6, "", "no report within 30 s"}};
  auto findings = judge_records(ranks_of(load_record("rank_ok.json"), 0, 4, 2), {}, missing);
  Finding f = only(findings, "rank-timeout");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{5, 6});
  CHECK(f.hosts == std::vector<std::string>{"node3"});
  CHECK(f.message == "ranks 5-6 on node3 did not report before the deadline: no report within 30 s");
}

TEST_CASE("no rank-timeout without missing ranks") {
  CHECK(with_code(judge_records(ranks_of(load_record("rank_ok.json"), 0, 2, 2)), "rank-timeout")
            .empty());
}

TEST_CASE("a baseline judges every rank; the baseline value is expected") {
  Baseline b;
  b.nccl_version = "2.27.3";
  b.source = "/etc/denpex/baseline.json";
  JudgeOptions options;
  options.baseline = &b;
  auto findings = judge_records(ranks_of(load_record("rank_ok.json"), 0, 4, 2), options);
  Finding f = only(findings, "nccl-version-mismatch");
  CHECK(f.ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(f.expected == "2.27.3");
  CHECK(f.found == "2.28.9");
  CHECK(f.message ==
        "ranks 0-3 on node[1-2] load NCCL 2.28.9, baseline /etc/denpex/baseline.json pins 2.27.3");
}

TEST_CASE("a baseline equal to the majority does not repeat the cross-rank finding") {
  Baseline b;
  b.nccl_version = "2.28.9";
  JudgeOptions options;
  options.baseline = &b;
  auto findings = judge_records(three_and_one([](RankRecord& r) { r.nccl.version = "2.27.3"; }),
                                options);
  Finding f = only(findings, "nccl-version-mismatch");
  CHECK(f.ranks == std::vector<int>{3});
}

TEST_CASE("a baseline that differs from the majority blames the majority too") {
  Baseline b;
  b.nccl_version = "2.27.3";
  JudgeOptions options;
  options.baseline = &b;
  auto findings = with_code(
      judge_records(three_and_one([](RankRecord& r) { r.nccl.version = "2.27.3"; }), options),
      "nccl-version-mismatch");
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].ranks == std::vector<int>{0, 1, 2});
  CHECK(findings[0].expected == "2.27.3");
  CHECK(findings[1].ranks == std::vector<int>{3});
  CHECK(findings[1].expected == "2.28.9");  // against the majority
}

TEST_CASE("a baseline pins NCCL settings, torch, driver and net plugin") {
  Baseline b;
  b.pin_nccl_env = true;
  b.nccl_env = {{"NCCL_PROTO", "Simple"}};
  b.torch_version = "2.6.0+cu126";
  b.driver_library_version = "570.86.10";
  b.driver_cuda_version = "12.8";
  b.pin_net_plugin = true;
  b.net_plugin_status = "ok";
  b.net_plugin_api_versions = {"ncclNetPlugin_v8"};
  JudgeOptions options;
  options.baseline = &b;
  auto findings = judge_records(ranks_of(load_record("rank_ok.json"), 0, 2, 2), options);

  Finding env = only(findings, "nccl-env-mismatch");
  CHECK(env.severity == Severity::error);
  CHECK(env.expected == "Simple");
  CHECK(env.found == "(unset)");
  CHECK(env.ranks == std::vector<int>{0, 1});

  Finding torch = only(findings, "torch-version-mismatch");
  CHECK(torch.expected == "2.6.0+cu126");

  auto driver = with_code(findings, "cuda-driver-version-mismatch");
  REQUIRE(driver.size() == 2);  // library version and CUDA version

  Finding plugin = only(findings, "nccl-net-plugin-mismatch");
  CHECK(plugin.expected == "ok (ncclNetPlugin_v8)");
  CHECK(plugin.found == "missing");
}

TEST_CASE("findings are sorted: errors first") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.nccl_env["NCCL_DEBUG"] = "INFO";
    r.nccl.version = "2.27.3";
  }));
  REQUIRE(findings.size() == 2);
  CHECK(findings[0].severity == Severity::error);
  CHECK(findings[1].severity == Severity::warning);
}
