// The cross-host device rules (compare/device_rules.h) on records: a uniform cluster and hosts
// without the driver give nothing; each odd host is named with the hosts it differs from.
#include "compare/device_rules.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "compare/baseline.h"
#include "compare/judge.h"
#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

std::string fmt_bus(int i) { return "0000:" + std::to_string(10 + i) + ":00.0"; }

// A healthy host: 8 H100s, 2 ConnectX-7 ports ACTIVE, nvidia_peermem loaded. Bus locations,
// UUIDs and GUIDs are per host, as on real machines.
DevicesInfo h100_host(int host) {
  DevicesInfo d;
  d.status = FactStatus::ok;
  d.gpus.status = FactStatus::ok;
  for (int i = 0; i < 8; ++i)
    d.gpus.devices.push_back({fmt_bus(i), "GPU-" + std::to_string(host) + "-" + std::to_string(i),
                              "NVIDIA H100 80GB HBM3", "no"});
  d.rdma.status = FactStatus::ok;
  for (int i = 0; i < 2; ++i)
    d.rdma.devices.push_back({"mlx5_" + std::to_string(i), "a088:c203:007e:" + std::to_string(1000 + host * 10 + i),
                              "MT4129", "28.41.1000", "MT_0000000838",
                              {{"1", "ACTIVE", "LinkUp", "InfiniBand", "400 Gb/sec (4X NDR)"}}});
  d.gpudirect.status = FactStatus::ok;
  d.gpudirect.module = "nvidia_peermem";
  d.gpudirect.version = "580.65.06";
  d.nvswitch.status = FactStatus::absent;
  return d;
}

}  // namespace

namespace {

// `hosts` hosts, `per_host` ranks each, host h's devices made by `devices(h)` (1-based).
template <typename Devices>
std::vector<RankRecord> cluster(int hosts, int per_host, Devices devices) {
  RankRecord base = load_record("rank_ok.json");
  std::vector<RankRecord> out;
  for (int h = 1; h <= hosts; ++h) {
    for (int k = 0; k < per_host; ++k) {
      RankRecord r = at(base, (h - 1) * per_host + k, "node" + std::to_string(h));
      r.devices = devices(h);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Finding> device_findings(const std::vector<RankRecord>& records) {
  std::vector<Finding> out;
  auto groups = group_records(records);
  device_rules(groups, nullptr, &out);
  return out;
}

Finding only(const std::vector<Finding>& findings, const std::string& code) {
  INFO("codes: " << Catch::Detail::stringify(codes(findings)));
  REQUIRE(findings.size() == 1);
  REQUIRE(code_name(findings[0].code) == code);
  return findings[0];
}

}  // namespace

TEST_CASE("a uniform cluster gives no device finding, and one configuration") {
  auto records = cluster(4, 8, h100_host);
  CHECK(device_findings(records).empty());
  CHECK(group_records(records).size() == 1);  // per-host identities do not split it
  auto all = judge(group_records(records), {}, {});
  INFO("codes: " << Catch::Detail::stringify(codes(all)));
  CHECK(all.empty());
}

TEST_CASE("hosts without the driver or not probed never cause a finding") {
  auto records = cluster(4, 8, [](int h) {
    if (h == 3) {
      DevicesInfo d;  // no /proc/driver/nvidia, /sys unreadable
      d.status = FactStatus::ok;
      d.gpus.why = "no /proc/driver/nvidia";
      return d;
    }
    return h100_host(h);
  });
  CHECK(device_findings(records).empty());
  // An older probe's record has no devices at all: the same.
  records[0].devices = DevicesInfo{};
  CHECK(device_findings(records).empty());
}

TEST_CASE("gpu-count-short: fewer usable GPUs than ranks placed on a host is an error") {
  auto records = cluster(4, 8, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2) d.gpus.devices.resize(7);
    if (h == 4) d.gpus.devices[0].excluded = "yes";
    return d;
  });
  auto findings = device_findings(records);
  auto short_ = with_code(findings, "gpu-count-short");
  REQUIRE(short_.size() == 1);
  CHECK(short_[0].severity == Severity::error);
  CHECK(short_[0].hosts == std::vector<std::string>{"node2", "node4"});
  CHECK(short_[0].ranks.size() == 16);
  CHECK(short_[0].message == "node[2,4] have 7 usable GPUs for 8 ranks placed on each");
  CHECK(short_[0].verify.text ==
        "mpirun -np 16 -H node2:8,node4:8 --map-by ppr:8:node denpex-probe");
  // Not told again that they have fewer GPUs than the others.
  CHECK(with_code(findings, "gpu-count-mismatch").empty());
}

TEST_CASE("gpu-count-mismatch: same ranks per host, one host with fewer GPUs than its peers") {
  auto records = cluster(4, 4, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 3) d.gpus.devices.resize(6);
    return d;
  });
  Finding f = only(device_findings(records), "gpu-count-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.hosts == std::vector<std::string>{"node3"});
  CHECK(f.message == "node3 has 6 usable GPUs, where node[1-2,4] have 8 usable GPUs");
  CHECK_FALSE(f.fix.empty());
  // The gate again on the odd host and one it differs from, made by the one renderer.
  CHECK(f.verify.text == "mpirun -np 2 -H node3:1,node1:1 --map-by ppr:1:node denpex-probe");
  CHECK(f.verify.argv.size() == 8);
}

