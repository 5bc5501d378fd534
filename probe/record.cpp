#include "probe/record.h"

#include <climits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace denpex {

using nlohmann::json;

const char* to_string(NcclStatus s) {
  switch (s) {
    case NcclStatus::ok: return "ok";
    case NcclStatus::missing: return "missing";
    case NcclStatus::unloadable: return "unloadable";
    case NcclStatus::not_loaded: return "not-loaded";
  }
  return "missing";
}

const char* to_string(TorchStatus s) {
  switch (s) {
    case TorchStatus::ok: return "ok";
    case TorchStatus::missing: return "missing";
    case TorchStatus::error: return "error";
  }
  return "missing";
}

const char* to_string(FrameworkStatus s) {
  switch (s) {
    case FrameworkStatus::ok: return "ok";
    case FrameworkStatus::missing: return "missing";
    case FrameworkStatus::error: return "error";
  }
  return "missing";
}

const char* to_string(DriverStatus s) {
  switch (s) {
    case DriverStatus::ok: return "ok";
    case DriverStatus::missing: return "missing";
    case DriverStatus::stub: return "stub";
    case DriverStatus::error: return "error";
    case DriverStatus::version_unknown: return "version-unknown";
  }
  return "missing";
}

const char* to_string(PluginStatus s) {
  switch (s) {
    case PluginStatus::ok: return "ok";
    case PluginStatus::missing: return "missing";
    case PluginStatus::disabled: return "disabled";
    case PluginStatus::error: return "error";
  }
  return "missing";
}

const char* to_string(FactStatus s) {
  switch (s) {
    case FactStatus::ok: return "ok";
    case FactStatus::absent: return "absent";
    case FactStatus::unknown: return "unknown";
    case FactStatus::not_probed: return "not-probed";
  }
  return "unknown";
}

const char* to_string(SettingStatus s) {
  switch (s) {
    case SettingStatus::ok: return "ok";
    case SettingStatus::no_device: return "no-device";
    case SettingStatus::ports_down: return "ports-down";
    case SettingStatus::too_many: return "too-many";
    case SettingStatus::unreadable: return "unreadable";
    case SettingStatus::unknown: return "unknown";
  }
  return "unknown";
}

