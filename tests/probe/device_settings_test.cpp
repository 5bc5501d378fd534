// Settings that name devices against one host's facts (probe/device_settings.h): the bootstrap
// failure of marin-community/marin issue #6940 ("Bootstrap : no socket interface found" with
// NCCL_SOCKET_IFNAME=enp90s0np0 on a host without it), NCCL's fallback to sockets when
// NCCL_IB_HCA selects nothing (NVIDIA/nccl issue #226: "NET/IB : No device found." then
// "NET/Socket : Using [0]ens3"), and CUDA_VISIBLE_DEVICES beyond the host's GPUs.
#include "probe/device_settings.h"

#include <catch2/catch.hpp>

using namespace denpex;

namespace {

InterfaceFacts host_interfaces() {
  InterfaceFacts f;
  f.status = FactStatus::ok;
  f.interfaces = {{"docker0", false, {"172.17.0.1"}},
                  {"ens5", true, {"10.0.0.5", "fe80::1"}},
                  {"ib0", false, {}},
                  {"lo", true, {"127.0.0.1", "::1"}}};
  return f;
}

RdmaFacts host_hcas() {
  RdmaFacts r;
  r.status = FactStatus::ok;
  r.devices = {{"mlx5_0", "", "MT4129", "28.41.1000", "", {{"1", "ACTIVE", "LinkUp", "InfiniBand", ""}}},
               {"mlx5_1", "", "MT4129", "28.41.1000", "", {{"1", "DOWN", "Disabled", "InfiniBand", ""}}}};
  return r;
}

GpuFacts host_gpus(int n) {
  GpuFacts g;
  g.status = FactStatus::ok;
  for (int i = 0; i < n; ++i)
    g.devices.push_back({"0000:1" + std::to_string(i) + ":00.0",
                         "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c68" + std::to_string(i),
                         "NVIDIA H100 80GB HBM3", "no"});
  return g;
}

}  // namespace

TEST_CASE("NCCL_SOCKET_IFNAME: an interface the host does not have is no_device") {
  DeviceSettingCheck c = check_socket_ifname("eth0", "", host_interfaces());
  CHECK(c.status == SettingStatus::no_device);
  CHECK(c.detail.find("selects no interface") != std::string::npos);
  CHECK(c.detail.find("ens5") == std::string::npos);  // same words on every such host
  DeviceSettingCheck ok = check_socket_ifname("ens", "", host_interfaces());
  CHECK(ok.status == SettingStatus::ok);
  CHECK(ok.selected == std::vector<std::string>{"ens5"});
}

TEST_CASE("NCCL_SOCKET_IFNAME: interfaces down or without an address select nothing") {
  CHECK(check_socket_ifname("ib", "", host_interfaces()).status == SettingStatus::no_device);
  CHECK(check_socket_ifname("=docker0", "", host_interfaces()).detail.find("down") !=
        std::string::npos);
  // ^ leaves out what it names: here everything usable.
  CHECK(check_socket_ifname("^ens,lo", "", host_interfaces()).status == SettingStatus::no_device);
  CHECK(check_socket_ifname("^docker,lo", "", host_interfaces()).selected ==
        std::vector<std::string>{"ens5"});
  // NCCL_SOCKET_FAMILY=AF_INET6: lo's ::1 is left out, ens5's fe80::1 counts.
  CHECK(check_socket_ifname("lo", "AF_INET6", host_interfaces()).status == SettingStatus::no_device);
  CHECK(check_socket_ifname("ens", "AF_INET6", host_interfaces()).status == SettingStatus::ok);
}

TEST_CASE("NCCL_SOCKET_IFNAME: one character is ignored by NCCL; unknown interfaces not judged") {
  CHECK(check_socket_ifname("x", "", host_interfaces()).status == SettingStatus::ok);
  InterfaceFacts none;
  none.why = "getifaddrs failed";
  CHECK(check_socket_ifname("eth0", "", none).status == SettingStatus::unknown);
}

TEST_CASE("NCCL_IB_HCA: no such HCA, a down port, a port number, an exact name") {
  CHECK(check_ib_hca("mlx5_0", host_hcas()).status == SettingStatus::ok);
  CHECK(check_ib_hca("mlx5_0", host_hcas()).selected == std::vector<std::string>{"mlx5_0:1"});
  CHECK(check_ib_hca("mlx5_1", host_hcas()).status == SettingStatus::ports_down);
  CHECK(check_ib_hca("mlx5_0:2", host_hcas()).status == SettingStatus::no_device);
  CHECK(check_ib_hca("=mlx5_", host_hcas()).status == SettingStatus::no_device);
  CHECK(check_ib_hca("mlx5_", host_hcas()).status == SettingStatus::ok);
  CHECK(check_ib_hca("^mlx5_0", host_hcas()).status == SettingStatus::ports_down);
  RdmaFacts none;
  none.status = FactStatus::absent;
  CHECK(check_ib_hca("mlx5_0", none).status == SettingStatus::no_device);
  CHECK(check_ib_hca("mlx5_0", RdmaFacts{}).status == SettingStatus::unknown);
}