TEST_CASE("gpu-count-mismatch is not judged where the job places ranks unevenly") {
  RankRecord base = load_record("rank_ok.json");
  std::vector<RankRecord> records;
  for (int r = 0; r < 8; ++r) {
    RankRecord x = at(base, r, "node1");
    x.devices = h100_host(1);
    records.push_back(x);
  }
  for (int r = 8; r < 12; ++r) {
    RankRecord x = at(base, r, "node2");
    x.devices = h100_host(2);
    x.devices.gpus.devices.resize(4);
    records.push_back(x);
  }
  CHECK(device_findings(records).empty());
}

TEST_CASE("gpu-model-mismatch names the odd host and the hosts it differs from") {
  auto records = cluster(3, 8, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 1)
      for (auto& g : d.gpus.devices) g.model = "NVIDIA A100-SXM4-80GB";
    return d;
  });
  Finding f = only(device_findings(records), "gpu-model-mismatch");
  CHECK(f.hosts == std::vector<std::string>{"node1"});
  CHECK(f.message == "node1 has GPU model NVIDIA A100-SXM4-80GB, where node[2-3] have GPU model "
                     "NVIDIA H100 80GB HBM3");
}

TEST_CASE("gpu-kernel-module-mismatch, unless the driver version finding says it") {
  auto records = cluster(3, 2, h100_host);
  for (auto& r : records)
    if (r.host == "node3") r.cuda_driver.kernel_module_version = "550.54.15";
  Finding f = only(device_findings(records), "gpu-kernel-module-mismatch");
  CHECK(f.hosts == std::vector<std::string>{"node3"});
  CHECK(f.found == "kernel module 550.54.15");
  CHECK(f.expected == "kernel module 580.65.06");

  // Library and module both differ on node3: cuda-driver-version-mismatch names it, once.
  for (auto& r : records) {
    r.cuda_driver.status = DriverStatus::ok;
    r.cuda_driver.library_version = r.cuda_driver.kernel_module_version;
  }
  auto all = judge(group_records(records), {}, {});
  CHECK(with_code(all, "cuda-driver-version-mismatch").size() == 1);
  CHECK(with_code(all, "gpu-kernel-module-mismatch").empty());
}

TEST_CASE("a baseline pins the kernel module; a host alone with another is judged against it") {
  Baseline b = baseline_from_group(group_records(cluster(1, 1, h100_host))[0]);
  CHECK(b.devices.at("gpu_kernel_module") == "580.65.06");
  b.source = "b.json";
  auto odd = cluster(1, 1, h100_host);
  odd[0].cuda_driver.kernel_module_version = "550.54.15";
  std::vector<Finding> out;
  device_rules(group_records(odd), &b, &out);
  REQUIRE(codes(out) == std::vector<std::string>{"gpu-kernel-module-mismatch"});
  CHECK(out[0].message ==
        "node1 has kernel module 550.54.15, where baseline b.json pins kernel module 580.65.06");
  // No module read (no driver): not judged against the pin.
  odd[0].cuda_driver.kernel_module_version.clear();
  out.clear();
  device_rules(group_records(odd), &b, &out);
  CHECK(out.empty());
}

TEST_CASE("rdma-hca-mismatch: another count of HCAs, or none") {
  auto records = cluster(4, 2, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2) d.rdma.devices.pop_back();
    if (h == 4) {
      d.rdma.devices.clear();
      d.rdma.status = FactStatus::absent;
    }
    return d;
  });
  auto findings = with_code(device_findings(records), "rdma-hca-mismatch");
  REQUIRE(findings.size() == 2);
  for (const auto& f : findings) CHECK(f.severity == Severity::warning);
  CHECK(findings[0].message == "node2 has 1 x MT4129, where node[1,3] have 2 x MT4129");
  CHECK(findings[1].message == "node4 has no RDMA device, where node[1,3] have 2 x MT4129");
}