namespace {

// Empty strings and zeros are left out so records stay small; readers default them.
void put(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

json nccl_json(const NcclInfo& n) {
  json j = {{"status", to_string(n.status)}};
  put(j, "path", n.path);
  put(j, "version", n.version);
  if (n.version_code) j["version_code"] = n.version_code;
  put(j, "cuda_build", n.cuda_build);
  put(j, "method", n.method);
  put(j, "origin", n.origin);
  put(j, "static_version", n.static_version);
  put(j, "error", n.error);
  if (!n.depends_on_cpu.empty()) j["depends_on_cpu"] = n.depends_on_cpu;
  return j;
}

json plugin_json(const PluginInfo& p) {
  json j = {{"status", to_string(p.status)}};
  put(j, "requested", p.requested);
  put(j, "path", p.path);
  if (!p.api_versions.empty()) j["api_versions"] = p.api_versions;
  put(j, "error", p.error);
  return j;
}

json torch_nccl_json(const TorchNccl& n) {
  json j = json::object();
  put(j, "path", n.path);
  put(j, "version", n.version);
  put(j, "cuda_build", n.cuda_build);
  put(j, "linkage", n.linkage);
  return j;
}

// JAX and CuPy appear only where they are installed, so records of the many jobs without them
// are unchanged.
void put_framework(json& j, const char* key, const FrameworkInfo& f) {
  if (f.status == FrameworkStatus::missing) return;
  json o = {{"status", to_string(f.status)}};
  put(o, "version", f.version);
  put(o, "package", f.package);
  put(o, "path", f.path);
  put(o, "site_packages", f.site_packages);
  put(o, "nccl_rule", f.nccl_rule);
  if (!f.nccl.path.empty()) o["nccl"] = torch_nccl_json(f.nccl);
  put(o, "error", f.error);
  j[key] = std::move(o);
}

void put_nccl_wheels(json& j, const std::vector<NcclWheel>& wheels) {
  if (wheels.empty()) return;
  json a = json::array();
  for (const auto& w : wheels)
    a.push_back({{"project", w.project}, {"version", w.version},
                 {"site_packages", w.site_packages}, {"dist_info", w.dist_info},
                 {"owns_library", w.owns_library}});
  j["nccl_wheels"] = std::move(a);
}

// Interfaces are identities as a whole (names and addresses differ between hosts set up alike):
// only their status is in the configuration. Of a setting's check, what it is and how it fares
// are; its value (per rank) and what it selects (per host) are not.
// ECC, row remapping, NVLink and the fabric of one GPU: what is unknown is left out, so a
// record of a probe that did not read them reads back the same.
void put_nvml_health(json& e, const NvmlGpu& g) {
  put(e, "ecc", g.ecc);
  if (g.ecc_uncorrected >= 0) e["ecc_uncorrected"] = g.ecc_uncorrected;
  put(e, "retired_pending", g.retired_pending);
  put(e, "remap_pending", g.remap_pending);
  if (g.remap_failed) e["remap_failed"] = true;
  if (g.nvlink_links > 0) {
    e["nvlink_links"] = g.nvlink_links;
    e["nvlink_up"] = g.nvlink_up;
  }
  put(e, "fabric", g.fabric);
}

void put_nvml(json& j, const NvmlFacts& n, bool identities) {
  json o = {{"status", to_string(n.status)}};
  put(o, "why", n.why);
  if (identities) put(o, "library", n.library);
  if (n.status == FactStatus::ok) {
    json list = json::array();
    for (const auto& g : n.gpus) {
      json e = json::object();
      put(e, "name", g.name);
      put(e, "compute_mode", g.compute_mode);
      put(e, "mig", g.mig);
      if (g.lost) e["lost"] = true;
      if (identities) put(e, "bus_location", g.bus_location);
      put_nvml_health(e, g);
      list.push_back(std::move(e));
    }
    o["gpus"] = std::move(list);
    if (identities && !n.unmatched.empty()) o["unmatched"] = n.unmatched;
  }
  j["nvml"] = std::move(o);
}

void put_interfaces_and_settings(json& j, const DevicesInfo& d, bool identities) {
  json ifs = {{"status", to_string(d.interfaces.status)}};
  put(ifs, "why", d.interfaces.why);
  if (identities && d.interfaces.status == FactStatus::ok) {
    json list = json::array();
    for (const auto& i : d.interfaces.interfaces)
      list.push_back({{"name", i.name}, {"running", i.running}, {"addresses", i.addresses}});
    ifs["interfaces"] = std::move(list);
  }
  j["interfaces"] = std::move(ifs);
  json settings = json::array();
  for (const auto& c : d.settings) {
    json o = {{"variable", c.variable}, {"status", to_string(c.status)}};
    put(o, "source", c.source);
    put(o, "detail", c.detail);
    if (identities) {
      o["value"] = c.value;
      o["selected"] = c.selected;
    }
    settings.push_back(std::move(o));
  }
  j["settings"] = std::move(settings);
}

// Identities (bus locations, UUIDs, GUIDs) are left out of the configuration: with them every
// host would be a configuration of its own. Counts, models, firmware and port states stay in:
// they are what differs between hosts.
json devices_json(const DevicesInfo& d, bool identities) {
  auto head = [](FactStatus status, const std::string& why) {
    json o = {{"status", to_string(status)}};
    put(o, "why", why);
    return o;
  };
  json j = head(d.status, d.why);
  json g = head(d.gpus.status, d.gpus.why);
  if (d.gpus.status == FactStatus::ok) {
    json list = json::array();
    for (const auto& gpu : d.gpus.devices) {
      json o = json::object();
      if (identities) {
        put(o, "bus_location", gpu.bus_location);
        put(o, "uuid", gpu.uuid);
      }
      put(o, "model", gpu.model);
      put(o, "excluded", gpu.excluded);
      list.push_back(std::move(o));
    }
    g["devices"] = std::move(list);
  }
  j["gpus"] = std::move(g);
  json rdma = head(d.rdma.status, d.rdma.why);
  if (d.rdma.status == FactStatus::ok) {
    json list = json::array();
    for (const auto& dev : d.rdma.devices) {
      json o = {{"name", dev.name}};
      if (identities) put(o, "node_guid", dev.node_guid);
      put(o, "hca_type", dev.hca_type);
      put(o, "fw_ver", dev.fw_ver);
      put(o, "board_id", dev.board_id);
      json ports = json::array();
      for (const auto& p : dev.ports) {
        json po = {{"port", p.port}};
        put(po, "state", p.state);
        put(po, "phys_state", p.phys_state);
        put(po, "link_layer", p.link_layer);
        put(po, "rate", p.rate);
        ports.push_back(std::move(po));
      }
      o["ports"] = std::move(ports);
      list.push_back(std::move(o));
    }
    rdma["devices"] = std::move(list);
  }
  j["rdma"] = std::move(rdma);
  json gd = head(d.gpudirect.status, d.gpudirect.why);
  put(gd, "module", d.gpudirect.module);
  put(gd, "version", d.gpudirect.version);
  j["gpudirect"] = std::move(gd);
  json sw = head(d.nvswitch.status, d.nvswitch.why);
  if (d.nvswitch.status == FactStatus::ok) sw["count"] = d.nvswitch.count;
  put(sw, "fabric_manager", d.nvswitch.fabric_manager);
  put(sw, "fabric_manager_why", d.nvswitch.fabric_manager_why);
  j["nvswitch"] = std::move(sw);
  put_nvml(j, d.nvml, identities);
  put_interfaces_and_settings(j, d, identities);
  return j;
}

// The record's "torch" object.
json torch_json(const TorchInfo& torch) {
  json t = {{"status", to_string(torch.status)}};
  put(t, "version", torch.version);
  put(t, "cuda", torch.cuda);
  put(t, "path", torch.path);
  put(t, "site_packages", torch.site_packages);
  put(t, "libtorch_cuda", torch.libtorch_cuda);
  put(t, "build", torch.build);
  put(t, "error", torch.error);
  if (torch.status == TorchStatus::ok) {
    json tn = json::object();
    put(tn, "path", torch.nccl.path);
    put(tn, "version", torch.nccl.version);
    put(tn, "cuda_build", torch.nccl.cuda_build);
    put(tn, "linkage", torch.nccl.linkage);
    t["nccl"] = tn;
    if (!torch.bundled.path.empty()) {
      json tb = json::object();
      put(tb, "path", torch.bundled.path);
      put(tb, "version", torch.bundled.version);
      put(tb, "cuda_build", torch.bundled.cuda_build);
      put(tb, "linkage", torch.bundled.linkage);
      t["bundled_nccl"] = tb;
    }
    put(t, "nccl_requirement", torch.nccl_requirement);
    put(t, "nccl_requirement_met", torch.nccl_requirement_met);
  }
  return t;
}

// The record's "cuda_driver" object.
json cuda_driver_json(const CudaDriverInfo& driver) {
  json d = {{"status", to_string(driver.status)}};
  put(d, "cuda_version", driver.cuda_version);
  put(d, "cuda_version_from", driver.cuda_version_from);
  if (driver.forward_compat) d["forward_compat"] = true;
  if (driver.driver_api_version) d["driver_api_version"] = driver.driver_api_version;
  put(d, "library", driver.library);
  put(d, "library_version", driver.library_version);
  put(d, "kernel_module_version", driver.kernel_module_version);
  put(d, "error", driver.error);
  return d;
}

json body_json(const RankRecord& r, bool identities) {
  json j;
  put(j, "probe_version", r.probe_version);
  put(j, "arch", r.arch);
  put(j, "arch_source", r.arch_source);
  j["container"] = r.container;
  put(j, "mode", r.mode);
  put(j, "root", r.root);
  j["nccl"] = nccl_json(r.nccl);
  j["system_nccl"] = nccl_json(r.system_nccl);
  json cands = json::array();
  for (const auto& c : r.nccl_candidates) {
    json cj = {{"path", c.path}, {"version", c.version}, {"origin", c.origin}};
    put(cj, "cuda_build", c.cuda_build);
    cands.push_back(cj);
  }
  j["nccl_candidates"] = cands;

  j["torch"] = torch_json(r.torch);
  put_framework(j, "jax", r.jax);
  put_framework(j, "cupy", r.cupy);
  put_nccl_wheels(j, r.nccl_wheels);

  json abi = json::array();
  for (const auto& a : r.abi) {
    json one = {{"consumer", a.consumer},
                {"library", a.library},
                {"imported", a.imported},
                {"missing", a.missing}};
    put(one, "error", a.error);
    abi.push_back(std::move(one));
  }
  j["abi"] = abi;
  json checks = json::array();
  for (const auto& c : r.loader_checks) {
    json one = {{"name", c.name}, {"emulated", c.emulated}, {"loaded", c.loaded}};
    put(one, "error", c.error);
    checks.push_back(std::move(one));
  }
  j["loader_checks"] = checks;

  j["cuda_driver"] = cuda_driver_json(r.cuda_driver);

  j["net_plugin"] = plugin_json(r.net_plugin);
  j["tuner_plugin"] = plugin_json(r.tuner_plugin);
  j["profiler_plugin"] = plugin_json(r.profiler_plugin);
  j["nccl_env"] = r.nccl_env;
  j["nccl_conf"] = r.nccl_conf;
  j["untrusted_libraries"] = r.untrusted_libraries;
  j["foreign_libraries"] = r.foreign_libraries;
  j["devices"] = devices_json(r.devices, identities);
  j["probe_errors"] = r.probe_errors;
  return j;
}

// Readers: throw json exceptions on a wrong type; record_from_json turns them into an error
// string at the boundary so no exception leaves this file.
std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->get<std::string>();
}

// An integer field within [lo, hi]; `dflt` when absent. A float or an out-of-range number is
// an error, not a silent (or, for floats, undefined) conversion.
long long integer(const json& j, const char* key, long long dflt, long long lo, long long hi) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  bool ok = false;
  long long v = 0;
  if (it->is_number_unsigned()) {
    auto u = it->get<unsigned long long>();
    ok = u <= static_cast<unsigned long long>(hi);
    v = static_cast<long long>(u);
  } else if (it->is_number_integer()) {
    v = it->get<long long>();
    ok = true;
  }
  if (!ok || v < lo || v > hi)
    throw std::runtime_error(std::string("\"") + key + "\" is not an integer in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

template <typename Enum>
Enum enum_from(const json& j, const char* key, std::initializer_list<Enum> all, Enum dflt) {
  std::string s = str(j, key);
  if (s.empty()) return dflt;
  for (Enum e : all)
    if (s == to_string(e)) return e;
  throw std::runtime_error(std::string("unknown ") + key + " \"" + s + "\"");
}

std::vector<std::string> string_list(const json& j, const char* key);

NcclInfo nccl_from(const json& j) {
  NcclInfo n;
  if (!j.is_object()) throw std::runtime_error("\"nccl\" is not an object");
  n.status = enum_from(j, "status",
                       {NcclStatus::ok, NcclStatus::missing, NcclStatus::unloadable,
                        NcclStatus::not_loaded},
                       NcclStatus::missing);
  n.path = str(j, "path");
  n.version = str(j, "version");
  n.version_code = static_cast<int>(integer(j, "version_code", 0, 0, INT_MAX));
  n.cuda_build = str(j, "cuda_build");
  n.method = str(j, "method");
  n.origin = str(j, "origin");
  n.static_version = str(j, "static_version");
  n.error = str(j, "error");
  n.depends_on_cpu = string_list(j, "depends_on_cpu");
  return n;
}

PluginInfo plugin_from(const json& j) {
  PluginInfo p;
  if (!j.is_object()) return p;
  p.status = enum_from(j, "status",
                       {PluginStatus::ok, PluginStatus::missing, PluginStatus::disabled,
                        PluginStatus::error},
                       PluginStatus::missing);
  p.requested = str(j, "requested");
  p.path = str(j, "path");
  if (j.contains("api_versions")) p.api_versions = j.at("api_versions").get<std::vector<std::string>>();
  p.error = str(j, "error");
  return p;
}

std::map<std::string, std::string> string_map(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->get<std::map<std::string, std::string>>();
}

std::vector<std::string> string_list(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->get<std::vector<std::string>>();
}

TorchNccl torch_nccl_from(const json& j) {
  return {str(j, "path"), str(j, "version"), str(j, "cuda_build"), str(j, "linkage")};
}

FrameworkInfo framework_from(const json& j, const char* key) {
  FrameworkInfo f;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return f;
  const json& o = *it;
  f.status = enum_from(o, "status",
                       {FrameworkStatus::ok, FrameworkStatus::missing, FrameworkStatus::error},
                       FrameworkStatus::missing);
  f.version = str(o, "version");
  f.package = str(o, "package");
  f.path = str(o, "path");
  f.site_packages = str(o, "site_packages");
  f.nccl_rule = str(o, "nccl_rule");
  if (o.contains("nccl") && o.at("nccl").is_object()) f.nccl = torch_nccl_from(o.at("nccl"));
  f.error = str(o, "error");
  return f;
}

std::vector<NcclWheel> nccl_wheels_from(const json& j) {
  std::vector<NcclWheel> out;
  auto it = j.find("nccl_wheels");
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& w : *it)
    out.push_back({str(w, "project"), str(w, "version"), str(w, "site_packages"),
                   str(w, "dist_info"), str(w, "owns_library")});
  return out;
}

// The devices object is read strictly: a wrong type is refused with the key's path, never
// taken as a default, since a forged "count" must not pass as a uniform cluster.
const json* member(const json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string dstr(const json& o, const char* key, const std::string& where) {
  const json* v = member(o, key);
  if (!v) return "";
  if (!v->is_string())
    throw std::runtime_error("\"" + where + "." + key + "\" is not a string");
  return v->get<std::string>();
}

const json& dobject(const json& v, const std::string& where) {
  if (!v.is_object()) throw std::runtime_error("\"" + where + "\" is not an object");
  return v;
}

const json* darray(const json& o, const char* key, const std::string& where) {
  const json* v = member(o, key);
  if (v && !v->is_array())
    throw std::runtime_error("\"" + where + "." + key + "\" is not an array");
  return v;
}

FactStatus fact_status(const json& o, const std::string& where) {
  std::string s = dstr(o, "status", where);
  if (s.empty()) return FactStatus::unknown;
  for (FactStatus f :
       {FactStatus::ok, FactStatus::absent, FactStatus::unknown, FactStatus::not_probed})
    if (s == to_string(f)) return f;
  throw std::runtime_error("unknown " + where + ".status \"" + s + "\"");
}

bool dbool(const json& o, const char* key, const std::string& where) {
  const json* v = member(o, key);
  if (!v) return false;
  if (!v->is_boolean()) throw std::runtime_error("\"" + where + "." + key + "\" is not a boolean");
  return v->get<bool>();
}

std::vector<std::string> dstrings(const json& o, const char* key, const std::string& where) {
  std::vector<std::string> out;
  if (const json* list = darray(o, key, where)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (!list->at(i).is_string())
        throw std::runtime_error("\"" + where + "." + key + "[" + std::to_string(i) +
                                 "]\" is not a string");
      out.push_back(list->at(i).get<std::string>());
    }
  }
  return out;
}

SettingStatus setting_status(const json& o, const std::string& where) {
  const std::string s = dstr(o, "status", where);
  for (SettingStatus v : {SettingStatus::ok, SettingStatus::no_device, SettingStatus::ports_down,
                          SettingStatus::too_many, SettingStatus::unreadable,
                          SettingStatus::unknown})
    if (s == to_string(v)) return v;
  throw std::runtime_error("unknown " + where + ".status \"" + s + "\"");
}

// NVLink has at most NVML_NVLINK_MAX_LINKS (36) links per GPU today; a count is bounded well
// past that, and a forged negative count refused.
constexpr long long kMaxNvlinks = 1024;

// integer() with the key's path in the refusal, as the devices object's other refusals give it.
long long dinteger(const json& o, const char* key, long long dflt, long long lo, long long hi,
                   const std::string& where) {
  if (!o.contains(key) || o.at(key).is_null()) return dflt;
  const json& v = o.at(key);
  const bool in_range = (v.is_number_unsigned() && v.get<unsigned long long>() <=
                                                       static_cast<unsigned long long>(hi)) ||
                        (v.is_number_integer() && !v.is_number_unsigned() &&
                         v.get<long long>() >= lo && v.get<long long>() <= hi);
  if (!in_range)
    throw std::runtime_error("\"" + where + "." + key + "\" is not an integer in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return integer(o, key, dflt, lo, hi);
}

NvmlGpu nvml_gpu_from(const json& e, const std::string& ew) {
  NvmlGpu g;
  g.name = dstr(e, "name", ew);
  g.compute_mode = dstr(e, "compute_mode", ew);
  g.mig = dstr(e, "mig", ew);
  g.lost = dbool(e, "lost", ew);
  g.bus_location = dstr(e, "bus_location", ew);
  g.ecc = dstr(e, "ecc", ew);
  g.ecc_uncorrected = dinteger(e, "ecc_uncorrected", -1, -1, LLONG_MAX, ew);
  g.retired_pending = dstr(e, "retired_pending", ew);
  g.remap_pending = dstr(e, "remap_pending", ew);
  g.remap_failed = dbool(e, "remap_failed", ew);
  g.nvlink_links = static_cast<int>(dinteger(e, "nvlink_links", 0, 0, kMaxNvlinks, ew));
  g.nvlink_up = static_cast<int>(dinteger(e, "nvlink_up", 0, 0, g.nvlink_links, ew));
  g.fabric = dstr(e, "fabric", ew);
  return g;
}

void nvml_from(const json& j, DevicesInfo* d) {
  const json* n = member(j, "nvml");
  if (!n) return;
  const std::string w = "devices.nvml";
  dobject(*n, w);
  d->nvml.status = fact_status(*n, w);
  d->nvml.why = dstr(*n, "why", w);
  d->nvml.library = dstr(*n, "library", w);
  if (const json* list = darray(*n, "gpus", w)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string ew = w + ".gpus[" + std::to_string(i) + "]";
      const json& e = dobject(list->at(i), ew);
      d->nvml.gpus.push_back(nvml_gpu_from(e, ew));
    }
  }
  d->nvml.unmatched = dstrings(*n, "unmatched", w);
}

void interfaces_and_settings_from(const json& j, DevicesInfo* d) {
  nvml_from(j, d);
  if (const json* f = member(j, "interfaces")) {
    const std::string w = "devices.interfaces";
    dobject(*f, w);
    d->interfaces.status = fact_status(*f, w);
    d->interfaces.why = dstr(*f, "why", w);
    if (const json* list = darray(*f, "interfaces", w)) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string ew = w + ".interfaces[" + std::to_string(i) + "]";
        const json& e = dobject(list->at(i), ew);
        d->interfaces.interfaces.push_back(
            {dstr(e, "name", ew), dbool(e, "running", ew), dstrings(e, "addresses", ew)});
      }
    }
  }
  if (const json* list = darray(j, "settings", "devices")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string ew = "devices.settings[" + std::to_string(i) + "]";
      const json& e = dobject(list->at(i), ew);
      d->settings.push_back({dstr(e, "variable", ew), dstr(e, "value", ew),
                             dstr(e, "source", ew), setting_status(e, ew), dstr(e, "detail", ew),
                             dstrings(e, "selected", ew)});
    }
  }
}

