// Device facts from fixture trees in the kernel's and the driver's formats
// (tests/fixtures/devices/README.md names the source of each), and their place in the record:
// identities out of the configuration, old records accepted, wrong types refused.
#include "probe/device_probe.h"
#include "probe/device_settings.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "probe/monotonic_clock.h"
#include "probe/probe.h"
#include "scratch.h"

using namespace denpex;
using denpex_test::options_with;
using denpex_test::Scratch;

namespace {

const std::string kFixtures = std::string(DENPEX_DEVICE_FIXTURES);

// A tree's roots, without NVML.
DeviceRoots tree_roots(const std::string& proc, const std::string& sys) {
  DeviceRoots r;
  r.proc = proc;
  r.sys = sys;
  return r;
}

DeviceRoots roots_of(const std::string& host) {
  return tree_roots(kFixtures + "/" + host + "/proc", kFixtures + "/" + host + "/sys");
}

}  // namespace

TEST_CASE("a GPU's information file: the L4 paste's layout, keys split at the first colon") {
  // canonical/snapd PR #14893 (a real NVIDIA L4): tabs and a space between key and value.
  const std::string text =
      "Model: \t\t NVIDIA L4\nIRQ:   \t\t 16\nGPU UUID: \t GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689\n"
      "Video BIOS: \t 95.04.65.00.13\nBus Type: \t PCIe\nDMA Size: \t 47 bits\n"
      "DMA Mask: \t 0x7fffffffffff\nBus Location: \t 0000:70:00.0\nDevice Minor: \t 0\n"
      "GPU Excluded:\t No\n";
  GpuDevice g = parse_gpu_information("0000:70:00.0", text);
  CHECK(g.model == "NVIDIA L4");
  CHECK(g.uuid == "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689");
  CHECK(g.bus_location == "0000:70:00.0");
  CHECK(g.excluded == "no");
}

TEST_CASE("a GPU's information file: placeholders, old layouts and an empty file are unknowns") {
  // The placeholder osapi.c prints when the UUID cannot be derived: question marks in place of
  // every hex digit (spelt with x here: C++ would read some "?" runs as trigraphs).
  std::string placeholder = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
  std::replace(placeholder.begin(), placeholder.end(), 'x', '?');
  GpuDevice g = parse_gpu_information(
      "0000:0A:00.0", "Model: \t\t Tesla V100\nGPU UUID: \t " + placeholder + "\nGPU Excluded:\t Yes\n");
  CHECK(g.bus_location == "0000:0a:00.0");  // NVML prints upper case; procfs lower
  CHECK(g.uuid.empty());
  CHECK(g.excluded == "yes");
  GpuDevice empty = parse_gpu_information("0000:01:00.0", "");
  CHECK(empty.model.empty());
  CHECK(empty.excluded.empty());
  CHECK(empty.bus_location == "0000:01:00.0");
}

TEST_CASE("sysfs port attributes: the name after the number") {
  CHECK(sysfs_state_name("4: ACTIVE\n") == "ACTIVE");
  CHECK(sysfs_state_name("5: LinkUp") == "LinkUp");
  CHECK(sysfs_state_name("InfiniBand\n") == "InfiniBand");
  CHECK(sysfs_state_name("") == "");
}

TEST_CASE("an H100 host: GPUs, RDMA ports, GPUDirect and NVSwitch read from the trees") {
  DevicesInfo d = probe_devices(roots_of("h100"), 5.0);
  CHECK(d.status == FactStatus::ok);
  REQUIRE(d.gpus.status == FactStatus::ok);
  REQUIRE(d.gpus.devices.size() == 2);
  CHECK(d.gpus.devices[0].bus_location == "0000:0a:00.0");  // sorted by bus location
  CHECK(d.gpus.devices[0].uuid.empty());                    // no UUID line: not guessed
  CHECK(d.gpus.devices[1].uuid == "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689");
  CHECK(d.gpus.devices[1].model == "NVIDIA H100 80GB HBM3");
  CHECK(d.gpus.devices[1].excluded == "no");

  REQUIRE(d.rdma.status == FactStatus::ok);
  REQUIRE(d.rdma.devices.size() == 2);
  const RdmaDevice& m0 = d.rdma.devices[0];
  CHECK(m0.name == "mlx5_0");
  CHECK(m0.hca_type == "MT4129");
  CHECK(m0.fw_ver == "28.41.1000");
  CHECK(m0.board_id == "MT_0000000838");
  CHECK(m0.node_guid == "a088:c203:007e:1dba");
  REQUIRE(m0.ports.size() == 1);
  CHECK(m0.ports[0].state == "ACTIVE");
  CHECK(m0.ports[0].phys_state == "LinkUp");
  CHECK(m0.ports[0].link_layer == "InfiniBand");
  CHECK(m0.ports[0].rate == "400 Gb/sec (4X NDR)");
  CHECK(d.rdma.devices[1].ports[0].state == "DOWN");

  CHECK(d.gpudirect.status == FactStatus::ok);
  CHECK(d.gpudirect.module == "nvidia_peermem");
  CHECK(d.gpudirect.version == "565.57.01");
  CHECK(d.nvswitch.status == FactStatus::ok);
  CHECK(d.nvswitch.count == 1);
  CHECK(d.nvswitch.fabric_manager == "unknown");
  CHECK_FALSE(d.nvswitch.fabric_manager_why.empty());
}