TEST_CASE("rdma-firmware-mismatch: same model, other firmware") {
  auto records = cluster(3, 2, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 3)
      for (auto& dev : d.rdma.devices) dev.fw_ver = "28.39.1002";
    return d;
  });
  Finding f = only(device_findings(records), "rdma-firmware-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.message == "node3 has MT4129 firmware 28.39.1002, where node[1-2] have MT4129 firmware "
                     "28.41.1000");
}

TEST_CASE("rdma-port-down: a port not ACTIVE where the others are; a port down everywhere is not") {
  auto records = cluster(3, 2, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2) d.rdma.devices[1].ports[0].state = "DOWN";
    d.rdma.devices[0].ports.push_back({"2", "DOWN", "Disabled", "InfiniBand", ""});
    return d;
  });
  Finding f = only(device_findings(records), "rdma-port-down");
  CHECK(f.severity == Severity::warning);
  CHECK(f.hosts == std::vector<std::string>{"node2"});
  CHECK(f.message == "node2 has mlx5_1 port 1 DOWN, where node[1,3] have mlx5_1 port 1 ACTIVE");
}

TEST_CASE("gpudirect-mismatch: the peer-memory module loaded on some hosts with RDMA, not others") {
  auto records = cluster(3, 2, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 1) {
      d.gpudirect = GpuDirectFacts{};
      d.gpudirect.status = FactStatus::absent;
    }
    return d;
  });
  Finding f = only(device_findings(records), "gpudirect-mismatch");
  CHECK(f.severity == Severity::warning);
  CHECK(f.hosts == std::vector<std::string>{"node1"});
  CHECK(f.found.find("no peer-memory module") != std::string::npos);

  // A host whose GPUs are unknown (no NVIDIA driver seen) is not said to lack GPUDirect.
  for (auto& r : records)
    if (r.host == "node1") r.devices.gpus = GpuFacts{};
  CHECK(with_code(device_findings(records), "gpudirect-mismatch").empty());

  // Without RDMA devices GPUDirect RDMA has nothing to do: not judged.
  for (auto& r : records) {
    r.devices.rdma.devices.clear();
    r.devices.rdma.status = FactStatus::absent;
  }
  CHECK(device_findings(records).empty());
}

TEST_CASE("a tie names every value") {
  auto records = cluster(2, 2, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2)
      for (auto& g : d.gpus.devices) g.model = "NVIDIA A100-SXM4-80GB";
    return d;
  });
  Finding f = only(device_findings(records), "gpu-model-mismatch");
  CHECK(f.hosts == std::vector<std::string>{"node1", "node2"});
  CHECK(f.message.rfind("no majority for the GPU model (2 values, tied): ", 0) == 0);
}

TEST_CASE("a host name no quoting makes safe gives prose, never a command") {
  auto records = cluster(3, 1, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2)
      for (auto& g : d.gpus.devices) g.model = "NVIDIA A100-SXM4-80GB";
    return d;
  });
  for (auto& r : records)
    if (r.host == "node2") r.host = "node2\x1b]0;owned\x07";
  Finding f = only(device_findings(records), "gpu-model-mismatch");
  CHECK(f.verify.argv.empty());
  CHECK(f.verify.text.find("\x1b") == std::string::npos);
  // A host name with spaces is one quoted word.
  for (auto& r : records)
    if (r.host.rfind("node2", 0) == 0) r.host = "node 2";
  Finding g = only(device_findings(records), "gpu-model-mismatch");
  CHECK(g.verify.text == "mpirun -np 2 -H 'node 2:1,node1:1' --map-by ppr:1:node denpex-probe");
}

