#include "probe/device_probe.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "probe/fs_view.h"
#include "probe/isolated_call.h"
#include "probe/library_probe.h"
#include "probe/monotonic_clock.h"
#include "probe/net_interfaces.h"
#include "probe/nvml_probe.h"
#include "probe/text.h"
#include "probe/version_call.h"

namespace denpex {

namespace {

// Bounds: a host has at most a few dozen GPUs, HCAs and ports; a listing past these is cut and
// says so. Every attribute file here is a line; 4 KB is one page, what sysfs ever returns.
constexpr size_t kMaxGpus = 256;
constexpr size_t kMaxRdmaDevices = 64;
constexpr size_t kMaxPorts = 16;
constexpr size_t kMaxNvSwitches = 256;
constexpr size_t kAttrBytes = 4096;

constexpr const char* kGpusDir = "/driver/nvidia/gpus";         // under the proc root
constexpr const char* kDriverDir = "/driver/nvidia";
constexpr const char* kNvSwitchDir = "/driver/nvidia-nvswitch/devices";
constexpr const char* kRdmaDir = "/class/infiniband";            // under the sys root

// The lines of a GPU's `information` file the record keeps (the NVIDIA driver's nv-procfs.c,
// nv_procfs_read_gpu_info). Other lines (IRQ, Video BIOS, DMA, Device Minor, GPU Firmware) are
// read past.
struct InfoLine {
  const char* key;
  std::string GpuDevice::*field;
};
const InfoLine kInfoLines[] = {
    {"Model", &GpuDevice::model},
    {"GPU UUID", &GpuDevice::uuid},
    {"GPU Excluded", &GpuDevice::excluded},
};

// The peer-memory modules that give NCCL GPUDirect RDMA, in the order they are looked for:
// the driver's own, then Mellanox's older out-of-tree one (both register the client "nv_mem").
const char* const kPeerMemModules[] = {"nvidia_peermem", "nv_peer_mem"};

// The files of one RDMA device and of each of its ports (Linux's
// Documentation/ABI/stable/sysfs-class-infiniband).
struct RdmaAttr {
  const char* file;
  std::string RdmaDevice::*field;
};
const RdmaAttr kRdmaAttrs[] = {
    {"node_guid", &RdmaDevice::node_guid},
    {"hca_type", &RdmaDevice::hca_type},
    {"fw_ver", &RdmaDevice::fw_ver},
    {"board_id", &RdmaDevice::board_id},
};
struct PortAttr {
  const char* file;
  std::string RdmaPort::*field;
  bool numbered;  // "<number>: <NAME>"
};
const PortAttr kPortAttrs[] = {
    {"state", &RdmaPort::state, true},
    {"phys_state", &RdmaPort::phys_state, true},
    {"link_layer", &RdmaPort::link_layer, false},
    {"rate", &RdmaPort::rate, false},
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_dir(const FsView& fs, const std::string& view_path) {
  Resolved r = resolve(fs, view_path);
  if (r.status != ResolveStatus::ok) return false;
  struct stat st {};
  return ::stat(host_path(fs, r.path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Entries of a directory reached chroot-style (sysfs's class entries are links), sorted.
std::vector<std::string> list_sorted(const FsView& fs, const std::string& view_dir, size_t limit,
                                     bool* truncated) {
  Resolved r = resolve(fs, view_dir);
  if (r.status != ResolveStatus::ok) return {};
  std::vector<std::string> names = list_dir(fs, r.path, limit, truncated);
  std::sort(names.begin(), names.end());
  return names;
}

std::string read_line(const FsView& fs, const std::string& view_path) {
  std::string text;
  if (!read_small_file(fs, view_path, kAttrBytes, &text, nullptr)) return "";
  return trim(text.substr(0, text.find('\n')));
}

std::string cut_note(bool truncated, size_t limit) {
  return truncated ? fmt::format("listing cut at {} entries", limit) : "";
}

GpuFacts read_gpus(const FsView& proc) {
  GpuFacts g;
  bool truncated = false;
  for (const auto& name : list_sorted(proc, kGpusDir, kMaxGpus, &truncated)) {
    std::string text;
    read_small_file(proc, join_path(join_path(kGpusDir, name), "information"), kAttrBytes, &text,
                    nullptr);
    g.devices.push_back(parse_gpu_information(name, text));
  }
  // Counted by bus location: one GPU is one PCI function, whatever its directory is called.
  std::sort(g.devices.begin(), g.devices.end(),
            [](const GpuDevice& a, const GpuDevice& b) { return a.bus_location < b.bus_location; });
  g.devices.erase(std::unique(g.devices.begin(), g.devices.end(),
                              [](const GpuDevice& a, const GpuDevice& b) {
                                return a.bus_location == b.bus_location;
                              }),
                  g.devices.end());
  g.status = FactStatus::ok;
  g.why = cut_note(truncated, kMaxGpus);
  return g;
}

RdmaFacts read_rdma(const FsView& sys) {
  RdmaFacts f;
  bool truncated = false;
  for (const auto& name : list_sorted(sys, kRdmaDir, kMaxRdmaDevices, &truncated)) {
    RdmaDevice dev;
    dev.name = name;
    const std::string dir = join_path(kRdmaDir, name);
    for (const auto& a : kRdmaAttrs) dev.*a.field = read_line(sys, join_path(dir, a.file));
    bool ports_cut = false;
    for (const auto& port : list_sorted(sys, join_path(dir, "ports"), kMaxPorts, &ports_cut)) {
      RdmaPort p;
      p.port = port;
      const std::string pdir = join_path(join_path(dir, "ports"), port);
      for (const auto& a : kPortAttrs) {
        std::string v = read_line(sys, join_path(pdir, a.file));
        p.*a.field = a.numbered ? sysfs_state_name(v) : v;
      }
      dev.ports.push_back(std::move(p));
    }
    std::sort(dev.ports.begin(), dev.ports.end(), [](const RdmaPort& a, const RdmaPort& b) {
      return std::strtol(a.port.c_str(), nullptr, 10) < std::strtol(b.port.c_str(), nullptr, 10);
    });
    f.devices.push_back(std::move(dev));
  }
  f.status = FactStatus::ok;
  f.why = cut_note(truncated, kMaxRdmaDevices);
  return f;
}

NvSwitchFacts read_nvswitch(const FsView& proc) {
  NvSwitchFacts s;
  bool truncated = false;
  s.count = static_cast<int>(list_sorted(proc, kNvSwitchDir, kMaxNvSwitches, &truncated).size());
  s.status = FactStatus::ok;
  s.why = cut_note(truncated, kMaxNvSwitches);
  return s;
}

GpuDirectFacts read_gpudirect(const FsView& sys) {
  GpuDirectFacts g;
  if (!is_dir(sys, "/module")) {
    g.why = fmt::format("no {}: the loaded modules cannot be seen", host_path(sys, "/module"));
    return g;
  }
  for (const char* name : kPeerMemModules) {
    const std::string dir = join_path("/module", name);
    if (!is_dir(sys, dir)) continue;
    g.status = FactStatus::ok;
    g.module = name;
    g.version = read_line(sys, join_path(dir, "version"));
    return g;
  }
  g.status = FactStatus::absent;
  g.why = fmt::format("neither nvidia_peermem nor nv_peer_mem is loaded (no {} or {})",
                      host_path(sys, "/module/nvidia_peermem"),
                      host_path(sys, "/module/nv_peer_mem"));
  return g;
}

void mark_unknown(FactStatus* status, std::string* why, const std::string& reason) {
  *status = FactStatus::unknown;
  *why = reason;
}

}  // namespace

std::string sysfs_state_name(const std::string& text) {
  std::string t = trim(text.substr(0, text.find('\n')));
  size_t colon = t.find(':');
  if (colon == std::string::npos || colon == 0) return t;
  for (size_t i = 0; i < colon; ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return t;
  return trim(t.substr(colon + 1));
}

GpuDevice parse_gpu_information(const std::string& dir_name, const std::string& text) {
  GpuDevice g;
  g.bus_location = lower(dir_name);
  for (const auto& line : split_lines(text)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    for (const auto& l : kInfoLines)
      if (key == l.key) g.*l.field = value;
  }
  // Placeholders the driver prints when it cannot tell ("GPU-????????-..."): unknown, not a value.
  if (g.uuid.find('?') != std::string::npos) g.uuid.clear();
  g.excluded = lower(g.excluded);
  if (g.excluded != "yes" && g.excluded != "no") g.excluded.clear();
  return g;
}

DevicesInfo devices_not_probed() {
  DevicesInfo d;
  const std::string why = "devices are checked on the nodes, not in an image";
  d.status = FactStatus::not_probed;
  d.why = why;
  d.gpus.status = d.rdma.status = d.gpudirect.status = d.nvswitch.status = FactStatus::not_probed;
  d.interfaces.status = d.nvml.status = FactStatus::not_probed;
  d.gpus.why = d.rdma.why = d.gpudirect.why = d.nvswitch.why = d.interfaces.why = d.nvml.why = why;
  return d;
}

namespace {

// Which device directories exist: only these are read, in the child.
struct Present {
  bool gpus = false, rdma = false, nvswitch = false;
  std::string nvml;    // NVML's file, "" for none
  std::string driver;  // the driver's library to call, "" for none
  const char* driver_symbol = "";
  bool any() const { return gpus || rdma || nvswitch || !nvml.empty() || !driver.empty(); }
};

// Why each fact whose directory is missing is absent or unknown.
void explain_missing(const FsView& proc, const FsView& sys, const Present& p, DevicesInfo* d) {
  if (!p.gpus) {
    if (is_dir(proc, kDriverDir))
      d->gpus.why = fmt::format("{} is there but {} is not", host_path(proc, kDriverDir),
                                host_path(proc, kGpusDir));
    else if (is_dir(sys, "/module/nvidia"))
      d->gpus.why = fmt::format("the nvidia module is loaded but {} is not visible (a container "
                                "that masks it?)",
                                host_path(proc, kDriverDir));
    else
      d->gpus.why = fmt::format("no {}: the nvidia kernel module is not loaded, or {} is masked",
                                host_path(proc, kDriverDir), host_path(proc, "/driver"));
  }
  if (!p.rdma) {
    if (is_dir(sys, "/class")) {
      d->rdma.status = FactStatus::absent;
      d->rdma.why = fmt::format("no {}: no RDMA driver is loaded", host_path(sys, kRdmaDir));
    } else {
      d->rdma.why = fmt::format("no {}: sysfs cannot be read", host_path(sys, "/class"));
    }
  }
  if (!p.nvswitch) {
    if (p.gpus) {
      d->nvswitch.status = FactStatus::absent;
      d->nvswitch.why = fmt::format("the driver lists no NVSwitch ({} is not there)",
                                    host_path(proc, kNvSwitchDir));
    } else {
      d->nvswitch.why = "the NVIDIA driver's files cannot be read";
    }
  }
  d->nvswitch.fabric_manager = "unknown";
  d->nvswitch.fabric_manager_why = "NVML, which tells the GPUs' fabric state, was not read";
}

// What the child reads: the present directories, as the record's JSON, after the driver's
// version call when it makes one: "<bytes of the call's answer>\n", that answer
// (library_probe.h encode_version_call), then the JSON. The devices are read first: a driver
// library that crashes the child then costs no more than it would alone.
std::string read_present(const FsView& proc, const FsView& sys, const Present& p) {
  DevicesInfo c;
  if (p.gpus) c.gpus = read_gpus(proc);
  if (p.rdma) c.rdma = read_rdma(sys);
  if (p.nvswitch) c.nvswitch = read_nvswitch(proc);
  if (!p.nvml.empty()) c.nvml = read_nvml(p.nvml);
  nlohmann::json j;
  devices_to_json(j, c);
  std::string json = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (p.driver.empty()) return json;
  const std::string call = encode_version_call(call_version_function(p.driver, p.driver_symbol));
  return std::to_string(call.size()) + "\n" + call + json;
}

// The child's output apart: the driver's answer (when it was asked) and the devices' JSON.
// False when the framing is not the child's.
bool split_answer(const std::string& output, bool driver, std::string* call, std::string* json) {
  if (!driver) {
    *json = output;
    return true;
  }
  const size_t eol = output.find('\n');
  if (eol == std::string::npos || eol == 0 || eol > 20) return false;
  const std::string digits = output.substr(0, eol);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long long bytes = std::stoull(digits);
  if (bytes > output.size() - eol - 1) return false;
  *call = output.substr(eol + 1, bytes);
  *json = output.substr(eol + 1 + bytes);
  return true;
}

// The child's answer into *d; a child that failed or timed out makes each fact it was to read
// unknown with the reason.
void take_child_answer(const IsolatedResult& res, const Present& p, double timeout_seconds,
                       DevicesInfo* d, IsolatedResult* driver_answer) {
  DevicesInfo child;
  std::string error, call, json;
  bool ok = res.status == IsolatedStatus::ok;
  *driver_answer = res;  // a child that failed fails the driver's call too
  if (ok && !split_answer(res.output, !p.driver.empty(), &call, &json)) {
    ok = false;
    error = "gave an answer that is not the child's";
    driver_answer->status = IsolatedStatus::failed;
    driver_answer->error = error;
  } else if (ok) {
    driver_answer->output = call;
    nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
    ok = !j.is_discarded() && devices_from_json(j, &child, &error);
    if (!ok && error.empty()) error = "gave an answer that is not JSON";
  } else {
    error = describe(res, timeout_seconds);
  }
  const std::string reason =
      fmt::format("reading the device files{} {}",
                  p.driver.empty() ? "" : " (and calling the driver's library after them)", error);
  if (p.gpus) {
    if (ok) d->gpus = child.gpus;
    else mark_unknown(&d->gpus.status, &d->gpus.why, reason);
  }
  if (p.rdma) {
    if (ok) d->rdma = child.rdma;
    else mark_unknown(&d->rdma.status, &d->rdma.why, reason);
  }
  if (!p.nvml.empty()) {
    if (ok) d->nvml = child.nvml;
    else mark_unknown(&d->nvml.status, &d->nvml.why, reason);
  }
  if (p.nvswitch) {
    if (ok) {
      d->nvswitch.status = child.nvswitch.status;
      d->nvswitch.why = child.nvswitch.why;
      d->nvswitch.count = child.nvswitch.count;
    } else {
      mark_unknown(&d->nvswitch.status, &d->nvswitch.why, reason);
    }
  }
}

// The fabric manager's work as NVML's GPUs show it (record.h NvSwitchFacts). A GPU lost or
// without a fabric state takes no part.
void fabric_manager_from_nvml(DevicesInfo* d) {
  if (d->nvml.status != FactStatus::ok) {
    d->nvswitch.fabric_manager_why = "NVML could not be read: " + d->nvml.why;
    return;
  }
  std::set<std::string> states;
  for (const auto& g : d->nvml.gpus)
    if (!g.lost && !g.fabric.empty()) states.insert(g.fabric);
  if (states.empty()) {
    d->nvswitch.fabric_manager_why =
        "NVML gives no GPU a fabric state (GPUs before Hopper, or no NVLink fabric)";
    return;
  }
  if (states.size() == 1 && *states.begin() == "completed") {
    d->nvswitch.fabric_manager = "ready";
    d->nvswitch.fabric_manager_why.clear();
    return;
  }
  states.erase("completed");
  d->nvswitch.fabric_manager = "not-ready";
  d->nvswitch.fabric_manager_why =
      fmt::format("GPU fabric registration {}", fmt::join(states, ", "));
}

// The driver's GPUs that no GPU NVML answered for is at, by bus location; none when NVML gave
// no bus locations (an older NVML, or none answered).
std::vector<std::string> unmatched_gpus(const GpuFacts& gpus, const NvmlFacts& nvml) {
  std::set<std::string> seen;
  for (const auto& g : nvml.gpus)
    if (!g.bus_location.empty()) seen.insert(g.bus_location);
  std::vector<std::string> out;
  if (seen.empty() || gpus.status != FactStatus::ok) return out;
  for (const auto& g : gpus.devices)
    if (!seen.count(g.bus_location)) out.push_back(g.bus_location);
  return out;
}

constexpr size_t kChildAnswerBytes = 1024 * 1024;

// The child has `timeout` from its start; when the rest of the probe took longer than that, an
// answer already written is still collected (a short grace), a hung child is killed then.
double answer_deadline(double start, double timeout) {
  return std::max(start + timeout, monotonic_seconds() + 0.05);
}

}  // namespace

DeviceRead start_device_read(const DeviceRoots& roots) {
  DeviceRead r;
  const FsView proc{roots.proc};
  const FsView sys{roots.sys};
  r.facts.status = FactStatus::ok;
  Present p;
  p.gpus = is_dir(proc, kGpusDir);
  p.rdma = is_dir(sys, kRdmaDir);
  p.nvswitch = is_dir(proc, kNvSwitchDir);
  explain_missing(proc, sys, p, &r.facts);
  p.nvml = roots.nvml;
  if (p.nvml.empty()) r.facts.nvml.why = roots.nvml_why;
  r.gpus = p.gpus;
  r.rdma = p.rdma;
  r.nvswitch = p.nvswitch;
  r.nvml = p.nvml;
  p.driver = roots.driver;
  p.driver_symbol = roots.driver_symbol;
  r.driver = p.driver;
  r.driver_symbol = p.driver_symbol;
  if (p.any()) {
    r.child = start_isolated([proc, sys, p]() { return read_present(proc, sys, p); });
    r.started = true;
  }
  // Files that take no reference in a driver and ask no device: read here, meanwhile.
  r.facts.gpudirect = read_gpudirect(sys);
  r.facts.interfaces = read_interfaces();
  return r;
}

DevicesInfo finish_device_read(DeviceRead* read, double timeout_seconds) {
  if (read->started) {
    read->started = false;
    IsolatedResult res;
    if (read->child.pid < 0) res.error = read->child.error;
    else res = wait_isolated(&read->child, answer_deadline(read->start, timeout_seconds),
                             kChildAnswerBytes);
    take_child_answer(res,
                      Present{read->gpus, read->rdma, read->nvswitch, read->nvml, read->driver,
                              read->driver_symbol},
                      timeout_seconds, &read->facts, &read->driver_answer);
  }
  fabric_manager_from_nvml(&read->facts);
  read->facts.nvml.unmatched = unmatched_gpus(read->facts.gpus, read->facts.nvml);
  return read->facts;
}

DevicesInfo probe_devices(const DeviceRoots& roots, double timeout_seconds) {
  DeviceRead r = start_device_read(roots);
  return finish_device_read(&r, timeout_seconds);
}

}  // namespace denpex