TEST_CASE("a host without the driver: GPUs unknown with why, no RDMA, no GPUDirect") {
  DevicesInfo d = probe_devices(roots_of("nodriver"), 5.0);
  CHECK(d.gpus.status == FactStatus::unknown);
  CHECK(d.gpus.why.find("/proc/driver/nvidia") != std::string::npos);
  CHECK(d.gpus.devices.empty());
  CHECK(d.rdma.status == FactStatus::absent);
  CHECK(d.gpudirect.status == FactStatus::absent);
  CHECK(d.nvswitch.status == FactStatus::unknown);
}

TEST_CASE("no procfs or sysfs at all (a masked container): everything unknown, nothing guessed") {
  DevicesInfo d = probe_devices(tree_roots("/nonexistent/proc", "/nonexistent/sys"), 5.0);
  CHECK(d.gpus.status == FactStatus::unknown);
  CHECK(d.rdma.status == FactStatus::unknown);
  CHECK(d.gpudirect.status == FactStatus::unknown);
  CHECK(d.nvswitch.status == FactStatus::unknown);
}

TEST_CASE("an old driver's file (no GPU Excluded line) counts the GPU, excluded unknown") {
  DevicesInfo d = probe_devices(roots_of("old"), 5.0);
  REQUIRE(d.gpus.status == FactStatus::ok);
  REQUIRE(d.gpus.devices.size() == 1);
  CHECK(d.gpus.devices[0].model == "GeForce GTX 650");
  CHECK(d.gpus.devices[0].excluded.empty());
  CHECK(d.rdma.status == FactStatus::absent);
}

TEST_CASE("a FIFO where a GPU's information file belongs is refused, never waited on") {
  Scratch s;
  const std::string fifo = s.prepare("proc/driver/nvidia/gpus/0000:01:00.0/information");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  s.write("sys/class/.keep", "");
  const double start = monotonic_seconds();
  DevicesInfo d = probe_devices(tree_roots(s.path("proc"), s.path("sys")), 5.0);
  CHECK(monotonic_seconds() - start < 2.0);
  REQUIRE(d.gpus.status == FactStatus::ok);
  REQUIRE(d.gpus.devices.size() == 1);  // the directory is the GPU; its model is unknown
  CHECK(d.gpus.devices[0].model.empty());
}

TEST_CASE("probe_rank reads the devices from ProbeOptions' roots, and not under --root") {
  ProbeOptions o = options_with({});
  o.proc_root = kFixtures + "/h100/proc";
  o.sys_root = kFixtures + "/h100/sys";
  RankRecord live = probe_rank(o);
  CHECK(live.devices.status == FactStatus::ok);
  CHECK(live.devices.gpus.devices.size() == 2);

  Scratch s;
  s.write("image/etc/os-release", "ID=debian\n");
  o.root = s.path("image");
  RankRecord image = probe_rank(o);
  CHECK(image.devices.status == FactStatus::not_probed);
  CHECK(image.devices.gpus.status == FactStatus::not_probed);
  CHECK(image.devices.why == "devices are checked on the nodes, not in an image");

  // A setting an image bakes in is kept, not judged here.
  o.env["NCCL_SOCKET_IFNAME"] = "eth0";
  RankRecord baked = probe_rank(o);
  REQUIRE(baked.devices.settings.size() == 1);
  CHECK(baked.devices.settings[0].value == "eth0");
  CHECK(baked.devices.settings[0].status == SettingStatus::unknown);
  CHECK(baked.devices.settings[0].detail.find("checked on the nodes") != std::string::npos);
}

