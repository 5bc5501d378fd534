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
  CHECK(f.code == FindingCode::nccl_version_mismatch);
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

TEST_CASE("cuda-driver-too-old for a newer major family; minor compat within the family") {
  // NCCL +cuda13.0 and PyTorch cu124 on a 535 driver (CUDA 12.2).
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.cuda_driver.cuda_version = "12.2";
    r.cuda_driver.library_version = r.cuda_driver.kernel_module_version = "535.104.05";
  }));
  Finding old = only(findings, "cuda-driver-too-old");
  CHECK(old.severity == Severity::error);
  CHECK(old.ranks == std::vector<int>{3});
  CHECK(old.found == "CUDA 12.2");
  CHECK(old.expected == "a driver for CUDA 13.0 or newer");
  CHECK(old.message.find("NCCL 2.28.9") != std::string::npos);
  CHECK(old.message.find("580 or newer") != std::string::npos);
  Finding minor = only(findings, "cuda-driver-minor-compat");
  CHECK(minor.severity == Severity::warning);
  CHECK(minor.ranks == std::vector<int>{3});
  CHECK(minor.message.find("PyTorch 2.5.1+cu124") != std::string::npos);
  CHECK(minor.message.find("runs through minor version compatibility") != std::string::npos);
}

TEST_CASE("NCCL +cuda12.9 on driver 550.54.15 runs through minor version compatibility") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 2, 1);
  for (auto& r : records) {
    r.nccl.cuda_build = "12.9";
    r.torch = TorchInfo{};
    r.cuda_driver.cuda_version = "12.4";
    r.cuda_driver.library_version = r.cuda_driver.kernel_module_version = "550.54.15";
  }
  auto findings = judge_records(records);
  CHECK(with_code(findings, "cuda-driver-too-old").empty());
  Finding f = only(findings, "cuda-driver-minor-compat");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{0, 1});
  CHECK(f.message ==
        "ranks 0-1 on node[1-2] have NCCL 2.28.9 built for CUDA 12.9 on driver 550.54.15 (CUDA "
        "12.4): runs through minor version compatibility (CUDA 12.x on a driver 525.60.13 or "
        "newer), without JIT compilation of PTX newer than CUDA 12.4");
}

TEST_CASE("cuda-driver-too-old below the family's minimum driver") {
  // CUDA 11.0's own driver (450.36.06) is below 450.80.02, the 11.x minor-compat minimum.
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.nccl.cuda_build = "11.4";
    r.torch = TorchInfo{};
    r.cuda_driver.cuda_version = "11.0";
    r.cuda_driver.library_version = r.cuda_driver.kernel_module_version = "450.36.06";
  }));
  Finding f = only(findings, "cuda-driver-too-old");
  CHECK(f.message.find("below 450.80.02") != std::string::npos);
  CHECK(with_code(findings, "cuda-driver-minor-compat").empty());
}

TEST_CASE("cuda-driver-too-old from a driver read statically (CUDA version from the table)") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.cuda_driver.status = DriverStatus::ok;
    r.cuda_driver.cuda_version = "11.4";
    r.cuda_driver.cuda_version_from = "driver-table";
    r.cuda_driver.driver_api_version = 0;
    r.cuda_driver.library_version = r.cuda_driver.kernel_module_version = "470.57.02";
  }));
  REQUIRE(with_code(findings, "cuda-driver-too-old").size() == 2);  // NCCL 13.0, PyTorch 12.4
}

TEST_CASE("cuda-driver-forward-compat: a newer cuda-compat libcuda on an older kernel module") {
  auto compat = [](RankRecord& r) {
    r.cuda_driver.library = "/usr/local/cuda-12.4/compat/libcuda.so.550.54.15";
    r.cuda_driver.library_version = "550.54.15";
    r.cuda_driver.cuda_version = "12.4";
    r.cuda_driver.kernel_module_version = "470.57.02";
    r.cuda_driver.forward_compat = true;
    r.nccl.cuda_build = "12.4";
  };
  auto findings = judge_records(three_and_one(compat));
  CHECK(with_code(findings, "cuda-driver-kernel-mismatch").empty());
  Finding f = only(findings, "cuda-driver-forward-compat");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.message.find("data-center GPUs") != std::string::npos);
  CHECK(f.message.find("forward compatibility") != std::string::npos);

  // The same versions without the compat package: the NVML mismatch, an error.
  auto plain = judge_records(three_and_one([&](RankRecord& r) {
    compat(r);
    r.cuda_driver.forward_compat = false;
  }));
  CHECK(only(plain, "cuda-driver-kernel-mismatch").severity == Severity::error);
  // A compat library older than the module does not go forward: still the mismatch.
  auto backwards = judge_records(three_and_one([&](RankRecord& r) {
    compat(r);
    r.cuda_driver.kernel_module_version = "570.86.10";
  }));
  CHECK(only(backwards, "cuda-driver-kernel-mismatch").fix.find("cuda-compat") !=
        std::string::npos);
}