DevicesInfo devices_from(const json& j) {
  DevicesInfo d;
  const std::string w = "devices";
  dobject(j, w);
  d.status = fact_status(j, w);
  d.why = dstr(j, "why", w);
  if (const json* g = member(j, "gpus")) {
    const std::string gw = w + ".gpus";
    dobject(*g, gw);
    d.gpus.status = fact_status(*g, gw);
    d.gpus.why = dstr(*g, "why", gw);
    if (const json* list = darray(*g, "devices", gw)) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string ew = gw + ".devices[" + std::to_string(i) + "]";
        const json& e = dobject(list->at(i), ew);
        d.gpus.devices.push_back({dstr(e, "bus_location", ew), dstr(e, "uuid", ew),
                                  dstr(e, "model", ew), dstr(e, "excluded", ew)});
      }
    }
  }
  if (const json* r = member(j, "rdma")) {
    const std::string rw = w + ".rdma";
    dobject(*r, rw);
    d.rdma.status = fact_status(*r, rw);
    d.rdma.why = dstr(*r, "why", rw);
    if (const json* list = darray(*r, "devices", rw)) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const std::string ew = rw + ".devices[" + std::to_string(i) + "]";
        const json& e = dobject(list->at(i), ew);
        RdmaDevice dev{dstr(e, "name", ew), dstr(e, "node_guid", ew), dstr(e, "hca_type", ew),
                       dstr(e, "fw_ver", ew), dstr(e, "board_id", ew), {}};
        if (const json* ports = darray(e, "ports", ew)) {
          for (std::size_t k = 0; k < ports->size(); ++k) {
            const std::string pw = ew + ".ports[" + std::to_string(k) + "]";
            const json& p = dobject(ports->at(k), pw);
            dev.ports.push_back({dstr(p, "port", pw), dstr(p, "state", pw),
                                 dstr(p, "phys_state", pw), dstr(p, "link_layer", pw),
                                 dstr(p, "rate", pw)});
          }
        }
        d.rdma.devices.push_back(std::move(dev));
      }
    }
  }
  if (const json* g = member(j, "gpudirect")) {
    const std::string gw = w + ".gpudirect";
    dobject(*g, gw);
    d.gpudirect.status = fact_status(*g, gw);
    d.gpudirect.why = dstr(*g, "why", gw);
    d.gpudirect.module = dstr(*g, "module", gw);
    d.gpudirect.version = dstr(*g, "version", gw);
  }
  if (const json* s = member(j, "nvswitch")) {
    const std::string sw = w + ".nvswitch";
    dobject(*s, sw);
    d.nvswitch.status = fact_status(*s, sw);
    d.nvswitch.why = dstr(*s, "why", sw);
    d.nvswitch.count = static_cast<int>(integer(*s, "count", 0, 0, 1 << 20));
    d.nvswitch.fabric_manager = dstr(*s, "fabric_manager", sw);
    if (d.nvswitch.fabric_manager.empty()) d.nvswitch.fabric_manager = "unknown";
    d.nvswitch.fabric_manager_why = dstr(*s, "fabric_manager_why", sw);
  }
  interfaces_and_settings_from(j, &d);
  return d;
}

}  // namespace