TEST_CASE("device identities stay in the record and out of the configuration") {
  RankRecord a;
  a.host = "node1";
  a.devices = probe_devices(roots_of("h100"), 5.0);
  RankRecord b = a;
  b.host = "node2";
  b.devices.gpus.devices[1].uuid = "GPU-00000000-1111-2222-3333-444444444444";
  b.devices.gpus.devices[1].bus_location = "0000:99:00.0";
  b.devices.rdma.devices[0].node_guid = "0000:0000:0000:0001";
  CHECK(configuration_digest(a) == configuration_digest(b));
  const std::string config = configuration_json(a);
  CHECK(config.find("GPU-3291dfa4") == std::string::npos);
  CHECK(config.find("0000:18:00.0") == std::string::npos);
  CHECK(config.find("a088:c203") == std::string::npos);
  CHECK(config.find("NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(config.find("28.41.1000") != std::string::npos);

  // What differs between hosts does split configurations.
  RankRecord c = a;
  c.devices.rdma.devices[0].fw_ver = "28.39.1002";
  CHECK(configuration_digest(a) != configuration_digest(c));
  RankRecord e = a;
  e.devices.gpus.devices.pop_back();
  CHECK(configuration_digest(a) != configuration_digest(e));

  // The record keeps them, and reads them back.
  nlohmann::json j = a;
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(j, &back, &error));
  CHECK(back.devices.gpus.devices[1].uuid == "GPU-3291dfa4-fcc4-0110-615b-c894a0d7c689");
  CHECK(back.devices.rdma.devices[0].node_guid == "a088:c203:007e:1dba");
  CHECK(back.devices.rdma.devices[1].ports[0].state == "DOWN");
  CHECK(back.devices.nvswitch.count == 1);
  CHECK(nlohmann::json(back) == j);
}

TEST_CASE("records without devices (older probes) are read; wrong types are refused in one line") {
  RankRecord r;
  r.host = "node1";
  nlohmann::json j = r;
  j.erase("devices");
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(j, &back, &error));
  CHECK(back.devices.status == FactStatus::unknown);
  CHECK(back.devices.gpus.status == FactStatus::unknown);

  j["devices"] = {{"status", "ok"},
                  {"gpus", {{"status", "ok"}, {"devices", {{{"model", 7}}}}}}};
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error == "\"devices.gpus.devices[0].model\" is not a string");
  j["devices"] = {{"status", "ok"}, {"rdma", {{"status", "ok"}, {"devices", "mlx5_0"}}}};
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error == "\"devices.rdma.devices\" is not an array");
  j["devices"] = {{"status", "maybe"}};
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error == "unknown devices.status \"maybe\"");
  j["devices"] = {{"status", "ok"}, {"nvswitch", {{"status", "ok"}, {"count", -1}}}};
  CHECK_FALSE(record_from_json(j, &back, &error));
  j["devices"] = "none";
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error == "\"devices\" is not an object");
}

TEST_CASE("interfaces come from getifaddrs; they and a setting's value stay out of the digest") {
  DevicesInfo d = probe_devices(roots_of("nodriver"), 5.0);
  REQUIRE(d.interfaces.status == FactStatus::ok);
  bool lo = false;
  for (const auto& i : d.interfaces.interfaces)
    if (i.name == "lo") lo = std::find(i.addresses.begin(), i.addresses.end(), "127.0.0.1") != i.addresses.end();
  CHECK(lo);

  RankRecord a;
  a.host = "node1";
  a.devices = d;
  a.devices.settings = {{"CUDA_VISIBLE_DEVICES", "0", "environment", SettingStatus::ok, "", {"0"}}};
  RankRecord b = a;
  b.devices.interfaces.interfaces.push_back({"veth1a2b3c", true, {"10.9.9.9"}});
  b.devices.settings[0].value = "1";
  b.devices.settings[0].selected = {"1"};
  CHECK(configuration_digest(a) == configuration_digest(b));
  RankRecord c = a;
  c.devices.settings[0].status = SettingStatus::too_many;
  CHECK(configuration_digest(a) != configuration_digest(c));

  nlohmann::json j = b;
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(j, &back, &error));
  CHECK(back.devices.interfaces.interfaces.back().name == "veth1a2b3c");
  CHECK(back.devices.interfaces.interfaces.back().running);
  CHECK(back.devices.settings[0].value == "1");
  CHECK(nlohmann::json(back) == j);
  j["devices"]["settings"][0]["status"] = "maybe";
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error == "unknown devices.settings[0].status \"maybe\"");
}