TEST_CASE("cuda-driver-unverified: a driver whose version could not be learnt statically") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.cuda_driver = CudaDriverInfo{};
    r.cuda_driver.status = DriverStatus::version_unknown;
    r.cuda_driver.library = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
    r.cuda_driver.error = "read from the image, not loaded";
  }));
  Finding f = only(findings, "cuda-driver-unverified");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(with_code(findings, "cuda-driver-missing").empty());
}

TEST_CASE("a baseline that pins no NCCL does not require one (container-only hosts)") {
  Baseline b;
  b.driver_library_version = "580.65.06";
  JudgeOptions options;
  options.baseline = &b;
  RankRecord host = load_record("rank_ok.json");
  host.nccl = NcclInfo{};
  host.system_nccl = NcclInfo{};
  host.torch = TorchInfo{};
  host.abi.clear();
  auto findings = judge_records({host}, options);
  CHECK(findings.empty());
  // What the host owns is still gated: another driver is a finding.
  b.driver_library_version = "550.54.15";
  CHECK(with_code(judge_records({host}, options), "cuda-driver-version-mismatch").size() == 1);
  // Without a baseline, or with one that pins NCCL, a rank without NCCL is still an error.
  CHECK(only(judge_records({host}), "nccl-missing").severity == Severity::error);
  b.nccl_version = "2.28.9";
  CHECK(only(judge_records({host}, options), "nccl-missing").severity == Severity::error);
  // And a job where other ranks have NCCL still blames the one without.
  Baseline driver_only;
  driver_only.driver_library_version = "580.65.06";
  options.baseline = &driver_only;
  auto mixed = judge_records(three_and_one([](RankRecord& r) { r.nccl = NcclInfo{}; }), options);
  CHECK(only(mixed, "nccl-missing").ranks == std::vector<int>{3});
}

TEST_CASE("torch-missing: an image without the PyTorch of the host record or the baseline") {
  RankRecord host = load_record("rank_ok.json");
  RankRecord image = at(host, 1, "image /srv/images/train.tar");
  image.mode = "static";
  image.container = true;
  image.torch = TorchInfo{};
  auto findings = judge_records({host, image});
  Finding f = only(findings, "torch-missing");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{1});
  // Named as the image, not as "rank 1 on <the host that read it>".
  CHECK(f.message == "image /srv/images/train.tar has no PyTorch, rank 0 on node1 runs PyTorch "
                     "2.5.1+cu124");

  // Between live ranks a rank without PyTorch is not this finding (nor a version mismatch).
  RankRecord other = at(host, 1, "node2");
  other.torch = TorchInfo{};
  CHECK(with_code(judge_records({host, other}), "torch-missing").empty());

  // A baseline that pins PyTorch: any rank without it.
  Baseline b;
  b.torch_version = "2.5.1+cu124";
  b.source = "base.json";
  JudgeOptions options;
  options.baseline = &b;
  Finding pinned = only(judge_records({other}, options), "torch-missing");
  CHECK(pinned.message == "rank 1 on node2 has no PyTorch, baseline base.json pins PyTorch "
                          "2.5.1+cu124");
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

namespace {

// rank_ok.json's PyTorch as a wheel install in /venv whose METADATA requires `pin`, loading
// the wheel NCCL of `loaded`.
void as_wheel_env(RankRecord& r, const std::string& pin, const std::string& loaded) {
  const std::string site = "/venv/lib/python3.11/site-packages";
  r.torch.site_packages = site;
  r.torch.libtorch_cuda = site + "/torch/lib/libtorch_cuda.so";
  r.torch.nccl = {site + "/nvidia/nccl/lib/libnccl.so.2", loaded, "12.4", "wheel"};
  r.torch.nccl_requirement = pin;
  r.abi[0].library = site + "/nvidia/nccl/lib/libnccl.so.2";
}

}  // namespace

TEST_CASE("nccl-wheel-conflict: two NCCL wheels in one site-packages, the fix names torch's pin") {
  const std::string site = "/venv/lib/python3.11/site-packages";
  auto findings = judge_records(three_and_one([&](RankRecord& r) {
    as_wheel_env(r, "nvidia-nccl-cu12==2.20.5", "2.27.7");
    r.nccl_wheels = {{"nvidia-nccl-cu12", "2.20.5", site, site + "/nvidia_nccl_cu12-2.20.5.dist-info", "no"},
                     {"nvidia-nccl-cu13", "2.27.7", site, site + "/nvidia_nccl_cu13-2.27.7.dist-info", "yes"},
                     {"nvidia-nccl-cu12", "2.21.5", "/root/.local/lib/python3.11/site-packages",
                      "/root/.local/lib/python3.11/site-packages/nvidia_nccl_cu12-2.21.5.dist-info",
                      "yes"}};
  }));
  Finding f = only(findings, "nccl-wheel-conflict");
  CHECK(f.severity == Severity::error);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.message.find("nvidia-nccl-cu12 2.20.5 and nvidia-nccl-cu13 2.27.7 installed in " + site) !=
        std::string::npos);
  CHECK(f.message.find("now nvidia-nccl-cu13 2.27.7's") != std::string::npos);
  CHECK(f.found == "nvidia-nccl-cu12 2.20.5, nvidia-nccl-cu13 2.27.7");
  CHECK(f.fix.find("pip uninstall -y nvidia-nccl-cu12 nvidia-nccl-cu13, then pip install "
                   "nvidia-nccl-cu12==2.20.5") != std::string::npos);
}

