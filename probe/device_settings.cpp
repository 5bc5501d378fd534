#include "probe/device_settings.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probe/nccl_device_list.h"
#include "probe/text.h"

namespace denpex {

namespace {

DeviceSettingCheck check_of(const char* variable, const std::string& value) {
  DeviceSettingCheck c;
  c.variable = variable;
  c.value = value;
  c.source = "environment";
  return c;
}

void unknown(DeviceSettingCheck* c, const std::string& what, const std::string& why) {
  c->status = SettingStatus::unknown;
  c->detail = fmt::format("{} could not be read{}", what, why.empty() ? "" : " (" + why + ")");
}

// NCCL_SOCKET_FAMILY: AF_INET keeps IPv4 addresses only, AF_INET6 IPv6 only.
bool family_ok(const std::string& address, const std::string& family) {
  const bool v6 = address.find(':') != std::string::npos;
  if (family == "AF_INET") return !v6;
  if (family == "AF_INET6") return v6;
  return true;
}

// Whether NCCL's socket code can use the interface: running, with an address of the family,
// the IPv6 loopback left out.
bool usable_interface(const NetInterface& i, const std::string& family) {
  if (!i.running) return false;
  return std::any_of(i.addresses.begin(), i.addresses.end(), [&](const std::string& a) {
    return a != "::1" && family_ok(a, family);
  });
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool digits(const std::string& s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

}  // namespace

DeviceSettingCheck check_socket_ifname(const std::string& value, const std::string& family,
                                       const InterfaceFacts& facts) {
  DeviceSettingCheck c = check_of("NCCL_SOCKET_IFNAME", value);
  // NCCL ignores a value of one character and picks interfaces itself.
  if (value.size() <= 1) {
    c.status = SettingStatus::ok;
    return c;
  }
  if (facts.status != FactStatus::ok) {
    unknown(&c, "the host's interfaces", facts.why);
    return c;
  }
  const NcclDeviceList list = parse_nccl_device_list(value, false);
  std::vector<std::string> named_unusable;
  for (const auto& i : facts.interfaces) {
    if (!nccl_list_selects(list, i.name, -1)) continue;
    if (usable_interface(i, family)) c.selected.push_back(i.name);
    else named_unusable.push_back(i.name);
  }
  if (!c.selected.empty()) {
    c.status = SettingStatus::ok;
    return c;
  }
  c.status = SettingStatus::no_device;
  // The same words on every host that fails alike: names of this host's interfaces would make
  // each such host a configuration of its own, so only the kind of failure is said.
  c.detail = named_unusable.empty()
                 ? "selects no interface on this host: NCCL's bootstrap finds no socket interface"
                 : "selects only interfaces that are down or have no address: NCCL's bootstrap "
                   "finds no socket interface";
  return c;
}

DeviceSettingCheck check_ib_hca(const std::string& value, const RdmaFacts& facts) {
  DeviceSettingCheck c = check_of("NCCL_IB_HCA", value);
  if (facts.status == FactStatus::unknown || facts.status == FactStatus::not_probed) {
    unknown(&c, "the host's RDMA devices", facts.why);
    return c;
  }
  const NcclDeviceList list = parse_nccl_device_list(value, true);
  bool named_any = false;
  for (const auto& d : facts.devices) {
    for (const auto& p : d.ports) {
      const int port = digits(p.port) ? std::stoi(p.port) : -1;
      if (!nccl_list_selects(list, d.name, port)) continue;
      named_any = true;
      const bool link_ok = p.link_layer == "InfiniBand" || p.link_layer == "Ethernet";
      if (p.state == "ACTIVE" && link_ok) c.selected.push_back(d.name + ":" + p.port);
    }
  }
  if (!c.selected.empty()) {
    c.status = SettingStatus::ok;
  } else if (named_any) {
    c.status = SettingStatus::ports_down;
    c.detail = "selects only ports that are not ACTIVE here: NCCL finds no IB device and falls "
               "back to sockets";
  } else {
    c.status = SettingStatus::no_device;
    c.detail = facts.devices.empty()
                   ? "this host has no RDMA device: NCCL finds no IB device and falls back to "
                     "sockets"
                   : "selects no RDMA device of this host: NCCL finds no IB device and falls "
                     "back to sockets";
  }
  return c;
}

DeviceSettingCheck check_cuda_visible_devices(const std::string& value, const GpuFacts& facts) {
  DeviceSettingCheck c = check_of("CUDA_VISIBLE_DEVICES", value);
  if (facts.status != FactStatus::ok) {
    unknown(&c, "the host's GPUs", facts.why);
    return c;
  }
  std::vector<const GpuDevice*> usable;
  for (const auto& g : facts.devices)
    if (g.excluded != "yes") usable.push_back(&g);
  const bool all_uuids = std::all_of(usable.begin(), usable.end(),
                                     [](const GpuDevice* g) { return !g->uuid.empty(); });
  std::set<std::string> named;
  std::vector<std::string> missing;
  bool unsure = false;
  // CUDA reads entries in order and stops at the first it cannot use: what follows is ignored.
  for (const std::string& raw : split_nonempty(value, ',')) {
    const std::string e = trim(raw);
    if (digits(e)) {
      if (std::stoul(e) >= usable.size()) missing.push_back(e);
      else named.insert(e);
    } else if (e.rfind("GPU-", 0) == 0) {
      auto hit = std::find_if(usable.begin(), usable.end(), [&](const GpuDevice* g) {
        return g->uuid.compare(0, e.size(), e) == 0;
      });
      if (hit != usable.end()) named.insert((*hit)->uuid);
      else if (all_uuids) missing.push_back(e);
      else unsure = true;
    } else {
      unsure = e.rfind("MIG-", 0) == 0;  // MIG devices are not read: not judged
      break;
    }
    if (!missing.empty()) break;
  }
  c.selected.assign(named.begin(), named.end());
  if (!missing.empty()) {
    c.status = SettingStatus::too_many;
    c.detail = fmt::format("names GPU {}, beyond the {} usable GPUs this host has: CUDA ignores "
                           "it and every entry after it",
                           missing.front(), usable.size());
  } else {
    c.status = unsure ? SettingStatus::unknown : SettingStatus::ok;
    if (unsure) c.detail = "names GPUs by UUID or MIG id where the driver does not list them all";
  }
  return c;
}

DeviceSettingCheck check_nccl_net(const std::string& value, const RdmaFacts& rdma,
                                  const std::string& ib_hca, bool ib_disabled, bool net_plugin) {
  DeviceSettingCheck c = check_of("NCCL_NET", value);
  const std::string name = lower_ascii(trim(value));
  // NCCL compares the name with each network's own, ignoring case; its own are "IB" and "Socket".
  if (name == "socket") {
    c.status = SettingStatus::ok;
    return c;
  }
  if (name != "ib") {
    if (net_plugin) {
      unknown(&c, "the net plugin's network name", "it is read only when NCCL loads the plugin");
    } else {
      c.status = SettingStatus::no_device;
      c.detail = "names a network that neither NCCL (IB, Socket) nor a net plugin provides here: "
                 "NCCL fails to initialise any network";
    }
    return c;
  }
  if (ib_disabled) {
    c.status = SettingStatus::no_device;
    c.detail = "names IB where NCCL_IB_DISABLE turns it off: NCCL fails to initialise any network";
    return c;
  }
  // IB is there when a port NCCL would take is ACTIVE: NCCL_IB_HCA's selection when set.
  DeviceSettingCheck ports = check_ib_hca(ib_hca, rdma);
  c.status = ports.status == SettingStatus::ports_down ? SettingStatus::no_device : ports.status;
  c.selected = ports.selected;
  if (c.status == SettingStatus::unknown) c.detail = ports.detail;
  else if (c.status != SettingStatus::ok)
    c.detail = "names IB where no RDMA port NCCL would take is ACTIVE: NCCL fails to initialise "
               "any network";
  return c;
}

DeviceSettingCheck check_topo_file(const std::string& value, bool live) {
  DeviceSettingCheck c = check_of("NCCL_TOPO_FILE", value);
  if (!live) {
    unknown(&c, "the file", "it is checked on the nodes, not in an image");
    return c;
  }
  // Non-blocking, as NCCL's fopen would block on a FIFO; only a regular file is XML NCCL reads.
  const int fd = ::open(value.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat st {};
  const int open_errno = errno;
  const bool regular = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (fd >= 0) ::close(fd);
  if (regular) {
    c.status = SettingStatus::ok;
    c.selected = {value};
    return c;
  }
  c.status = SettingStatus::unreadable;
  const char* what = fd >= 0                ? "is not a regular file"
                     : open_errno == ENOENT ? "does not exist on this host"
                                            : "cannot be read on this host";
  c.detail = fmt::format("{}: NCCL ignores it (an INFO line only) and detects the topology "
                         "itself",
                         what);
  return c;
}

DeviceSettingCheck check_nvidia_visible_devices(const std::string& value, const GpuFacts& facts,
                                                bool container) {
  DeviceSettingCheck c = check_of("NVIDIA_VISIBLE_DEVICES", value);
  const std::string v = lower_ascii(trim(value));
  if (v == "all") {
    c.status = SettingStatus::ok;
    return c;
  }
  // "none": the driver but no GPU; "void" or empty: the runtime does not act at all.
  if (v == "none" || v == "void" || v.empty()) {
    if (!container) {
      unknown(&c, "its effect", "only the container runtime reads it, and this is no container");
      return c;
    }
    c.status = SettingStatus::no_device;
    c.detail = "gives this container no GPU: CUDA finds no device";
    return c;
  }
  // In a container the runtime has applied it already (it refuses to start one with a GPU it
  // does not know), and its indices are the host's, not the container's.
  if (container) {
    c.status = SettingStatus::ok;
    return c;
  }
  c = check_cuda_visible_devices(value, facts);
  c.variable = "NVIDIA_VISIBLE_DEVICES";
  if (c.status == SettingStatus::too_many)
    c.detail = fmt::format("names a GPU beyond the {} usable GPUs this host has: the container "
                           "runtime refuses to start a container with it",
                           std::count_if(facts.devices.begin(), facts.devices.end(),
                                         [](const GpuDevice& g) { return g.excluded != "yes"; }));
  return c;
}

namespace {

// The environment wins; nccl.conf fills in what it does not set (NCCL's order).
struct Settings {
  const std::map<std::string, std::string>& env;
  const std::map<std::string, std::string>& conf;
  bool get(const char* name, std::string* value, std::string* source) const {
    if (auto e = env.find(name); e != env.end()) {
      *value = e->second;
      *source = "environment";
      return true;
    }
    if (auto f = conf.find(name); f != conf.end()) {
      *value = f->second;
      *source = "nccl.conf";
      return true;
    }
    return false;
  }
  std::string value(const char* name) const {
    std::string v, ignored;
    return get(name, &v, &ignored) ? v : "";
  }
};

void add(std::vector<DeviceSettingCheck>* out, DeviceSettingCheck c, const std::string& source) {
  c.source = source;
  out->push_back(std::move(c));
}

// An image's setting (--root): what it names is on the nodes, where it is checked.
DeviceSettingCheck on_the_nodes(const char* variable, const std::string& value) {
  DeviceSettingCheck c = check_of(variable, value);
  unknown(&c, "the devices it names", "it is checked on the nodes, not in an image");
  return c;
}

}  // namespace

std::vector<DeviceSettingCheck> check_device_settings(
    const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& nccl_conf, const DevicesInfo& devices,
    const SettingHost& host) {
  std::vector<DeviceSettingCheck> out;
  const Settings s{env, nccl_conf};
  const bool live = devices.status != FactStatus::not_probed;
  std::string value, source;
  if (s.get("NCCL_SOCKET_IFNAME", &value, &source))
    add(&out, check_socket_ifname(value, s.value("NCCL_SOCKET_FAMILY"), devices.interfaces),
        source);
  // With the IB transport off, NCCL_IB_HCA names nothing NCCL will look for.
  const std::string ib_disable = s.value("NCCL_IB_DISABLE");
  const bool ib_disabled = !ib_disable.empty() && ib_disable != "0";
  const std::string net = s.value("NCCL_NET");
  const bool ib_off = ib_disabled || lower_ascii(net) == "socket";
  if (!ib_off && s.get("NCCL_IB_HCA", &value, &source))
    add(&out, check_ib_hca(value, devices.rdma), source);
  if (s.get("NCCL_NET", &value, &source))
    add(&out,
        live ? check_nccl_net(value, devices.rdma, s.value("NCCL_IB_HCA"), ib_disabled,
                              host.net_plugin)
             : on_the_nodes("NCCL_NET", value),
        source);
  if (s.get("NCCL_TOPO_FILE", &value, &source)) add(&out, check_topo_file(value, live), source);
  if (auto e = env.find("CUDA_VISIBLE_DEVICES"); e != env.end())
    out.push_back(check_cuda_visible_devices(e->second, devices.gpus));
  // The runtime reads the process's environment only: nccl.conf does not set it.
  if (auto e = env.find("NVIDIA_VISIBLE_DEVICES"); e != env.end())
    out.push_back(live ? check_nvidia_visible_devices(e->second, devices.gpus, host.container)
                       : on_the_nodes("NVIDIA_VISIBLE_DEVICES", e->second));
  return out;
}

}  // namespace denpex