TEST_CASE("probe_rank checks the settings against the host it read") {
  ProbeOptions o = options_with({{"CUDA_VISIBLE_DEVICES", "0,1,2"}, {"NCCL_IB_HCA", "=mlx5_1"}});
  o.proc_root = kFixtures + "/h100/proc";
  o.sys_root = kFixtures + "/h100/sys";
  RankRecord r = probe_rank(o);
  REQUIRE(r.devices.settings.size() == 2);
  CHECK(r.devices.settings[0].variable == "NCCL_IB_HCA");
  CHECK(r.devices.settings[0].status == SettingStatus::ports_down);
  CHECK(r.devices.settings[1].variable == "CUDA_VISIBLE_DEVICES");
  CHECK(r.devices.settings[1].status == SettingStatus::too_many);
}

TEST_CASE("started early, finished late: an answer the child wrote in time is still taken") {
  DeviceRead read = start_device_read(roots_of("h100"));
  CHECK(read.started);
  ::usleep(300 * 1000);  // the rest of the probe took longer than the child's deadline
  DevicesInfo d = finish_device_read(&read, 0.2);
  CHECK(d.gpus.status == FactStatus::ok);
  CHECK(d.gpus.devices.size() == 2);
  CHECK(d.gpudirect.status == FactStatus::ok);  // read in the parent, meanwhile
  // A host without any device directory forks nothing.
  DeviceRead none = start_device_read(roots_of("nodriver"));
  CHECK_FALSE(none.started);
  CHECK(finish_device_read(&none, 1.0).rdma.status == FactStatus::absent);
}

TEST_CASE("a RoCE bond and the gpu-operator paste's lines: values as sysfs and the driver give them") {
  Scratch s;
  // NVIDIA/gpu-operator issue #1278 (a real excerpt): GPU Firmware N/A, Device Minor 4.
  s.write("proc/driver/nvidia/gpus/0000:03:00.0/information",
          "Model: \t\t NVIDIA A100-SXM4-80GB\nBus Location:    0000:03:00.0\nDevice Minor:    4\n"
          "GPU Firmware:    N/A\nGPU Excluded:    No\n");
  // leptonai/gpud's H100 snapshot (sys-class-infiniband-h100.0): a RoCE bond.
  const std::string bond = "sys/class/infiniband/mlx5_bond_0/";
  s.write(bond + "hca_type", "MT41692\n");
  s.write(bond + "fw_ver", "32.41.1000\n");
  s.write(bond + "ports/1/state", "4: ACTIVE\n");
  s.write(bond + "ports/1/phys_state", "5: LinkUp\n");
  s.write(bond + "ports/1/link_layer", "Ethernet\n");
  s.write(bond + "ports/1/rate", "200 Gb/sec (2X NDR)\n");
  s.write("sys/module/nv_peer_mem/.keep", "");
  DevicesInfo d = probe_devices(tree_roots(s.path("proc"), s.path("sys")), 5.0);
  REQUIRE(d.gpus.devices.size() == 1);
  CHECK(d.gpus.devices[0].model == "NVIDIA A100-SXM4-80GB");
  CHECK(d.gpus.devices[0].excluded == "no");
  REQUIRE(d.rdma.devices.size() == 1);
  CHECK(d.rdma.devices[0].name == "mlx5_bond_0");
  CHECK(d.rdma.devices[0].board_id.empty());  // no board_id file: empty, not guessed
  CHECK(d.rdma.devices[0].ports[0].link_layer == "Ethernet");
  CHECK(d.rdma.devices[0].ports[0].rate == "200 Gb/sec (2X NDR)");
  CHECK(d.gpudirect.module == "nv_peer_mem");  // Mellanox's older module counts too
  CHECK(d.nvswitch.status == FactStatus::absent);
  CHECK(check_ib_hca("mlx5_bond", d.rdma).status == SettingStatus::ok);
}

namespace {

const std::string kStandinNvml = std::string(DENPEX_STANDINS_DIR) + "/nvml/libnvidia-ml.so.1";

// The NVML stand-in reads its GPUs from the file DENPEX_STANDIN_NVML names; the device child
// inherits this process's environment.
struct NvmlGpusFile {
  explicit NvmlGpusFile(const Scratch& s, const std::string& lines) {
    ::setenv("DENPEX_STANDIN_NVML", s.write("nvml.txt", lines).c_str(), 1);
  }
  ~NvmlGpusFile() { ::unsetenv("DENPEX_STANDIN_NVML"); }
};

}  // namespace

