// Findings from settings each rank checked against its own host (compare/device_setting_rules.h):
// hosts failing alike share one finding that names them and the hosts where the setting works.
#include "compare/device_setting_rules.h"

#include <catch2/catch.hpp>

#include "compare/judge.h"
#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

DeviceSettingCheck check(const char* variable, const char* value, SettingStatus status,
                         const char* detail) {
  return {variable, value, "environment", status, detail, {}};
}

// `hosts` hosts with 2 ranks each; host h's checks made by `checks(h)` (1-based).
template <typename Checks>
std::vector<RankRecord> cluster(int hosts, Checks checks) {
  RankRecord base = load_record("rank_ok.json");
  std::vector<RankRecord> out;
  for (int h = 1; h <= hosts; ++h) {
    for (int k = 0; k < 2; ++k) {
      RankRecord r = at(base, (h - 1) * 2 + k, "node" + std::to_string(h));
      r.devices.settings = checks(h);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Finding> findings_of(const std::vector<RankRecord>& records) {
  std::vector<Finding> out;
  device_setting_rules(group_records(records), &out);
  return out;
}

const char* kNoIf =
    "selects no interface on this host: NCCL's bootstrap finds no socket interface";

}  // namespace

TEST_CASE("NCCL_SOCKET_IFNAME naming no interface on two hosts: one error naming both") {
  auto records = cluster(4, [](int h) {
    if (h == 2 || h == 4)
      return std::vector<DeviceSettingCheck>{
          check("NCCL_SOCKET_IFNAME", "eth0", SettingStatus::no_device, kNoIf)};
    return std::vector<DeviceSettingCheck>{
        check("NCCL_SOCKET_IFNAME", "eth0", SettingStatus::ok, "")};
  });
  auto found = findings_of(records);
  REQUIRE(found.size() == 1);
  const Finding& f = found[0];
  CHECK(f.code == FindingCode::nccl_socket_ifname_unmatched);
  CHECK(f.severity == Severity::error);
  CHECK(f.hosts == std::vector<std::string>{"node2", "node4"});
  CHECK(f.ranks == std::vector<int>{2, 3, 6, 7});
  CHECK(f.message == std::string("ranks 2-3,6-7 on node[2,4]: NCCL_SOCKET_IFNAME=eth0 ") + kNoIf +
                         ", where it selects devices on node[1,3]");
  CHECK(f.verify.text ==
        "mpirun -np 2 -H node2:1,node4:1 --map-by ppr:1:node -x NCCL_SOCKET_IFNAME denpex-probe");
}

TEST_CASE("NCCL_IB_HCA selecting a down port is a warning; CUDA_VISIBLE_DEVICES beyond an error") {
  auto records = cluster(3, [](int h) {
    std::vector<DeviceSettingCheck> c;
    c.push_back(check("NCCL_IB_HCA", "mlx5_1", h == 1 ? SettingStatus::ports_down : SettingStatus::ok,
                      h == 1 ? "selects only ports that are not ACTIVE here" : ""));
    if (h == 3)
      c.push_back(check("CUDA_VISIBLE_DEVICES", "0,8", SettingStatus::too_many,
                        "names GPU 8, beyond the 8 usable GPUs this host has"));
    return c;
  });
  auto found = findings_of(records);
  REQUIRE(found.size() == 2);
  auto hca = with_code(found, "nccl-ib-hca-unmatched");
  REQUIRE(hca.size() == 1);
  CHECK(hca[0].severity == Severity::warning);
  CHECK(hca[0].hosts == std::vector<std::string>{"node1"});
  auto cvd = with_code(found, "cuda-visible-devices-beyond");
  REQUIRE(cvd.size() == 1);
  CHECK(cvd[0].severity == Severity::error);
  CHECK(cvd[0].hosts == std::vector<std::string>{"node3"});
  // Through the judge: the same findings, so the verdict rejects.
  auto all = judge(group_records(records), {}, {});
  CHECK(with_code(all, "cuda-visible-devices-beyond").size() == 1);
}

TEST_CASE("unknown facts and working settings give no finding") {
  auto records = cluster(3, [](int h) {
    return std::vector<DeviceSettingCheck>{check("NCCL_SOCKET_IFNAME", "eth0",
                                                 h == 2 ? SettingStatus::unknown : SettingStatus::ok,
                                                 h == 2 ? "the host's interfaces could not be read" : "")};
  });
  CHECK(findings_of(records).empty());
}

TEST_CASE("NCCL_NET, NVIDIA_VISIBLE_DEVICES and NCCL_TOPO_FILE failing on a host give their codes") {
  auto records = cluster(4, [](int h) {
    std::vector<DeviceSettingCheck> c;
    c.push_back(check("NCCL_NET", "IB", h == 2 ? SettingStatus::no_device : SettingStatus::ok,
                      h == 2 ? "names IB where no RDMA port NCCL would take is ACTIVE" : ""));
    c.push_back(check("NCCL_TOPO_FILE", "/etc/topo.xml",
                      h == 3 ? SettingStatus::unreadable : SettingStatus::ok,
                      h == 3 ? "does not exist on this host" : ""));
    if (h == 4)
      c.push_back(check("NVIDIA_VISIBLE_DEVICES", "void", SettingStatus::no_device,
                        "gives this container no GPU: CUDA finds no device"));
    return c;
  });
  auto found = findings_of(records);
  REQUIRE(found.size() == 3);
  auto net = with_code(found, "nccl-net-unavailable");
  REQUIRE(net.size() == 1);
  CHECK(net[0].severity == Severity::error);
  CHECK(net[0].hosts == std::vector<std::string>{"node2"});
  auto topo = with_code(found, "nccl-topo-file-unreadable");
  REQUIRE(topo.size() == 1);
  CHECK(topo[0].severity == Severity::warning);
  CHECK(topo[0].message == "ranks 4-5 on node3: NCCL_TOPO_FILE=/etc/topo.xml does not exist on "
                           "this host, where it is read on node[1-2,4]");
  CHECK(topo[0].expected == "NCCL_TOPO_FILE naming a file the host has");
  auto nvd = with_code(found, "container-visible-devices-unmatched");
  REQUIRE(nvd.size() == 1);
  CHECK(nvd[0].severity == Severity::error);
  CHECK(nvd[0].verify.text ==
        "mpirun -np 1 -H node4:1 --map-by ppr:1:node -x NVIDIA_VISIBLE_DEVICES denpex-probe");
}