void devices_to_json(json& j, const DevicesInfo& d) { j = devices_json(d, true); }

bool devices_from_json(const json& j, DevicesInfo* out, std::string* error) {
  try {
    *out = devices_from(j);
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

void to_json(json& j, const RankRecord& r) {
  j = body_json(r, true);
  j["rank"] = r.rank;
  j["host"] = r.host;
  j["pid"] = r.pid;
  if (r.probed_by >= 0) j["probed_by"] = r.probed_by;
}

namespace {

// The record's "torch" object (its schema: probe/record.h).
TorchInfo torch_from(const json& t) {
  TorchInfo torch;
  torch.status = enum_from(t, "status", {TorchStatus::ok, TorchStatus::missing, TorchStatus::error},
                           TorchStatus::missing);
  torch.version = str(t, "version");
  torch.cuda = str(t, "cuda");
  torch.path = str(t, "path");
  torch.site_packages = str(t, "site_packages");
  torch.libtorch_cuda = str(t, "libtorch_cuda");
  torch.build = str(t, "build");
  torch.error = str(t, "error");
  if (t.contains("nccl") && t.at("nccl").is_object()) torch.nccl = torch_nccl_from(t.at("nccl"));
  if (t.contains("bundled_nccl") && t.at("bundled_nccl").is_object())
    torch.bundled = torch_nccl_from(t.at("bundled_nccl"));
  torch.nccl_requirement = str(t, "nccl_requirement");
  torch.nccl_requirement_met = str(t, "nccl_requirement_met");
  return torch;
}

// The record's "cuda_driver" object.
CudaDriverInfo cuda_driver_from(const json& d) {
  CudaDriverInfo driver;
  driver.status = enum_from(
      d, "status",
      {DriverStatus::ok, DriverStatus::missing, DriverStatus::stub, DriverStatus::error,
       DriverStatus::version_unknown},
      DriverStatus::missing);
  driver.cuda_version = str(d, "cuda_version");
  driver.cuda_version_from = str(d, "cuda_version_from");
  driver.forward_compat = d.value("forward_compat", false);
  driver.driver_api_version = static_cast<int>(integer(d, "driver_api_version", 0, 0, INT_MAX));
  driver.library = str(d, "library");
  driver.library_version = str(d, "library_version");
  driver.kernel_module_version = str(d, "kernel_module_version");
  driver.error = str(d, "error");
  return driver;
}

}  // namespace

bool record_from_json(const json& j, RankRecord* out, std::string* error) {
  try {
    if (!j.is_object()) {
      *error = "not a JSON object";
      return false;
    }
    for (const char* key : {"rank", "host", "nccl"}) {
      if (!j.contains(key)) {
        *error = std::string("missing required key \"") + key + "\"";
        return false;
      }
    }
    RankRecord r;
    // Required, so null is no default either: a record that says nothing of its rank would
    // be counted as rank 0.
    if (j.at("rank").is_null()) throw std::runtime_error("\"rank\" is not an integer in [0, " + std::to_string(INT_MAX) + "]");
    r.rank = static_cast<int>(integer(j, "rank", 0, 0, INT_MAX));
    r.host = j.at("host").get<std::string>();
    r.pid = static_cast<long>(integer(j, "pid", 0, 0, LONG_MAX));
    r.probed_by = static_cast<int>(integer(j, "probed_by", -1, -1, INT_MAX));
    r.probe_version = str(j, "probe_version");
    r.arch = str(j, "arch");
    r.arch_source = str(j, "arch_source");
    r.container = j.value("container", false);
    r.mode = str(j, "mode");
    r.root = str(j, "root");
    r.nccl = nccl_from(j.at("nccl"));
    if (j.contains("system_nccl")) r.system_nccl = nccl_from(j.at("system_nccl"));
    if (j.contains("nccl_candidates")) {
      for (const auto& c : j.at("nccl_candidates")) {
        r.nccl_candidates.push_back(
            {str(c, "path"), str(c, "version"), str(c, "cuda_build"), str(c, "origin")});
      }
    }
    if (j.contains("torch") && j.at("torch").is_object()) r.torch = torch_from(j.at("torch"));
    r.jax = framework_from(j, "jax");
    r.cupy = framework_from(j, "cupy");
    r.nccl_wheels = nccl_wheels_from(j);
    if (j.contains("abi")) {
      for (const auto& a : j.at("abi")) {
        r.abi.push_back({str(a, "consumer"), str(a, "library"), string_list(a, "imported"),
                         string_list(a, "missing"), str(a, "error")});
      }
    }
    if (j.contains("loader_checks") && j.at("loader_checks").is_array()) {
      for (const auto& c : j.at("loader_checks"))
        r.loader_checks.push_back(
            {str(c, "name"), str(c, "emulated"), str(c, "loaded"), str(c, "error")});
    }
    if (j.contains("cuda_driver") && j.at("cuda_driver").is_object())
      r.cuda_driver = cuda_driver_from(j.at("cuda_driver"));
    if (j.contains("net_plugin")) r.net_plugin = plugin_from(j.at("net_plugin"));
    if (j.contains("tuner_plugin")) r.tuner_plugin = plugin_from(j.at("tuner_plugin"));
    if (j.contains("profiler_plugin")) r.profiler_plugin = plugin_from(j.at("profiler_plugin"));
    r.nccl_env = string_map(j, "nccl_env");
    r.nccl_conf = string_map(j, "nccl_conf");
    r.untrusted_libraries = string_list(j, "untrusted_libraries");
    r.foreign_libraries = string_list(j, "foreign_libraries");
    if (j.contains("devices")) {
      r.devices = devices_from(j.at("devices"));
    } else {
      r.devices.why = "not in the record (written by a probe that did not read devices)";
    }
    r.probe_errors = string_list(j, "probe_errors");
    *out = std::move(r);
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

// error_handler_t::replace: strings read from the system (library paths, ELF strings, NCCL_*
// values) need not be UTF-8, and the default handler throws on them, which would abort the
// probe on a directory named with a Latin-1 byte.
std::string configuration_json(const RankRecord& r) {
  return body_json(r, false).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

unsigned long long configuration_digest(const RankRecord& r) {
  unsigned long long h = 1469598103934665603ULL;
  for (unsigned char c : configuration_json(r)) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string nccl_version_from_code(int code) {
  if (code <= 0) return "";
  // NCCL 2.9 changed NCCL_VERSION_CODE from major*1000+minor*100+patch to major*10000+minor*100+
  // patch (nccl.h.in, NCCL_VERSION macro); PyTorch's decoder splits on the same 2900 boundary.
  int base = code < 2900 ? 1000 : 10000;
  int major = code / base;
  int minor = (code % base) / 100;
  int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace denpex