TEST_CASE("NVML (the stand-in) in the device child: names, compute and MIG modes, a lost GPU") {
  Scratch s;
  NvmlGpusFile gpus(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\nNVIDIA H100 80GB HBM3\t3\t1\t0\n"
                       "NVIDIA H100 80GB HBM3\t0\t0\t1\nNVIDIA L4\t0\t-\t0\n");
  DeviceRoots roots = roots_of("h100");
  roots.nvml = kStandinNvml;
  DevicesInfo d = probe_devices(roots, 5.0);
  REQUIRE(d.nvml.status == FactStatus::ok);
  REQUIRE(d.nvml.gpus.size() == 4);
  CHECK(d.nvml.gpus[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(d.nvml.gpus[0].compute_mode == "default");
  CHECK(d.nvml.gpus[0].mig == "disabled");
  CHECK(d.nvml.gpus[1].compute_mode == "exclusive-process");
  CHECK(d.nvml.gpus[1].mig == "enabled");
  CHECK(d.nvml.gpus[2].lost);
  CHECK(d.nvml.gpus[3].mig.empty());  // NOT_SUPPORTED: no MIG on this GPU
  CHECK(d.gpus.status == FactStatus::ok);  // the driver's files read in the same child

  // Back through the record: NVML's library path is an identity, the rest is configuration.
  RankRecord a;
  a.devices = d;
  RankRecord b = a;
  b.devices.nvml.library = "/elsewhere/libnvidia-ml.so.1";
  CHECK(configuration_digest(a) == configuration_digest(b));
  b.devices.nvml.gpus[1].mig = "disabled";
  CHECK(configuration_digest(a) != configuration_digest(b));
  nlohmann::json j = a;
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(j, &back, &error));
  CHECK(nlohmann::json(back) == j);
}

TEST_CASE("NVML without the driver, or not loadable: unknown with why, never guessed") {
  DeviceRoots roots = roots_of("nodriver");
  roots.nvml = kStandinNvml;
  ::unsetenv("DENPEX_STANDIN_NVML");
  DevicesInfo d = probe_devices(roots, 5.0);
  CHECK(d.nvml.status == FactStatus::unknown);
  CHECK(d.nvml.why == "nvmlInit_v2: Driver Not Loaded (9)");
  roots.nvml = "/nonexistent/libnvidia-ml.so.1";
  d = probe_devices(roots, 5.0);
  CHECK(d.nvml.status == FactStatus::unknown);
  CHECK(d.nvml.why.find("could not be loaded") != std::string::npos);
  d = probe_devices(roots_of("nodriver"), 5.0);
  CHECK(d.nvml.status == FactStatus::unknown);
  CHECK(d.nvml.why == "libnvidia-ml.so.1 was not looked for");
}

TEST_CASE("probe_rank finds NVML the way the loader would (LD_LIBRARY_PATH)") {
  Scratch s;
  NvmlGpusFile gpus(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\n");
  ProbeOptions o = options_with({{"LD_LIBRARY_PATH", std::string(DENPEX_STANDINS_DIR) + "/nvml"}});
  o.nvml = true;
  o.proc_root = kFixtures + "/h100/proc";
  o.sys_root = kFixtures + "/h100/sys";
  RankRecord r = probe_rank(o);
  REQUIRE(r.devices.nvml.status == FactStatus::ok);
  CHECK(r.devices.nvml.gpus.size() == 1);
  o.env["LD_LIBRARY_PATH"] = "/nonexistent";
  r = probe_rank(o);
  CHECK(r.devices.nvml.why == "no libnvidia-ml.so.1 resolves in this environment");
}

TEST_CASE("NVML's health: ECC, pending retirements and remappings, NVLink, the fabric, bus ids") {
  Scratch s;
  // The H100 tree's GPUs are at 0000:0a:00.0 and 0000:18:00.0; NVML answers for the first only
  // (the second is lost), by NVML's 8-digit domain in upper case.
  NvmlGpusFile gpus(s,
                    "NVIDIA H100 80GB HBM3\t0\t0\t0\tbus=00000000:0A:00.0\tecc=1\tecc_unc=3\t"
                    "remap=1\tnvlink=17/18\tfabric=1\n"
                    "NVIDIA H100 80GB HBM3\t0\t0\t1\n");
  DeviceRoots roots = roots_of("h100");
  roots.nvml = kStandinNvml;
  DevicesInfo d = probe_devices(roots, 5.0);
  REQUIRE(d.nvml.status == FactStatus::ok);
  REQUIRE(d.nvml.gpus.size() == 2);
  const NvmlGpu& g = d.nvml.gpus[0];
  CHECK(g.bus_location == "0000:0a:00.0");
  CHECK(g.ecc == "enabled");
  CHECK(g.ecc_uncorrected == 3);
  CHECK(g.retired_pending.empty());  // NOT_SUPPORTED: remapped rows instead, as on Ampere+
  CHECK(g.remap_pending == "yes");
  CHECK(g.nvlink_links == 18);
  CHECK(g.nvlink_up == 17);
  CHECK(g.fabric == "not-started");
  CHECK(d.nvml.unmatched == std::vector<std::string>{"0000:18:00.0"});
  CHECK(d.nvswitch.fabric_manager == "not-ready");
  CHECK(d.nvswitch.fabric_manager_why == "GPU fabric registration not-started");

  // The fabric registered, or failed with a status; no fabric state at all stays unknown.
  NvmlGpusFile done(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\tfabric=3/0\n");
  CHECK(probe_devices(roots, 5.0).nvswitch.fabric_manager == "ready");
  NvmlGpusFile failed(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\tfabric=3/9\n");
  d = probe_devices(roots, 5.0);
  CHECK(d.nvswitch.fabric_manager == "not-ready");
  CHECK(d.nvswitch.fabric_manager_why == "GPU fabric registration failed: Driver Not Loaded (9)");
  NvmlGpusFile none(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\n");
  d = probe_devices(roots, 5.0);
  CHECK(d.nvswitch.fabric_manager == "unknown");
  CHECK(d.nvml.gpus[0].ecc_uncorrected == -1);
  CHECK(d.nvml.gpus[0].nvlink_links == 0);
  CHECK(d.nvml.unmatched.empty());  // no bus ids from NVML: nothing to match

  // Through the record and back; the bus location and the unmatched list stay out of the digest.
  RankRecord a;
  a.devices = probe_devices(roots, 5.0);
  a.devices.nvml.gpus[0].ecc_uncorrected = 3;
  a.devices.nvml.gpus[0].remap_failed = true;
  RankRecord b = a;
  b.devices.nvml.gpus[0].bus_location = "0000:99:00.0";
  b.devices.nvml.unmatched = {"0000:18:00.0"};
  CHECK(configuration_digest(a) == configuration_digest(b));
  nlohmann::json j = b;
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(j, &back, &error));
  CHECK(nlohmann::json(back) == j);
  j["devices"]["nvml"]["gpus"][0]["nvlink_up"] = 40;  // more up than it has links
  CHECK_FALSE(record_from_json(j, &back, &error));
  CHECK(error.find("\"devices.nvml.gpus[0].nvlink_up\" is not an integer in [0, 0]") !=
        std::string::npos);
}

TEST_CASE("on a GPU node the device child makes the driver's version call too: one fork") {
  using denpex_test::standin;
  Scratch s;
  NvmlGpusFile gpus(s, "NVIDIA H100 80GB HBM3\t0\t0\t0\n");
  ProbeOptions o =
      options_with({{"LD_LIBRARY_PATH", standin("cuda-550.54.15") + ":" + standin("nvml")}});
  o.nvml = true;
  o.proc_root = kFixtures + "/h100/proc";
  o.sys_root = kFixtures + "/h100/sys";
  RankRecord r = probe_rank(o);
  CHECK(r.cuda_driver.status == DriverStatus::ok);
  CHECK(r.cuda_driver.cuda_version == "12.4");  // the stand-in's answer, through the child
  CHECK(r.cuda_driver.cuda_version_from == "cuDriverGetVersion");
  CHECK(r.devices.gpus.status == FactStatus::ok);
  CHECK(r.devices.nvml.status == FactStatus::ok);

  // A driver call that never returns: the shared child is cut off at the deadline, and both
  // the driver and the facts it was reading say so (the facts it had read go with it).
  o.env["LD_LIBRARY_PATH"] = standin("cuda-hang") + ":" + standin("nvml");
  o.step_timeout = 0.5;
  const double t0 = monotonic_seconds();
  r = probe_rank(o);
  CHECK(monotonic_seconds() - t0 < 3.0);
  CHECK(r.cuda_driver.status == DriverStatus::error);
  CHECK(r.cuda_driver.error.find("did not return") != std::string::npos);
  CHECK(r.devices.gpus.status == FactStatus::unknown);
  CHECK(r.devices.gpus.why.find("and calling the driver's library after them") !=
        std::string::npos);
}