TEST_CASE("nccl-wheel-conflict: none for one wheel per site-packages") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.nccl_wheels = {{"nvidia-nccl-cu12", "2.20.5", "/a", "/a/x.dist-info", "yes"},
                     {"nvidia-nccl-cu13", "2.27.7", "/b", "/b/y.dist-info", "yes"}};
  }));
  CHECK(with_code(findings, "nccl-wheel-conflict").empty());
}

TEST_CASE("torch-nccl-pin-mismatch: PyTorch's Requires-Dist against the wheel installed") {
  const std::string site = "/venv/lib/python3.11/site-packages";
  auto findings = judge_records(three_and_one([&](RankRecord& r) {
    as_wheel_env(r, "nvidia-nccl-cu12==2.20.5", "2.21.5");
    r.torch.nccl_requirement_met = "no";
    r.nccl_wheels = {{"nvidia-nccl-cu12", "2.21.5", site, site + "/nvidia_nccl_cu12-2.21.5.dist-info", "yes"}};
  }));
  Finding f = only(findings, "torch-nccl-pin-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.ranks == std::vector<int>{3});
  CHECK(f.expected == "nvidia-nccl-cu12==2.20.5");
  CHECK(f.found == "nvidia-nccl-cu12 2.21.5");
  CHECK(f.fix.find("pip install nvidia-nccl-cu12==2.20.5") != std::string::npos);
  // Met, unknown, or no pin at all: nothing.
  for (const char* met : {"yes", "unknown", ""}) {
    auto none = judge_records(three_and_one([&](RankRecord& r) {
      as_wheel_env(r, "nvidia-nccl-cu12==2.20.5", "2.20.5");
      r.torch.nccl_requirement_met = met;
    }));
    CHECK(with_code(none, "torch-nccl-pin-mismatch").empty());
  }
}

TEST_CASE("torch-nccl-pin-mismatch: the pinned wheel missing altogether") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    r.torch.site_packages = "/venv/lib/python3.11/site-packages";
    r.torch.nccl_requirement = "nvidia-nccl-cu12==2.21.5";
    r.torch.nccl_requirement_met = "no";
  }));
  Finding f = only(findings, "torch-nccl-pin-mismatch");
  CHECK(f.found == "none");
  CHECK(f.message.find("no nvidia-nccl-cu* wheel") != std::string::npos);
  CHECK(f.message.find("libnccl.so.2.28.9") != std::string::npos);
}

TEST_CASE("nccl-abi-mismatch in a wheel environment: the fix is the pinned wheel") {
  auto findings = judge_records(three_and_one([](RankRecord& r) {
    as_wheel_env(r, "nvidia-nccl-cu12==2.20.5", "2.18.3");
    r.abi[0].missing = {"ncclCommDeregister", "ncclCommRegister"};
  }));
  Finding f = only(findings, "nccl-abi-mismatch");
  CHECK(f.fix == "pip install nvidia-nccl-cu12==2.20.5 (the NCCL PyTorch 2.5.1+cu124 requires) "
                 "in the environment of /venv/lib/python3.11/site-packages");
}

TEST_CASE("NCCL wheels, PyTorch's pin, JAX and CuPy survive the record's JSON round trip") {
  RankRecord r = load_record("rank_ok.json");
  r.torch.nccl_requirement = "nvidia-nccl-cu12==2.20.5";
  r.torch.nccl_requirement_met = "no";
  r.nccl_wheels = {{"nvidia-nccl-cu12", "2.20.5", "/s", "/s/nvidia_nccl_cu12-2.20.5.dist-info", "no"}};
  r.jax = {FrameworkStatus::ok, "0.6.2", "jax-cuda12-plugin 0.6.2", "/s/jax_plugins/xla_cuda12",
           "/s", "the nvidia.nccl package", {"/s/nvidia/nccl/lib/libnccl.so.2", "2.26.2", "12.2",
           "wheel"}, ""};
  r.cupy.status = FrameworkStatus::error;
  r.cupy.error = "no __version__";
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(nlohmann::json(r), &back, &error));
  CHECK(back.torch.nccl_requirement == "nvidia-nccl-cu12==2.20.5");
  CHECK(back.torch.nccl_requirement_met == "no");
  REQUIRE(back.nccl_wheels.size() == 1);
  CHECK(back.nccl_wheels[0].owns_library == "no");
  CHECK(back.jax.nccl.version == "2.26.2");
  CHECK(back.jax.nccl_rule == "the nvidia.nccl package");
  CHECK(back.cupy.status == FrameworkStatus::error);
  CHECK(back.cupy.error == "no __version__");
  CHECK(configuration_json(back) == configuration_json(r));
  // Records without them (every record before, and jobs without JAX or CuPy) have no such keys.
  nlohmann::json plain = load_record("rank_ok.json");
  CHECK_FALSE(plain.contains("jax"));
  CHECK_FALSE(plain.contains("nccl_wheels"));
}