TEST_CASE("a baseline pins a good host's device facts; one host alone is judged against it") {
  auto good = cluster(1, 1, h100_host);
  Baseline b = baseline_from_group(group_records(good)[0]);
  CHECK(b.devices.at("gpu_count") == "8");
  CHECK(b.devices.at("gpu_model") == "NVIDIA H100 80GB HBM3");
  CHECK(b.devices.at("rdma_hcas") == "2 x MT4129");
  CHECK(b.devices.at("rdma_firmware:MT4129") == "28.41.1000");
  CHECK(b.devices.at("rdma_port:mlx5_1:1") == "ACTIVE");
  CHECK(b.devices.at("gpudirect") == "loaded");
  b.source = "/etc/denpex/baseline.json";

  // The prolog: one host, alone, against the baseline.
  auto odd = cluster(1, 1, [](int h) {
    DevicesInfo d = h100_host(h);
    d.gpus.devices.resize(7);
    d.rdma.devices[1].ports[0].state = "DOWN";
    d.gpudirect = GpuDirectFacts{};
    d.gpudirect.status = FactStatus::absent;
    return d;
  });
  std::vector<Finding> out;
  device_rules(group_records(odd), &b, &out);
  // In the order of the pinned keys.
  CHECK(codes(out) == std::vector<std::string>{"gpu-count-mismatch", "gpudirect-mismatch",
                                               "rdma-port-down"});
  CHECK(out[0].message ==
        "node1 has 7 usable GPUs, where baseline /etc/denpex/baseline.json pins 8 usable GPUs");
  // A host whose facts are unknown is not judged against the pins.
  auto unknown = cluster(1, 1, [](int) { return DevicesInfo{}; });
  out.clear();
  device_rules(group_records(unknown), &b, &out);
  CHECK(out.empty());

  // Written and read back; a key of a later version is ignored, a wrong type refused.
  nlohmann::json j = nlohmann::json::parse(R"({"schema": "denpex.baseline.v1",
      "devices": {"gpu_count": "8", "nvlink:future": "x"}})");
  BaselineLoad load = parse_baseline(j.dump(), "b.json");
  REQUIRE(load.status == BaselineStatus::ok);
  CHECK(load.baseline.devices.size() == 2);
  out.clear();
  device_rules(group_records(good), &load.baseline, &out);
  CHECK(out.empty());
  j["devices"]["gpu_count"] = 8;
  CHECK(parse_baseline(j.dump(), "b.json").status == BaselineStatus::malformed);
}

namespace {

// h100_host with NVML's answers: `mig` and `mode` on every GPU, `lost` of them lost.
DevicesInfo with_nvml(DevicesInfo d, const char* mig, const char* mode, int lost) {
  d.nvml.status = FactStatus::ok;
  for (int i = 0; i < 8; ++i) {
    NvmlGpu g;
    g.name = "NVIDIA H100 80GB HBM3";
    g.compute_mode = mode;
    g.mig = mig;
    g.lost = i < lost;
    d.nvml.gpus.push_back(g);
  }
  return d;
}

}  // namespace

TEST_CASE("NVML's facts: MIG on one host is an error, another compute mode a warning, a lost GPU an error") {
  auto records = cluster(5, 1, [](int h) {
    DevicesInfo d = h100_host(h);
    if (h == 2) return with_nvml(d, "enabled", "default", 0);
    if (h == 3) return with_nvml(d, "disabled", "exclusive-process", 0);
    if (h == 4) return with_nvml(d, "disabled", "default", 1);
    if (h == 5) return d;  // NVML unknown: takes no part
    return with_nvml(d, "disabled", "default", 0);
  });
  auto found = device_findings(records);
  auto mig = with_code(found, "gpu-mig-mismatch");
  REQUIRE(mig.size() == 1);
  CHECK(mig[0].severity == Severity::error);
  CHECK(mig[0].message == "node2 has MIG enabled, where node[1,3-4] have MIG disabled");
  auto mode = with_code(found, "gpu-compute-mode-mismatch");
  REQUIRE(mode.size() == 1);
  CHECK(mode[0].severity == Severity::warning);
  CHECK(mode[0].hosts == std::vector<std::string>{"node3"});
  auto lost = with_code(found, "gpu-lost");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].severity == Severity::error);
  CHECK(lost[0].message == "node4 has 1 GPU lost (NVML: GPU is lost)");
  CHECK(found.size() == 3);
}

namespace {

// with_nvml's healthy host with what NVML tells of memory, NVLink and the fabric: ECC on, no
// error, 18 of 18 links up, the fabric registered.
DevicesInfo healthy_nvml(int host) {
  DevicesInfo d = with_nvml(h100_host(host), "disabled", "default", 0);
  for (auto& g : d.nvml.gpus) {
    g.ecc = "enabled";
    g.ecc_uncorrected = 0;
    g.remap_pending = "no";
    g.nvlink_links = g.nvlink_up = 18;
    g.fabric = "completed";
  }
  d.nvswitch.fabric_manager = "ready";
  return d;
}

}  // namespace

TEST_CASE("NVML's health facts: a uniform cluster of them gives no finding") {
  CHECK(device_findings(cluster(4, 2, healthy_nvml)).empty());
}