TEST_CASE("CUDA_VISIBLE_DEVICES: indices and UUID prefixes against the host's usable GPUs") {
  CHECK(check_cuda_visible_devices("0,1,2,3", host_gpus(4)).status == SettingStatus::ok);
  DeviceSettingCheck c = check_cuda_visible_devices("0,1,2,3,4", host_gpus(4));
  CHECK(c.status == SettingStatus::too_many);
  CHECK(c.detail == "names GPU 4, beyond the 4 usable GPUs this host has: CUDA ignores it and "
                    "every entry after it");
  GpuFacts excluded = host_gpus(4);
  excluded.devices[3].excluded = "yes";
  CHECK(check_cuda_visible_devices("3", excluded).status == SettingStatus::too_many);
  CHECK(check_cuda_visible_devices("GPU-3291dfa4-fcc4-0110-615b-c894a0d7c682", host_gpus(4)).status ==
        SettingStatus::ok);
  CHECK(check_cuda_visible_devices("GPU-deadbeef", host_gpus(4)).status == SettingStatus::too_many);
  // A GPU without a UUID line: a UUID entry cannot be judged.
  GpuFacts no_uuid = host_gpus(2);
  no_uuid.devices[1].uuid.clear();
  CHECK(check_cuda_visible_devices("GPU-deadbeef", no_uuid).status == SettingStatus::unknown);
  // "" hides every GPU on purpose; MIG ids are not read: neither is judged.
  CHECK(check_cuda_visible_devices("", host_gpus(4)).status == SettingStatus::ok);
  CHECK(check_cuda_visible_devices("MIG-GPU-3291dfa4/1/0", host_gpus(4)).status ==
        SettingStatus::unknown);
  CHECK(check_cuda_visible_devices("0", GpuFacts{}).status == SettingStatus::unknown);
}

TEST_CASE("the environment wins over nccl.conf; unset settings give no check") {
  DevicesInfo d;
  d.interfaces = host_interfaces();
  d.rdma = host_hcas();
  d.gpus = host_gpus(2);
  auto checks = check_device_settings({{"NCCL_SOCKET_IFNAME", "ens"}},
                                      {{"NCCL_SOCKET_IFNAME", "eth"}, {"NCCL_IB_HCA", "mlx5_1"}}, d);
  REQUIRE(checks.size() == 2);
  CHECK(checks[0].variable == "NCCL_SOCKET_IFNAME");
  CHECK(checks[0].source == "environment");
  CHECK(checks[0].status == SettingStatus::ok);
  CHECK(checks[1].variable == "NCCL_IB_HCA");
  CHECK(checks[1].source == "nccl.conf");
  CHECK(checks[1].status == SettingStatus::ports_down);
  CHECK(check_device_settings({}, {}, d).empty());
  // The IB transport off: NCCL_IB_HCA is not looked at.
  CHECK(check_device_settings({{"NCCL_IB_HCA", "mlx5_1"}, {"NCCL_IB_DISABLE", "1"}}, {}, d).empty());
  checks = check_device_settings({{"NCCL_IB_HCA", "mlx5_1"}, {"NCCL_NET", "socket"}}, {}, d);
  REQUIRE(checks.size() == 1);  // NCCL_NET alone: Socket is always there
  CHECK(checks[0].variable == "NCCL_NET");
  CHECK(checks[0].status == SettingStatus::ok);
  // NCCL_NET=IB with NCCL_IB_HCA naming only a port that is down: NCCL has no network at all.
  checks = check_device_settings({{"NCCL_IB_HCA", "mlx5_1"}, {"NCCL_NET", "IB"}}, {}, d);
  REQUIRE(checks.size() == 2);
  CHECK(checks[0].status == SettingStatus::ports_down);
  CHECK(checks[1].variable == "NCCL_NET");
  CHECK(checks[1].status == SettingStatus::no_device);
}