TEST_CASE("ECC off on one host is a warning, pending errors an error, NVLink down a warning") {
  auto records = cluster(6, 1, [](int h) {
    DevicesInfo d = healthy_nvml(h);
    if (h == 2) d.nvml.gpus[3].ecc = "disabled";
    if (h == 3) d.nvml.gpus[0].ecc_uncorrected = 2;
    if (h == 4) {
      d.nvml.gpus[1].remap_pending = "yes";
      d.nvml.gpus[5].remap_failed = true;
    }
    if (h == 5) d.nvml.gpus[7].nvlink_up = 16;
    return d;
  });
  auto found = device_findings(records);
  auto ecc = with_code(found, "gpu-ecc-mode-mismatch");
  REQUIRE(ecc.size() == 1);
  CHECK(ecc[0].severity == Severity::warning);
  CHECK(ecc[0].message == "node2 has ECC disabled + enabled, where node[1,3-6] have ECC enabled");
  auto pending = with_code(found, "gpu-ecc-errors-pending");
  REQUIRE(pending.size() == 2);
  CHECK(pending[0].severity == Severity::error);
  CHECK(pending[0].message == "node3 has 1 GPU with volatile uncorrected ECC errors (NVML)");
  CHECK(pending[1].message ==
        "node4 has 2 GPUs with a failed row remapping, rows pending remapping (NVML)");
  auto links = with_code(found, "nvlink-down");
  REQUIRE(links.size() == 1);
  CHECK(links[0].severity == Severity::warning);
  CHECK(links[0].message ==
        "node5 has 142 of 144 NVLink links active, where node[1-4,6] have 144 of 144 NVLink "
        "links active");
  CHECK(found.size() == 4);
}

TEST_CASE("more NVLink links up on one host is no finding; a host without NVLink takes no part") {
  auto records = cluster(5, 1, [](int h) {
    DevicesInfo d = healthy_nvml(h);
    if (h <= 3) d.nvml.gpus[0].nvlink_up = 17;  // the majority has one down: the odd host has more
    if (h == 4)
      for (auto& g : d.nvml.gpus) g.nvlink_links = g.nvlink_up = 0;
    return d;
  });
  CHECK(with_code(device_findings(records), "nvlink-down").empty());
  // A host with a GPU fewer has fewer links, none of them down: not an NVLink finding.
  records = cluster(3, 1, [](int h) {
    DevicesInfo d = healthy_nvml(h);
    if (h == 3) d.nvml.gpus.pop_back();
    return d;
  });
  CHECK(with_code(device_findings(records), "nvlink-down").empty());
}

TEST_CASE("fabric-manager-not-ready: a host whose GPUs' fabric registration is not complete") {
  auto records = cluster(4, 2, [](int h) {
    DevicesInfo d = healthy_nvml(h);
    if (h >= 3) {
      d.nvswitch.fabric_manager = "not-ready";
      d.nvswitch.fabric_manager_why = "GPU fabric registration not-started";
    }
    return d;
  });
  const Finding f = only(device_findings(records), "fabric-manager-not-ready");
  CHECK(f.severity == Severity::error);
  CHECK(f.hosts == std::vector<std::string>{"node3", "node4"});
  CHECK(f.ranks == std::vector<int>{4, 5, 6, 7});
  CHECK(f.message == "node[3-4] have GPU fabric registration not-started (NVML: the fabric manager "
                     "is not running, has not finished, or failed)");
  CHECK(f.verify.text == "mpirun -np 2 -H node3:1,node4:1 --map-by ppr:1:node denpex-probe");
}

TEST_CASE("a baseline pins ECC and NVLink; a host alone is judged against it, and alone for its errors") {
  std::vector<ConfigGroup> good = group_records(cluster(1, 1, healthy_nvml));
  const auto pins = device_pins(good[0]);
  CHECK(pins.at("gpu_ecc") == "enabled");
  CHECK(pins.at("nvlink") == "144 of 144");
  Baseline b;
  b.devices = pins;
  auto odd = cluster(1, 1, [](int h) {
    DevicesInfo d = healthy_nvml(h);
    for (auto& g : d.nvml.gpus) g.ecc = "disabled";
    d.nvml.gpus[2].nvlink_up = 0;
    d.nvml.gpus[2].retired_pending = "yes";
    return d;
  });
  std::vector<Finding> out;
  device_rules(group_records(odd), &b, &out);
  CHECK(codes(out) == std::vector<std::string>{"gpu-ecc-errors-pending", "gpu-ecc-mode-mismatch",
                                               "nvlink-down"});
}