TEST_CASE("NCCL_NET: IB needs an ACTIVE port NCCL would take; a plugin's name needs a plugin") {
  const RdmaFacts hcas = host_hcas();
  CHECK(check_nccl_net("IB", hcas, "", false, false).status == SettingStatus::ok);
  CHECK(check_nccl_net("ib", hcas, "", false, false).selected ==
        std::vector<std::string>{"mlx5_0:1"});
  CHECK(check_nccl_net("IB", hcas, "=mlx5_1", false, false).status == SettingStatus::no_device);
  DeviceSettingCheck off = check_nccl_net("IB", hcas, "", true, false);
  CHECK(off.status == SettingStatus::no_device);
  CHECK(off.detail.find("NCCL_IB_DISABLE") != std::string::npos);
  RdmaFacts none;
  none.status = FactStatus::absent;
  CHECK(check_nccl_net("IB", none, "", false, false).status == SettingStatus::no_device);
  RdmaFacts unread;  // unknown: never judged
  CHECK(check_nccl_net("IB", unread, "", false, false).status == SettingStatus::unknown);
  CHECK(check_nccl_net("Socket", none, "", false, false).status == SettingStatus::ok);
  CHECK(check_nccl_net("AWS Libfabric", hcas, "", false, false).status == SettingStatus::no_device);
  CHECK(check_nccl_net("AWS Libfabric", hcas, "", false, true).status == SettingStatus::unknown);
}

TEST_CASE("NCCL_TOPO_FILE: a file that is not there, or not a file, is unreadable") {
  CHECK(check_topo_file("/proc/self/status", true).status == SettingStatus::ok);
  DeviceSettingCheck missing = check_topo_file("/nonexistent/topo.xml", true);
  CHECK(missing.status == SettingStatus::unreadable);
  CHECK(missing.detail.rfind("does not exist on this host", 0) == 0);
  CHECK(check_topo_file("/", true).detail.rfind("is not a regular file", 0) == 0);
  CHECK(check_topo_file("/nonexistent/topo.xml", false).status == SettingStatus::unknown);
  DevicesInfo d;
  auto checks = check_device_settings({}, {{"NCCL_TOPO_FILE", "/nonexistent/topo.xml"}}, d);
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].source == "nccl.conf");
  CHECK(checks[0].status == SettingStatus::unreadable);
}

TEST_CASE("NVIDIA_VISIBLE_DEVICES: the container runtime's all, none, void, indices and UUIDs") {
  const GpuFacts two = host_gpus(2);
  CHECK(check_nvidia_visible_devices("all", two, true).status == SettingStatus::ok);
  for (const char* none : {"none", "void", "", "NONE"}) {
    INFO(none);
    CHECK(check_nvidia_visible_devices(none, two, true).status == SettingStatus::no_device);
    // Outside a container only the runtime reads it: not judged.
    CHECK(check_nvidia_visible_devices(none, two, false).status == SettingStatus::unknown);
  }
  // In a container the indices are the host's, and the runtime has applied them already.
  CHECK(check_nvidia_visible_devices("6,7", two, true).status == SettingStatus::ok);
  DeviceSettingCheck beyond = check_nvidia_visible_devices("0,2", two, false);
  CHECK(beyond.variable == "NVIDIA_VISIBLE_DEVICES");
  CHECK(beyond.status == SettingStatus::too_many);
  CHECK(beyond.detail.find("refuses to start") != std::string::npos);
  CHECK(check_nvidia_visible_devices("GPU-3291dfa4-fcc4-0110-615b-c894a0d7c681", two, false).status ==
        SettingStatus::ok);
  DevicesInfo d;
  d.gpus = two;
  // Only the process's environment: nccl.conf does not set it.
  CHECK(check_device_settings({}, {{"NVIDIA_VISIBLE_DEVICES", "none"}}, d, {true, false}).empty());
  auto checks = check_device_settings({{"NVIDIA_VISIBLE_DEVICES", "void"}}, {}, d, {true, false});
  REQUIRE(checks.size() == 1);
  CHECK(checks[0].status == SettingStatus::no_device);
}

TEST_CASE("an image's NCCL_NET, NCCL_TOPO_FILE and NVIDIA_VISIBLE_DEVICES are checked on the nodes") {
  DevicesInfo image;
  image.status = FactStatus::not_probed;
  auto checks = check_device_settings(
      {{"NCCL_NET", "AWS Libfabric"}, {"NCCL_TOPO_FILE", "/nonexistent.xml"},
       {"NVIDIA_VISIBLE_DEVICES", "void"}},
      {}, image, {true, false});
  REQUIRE(checks.size() == 3);
  for (const auto& c : checks) {
    INFO(c.variable);
    CHECK(c.status == SettingStatus::unknown);
  }
}
