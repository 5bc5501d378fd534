#include "compare/baseline.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/atomic_file.h"
#include "compare/bounded_json.h"
#include "compare/facts.h"
#include "compare/device_rules.h"
#include "compare/nccl_env.h"

namespace denpex {

using nlohmann::json;

const char* to_string(BaselineStatus s) {
  switch (s) {
    case BaselineStatus::ok: return "ok";
    case BaselineStatus::missing_file: return "missing-file";
    case BaselineStatus::unreadable: return "unreadable";
    case BaselineStatus::too_large: return "too-large";
    case BaselineStatus::malformed: return "malformed";
    case BaselineStatus::wrong_schema: return "wrong-schema";
  }
  return "malformed";
}

Baseline baseline_from_group(const ConfigGroup& group) {
  const RankRecord& r = group.record;
  Baseline b;
  if (nccl_found(r.nccl)) {
    b.nccl_version = nccl_version_of(r.nccl);
    b.nccl_cuda_build = r.nccl.cuda_build;
  }
  if (r.torch.status == TorchStatus::ok) b.torch_version = r.torch.version;
  if (r.cuda_driver.status == DriverStatus::ok) {
    b.driver_library_version = r.cuda_driver.library_version;
    b.driver_cuda_version = r.cuda_driver.cuda_version;
  }
  b.pin_net_plugin = true;
  b.net_plugin_status = to_string(r.net_plugin.status);
  b.net_plugin_api_versions = r.net_plugin.api_versions;
  b.pin_nccl_env = true;
  b.nccl_env = effective_nccl_settings(r);
  b.devices = device_pins(group);
  b.written_by = r.probe_version.empty() ? "denpex-probe" : "denpex-probe " + r.probe_version;
  return b;
}

namespace {

json baseline_json(const Baseline& b) {
  json j = {{"schema", kBaselineSchema}};
  if (!b.written_by.empty()) j["written_by"] = b.written_by;
  json nccl = json::object();
  if (!b.nccl_version.empty()) nccl["version"] = b.nccl_version;
  if (!b.nccl_cuda_build.empty()) nccl["cuda_build"] = b.nccl_cuda_build;
  j["nccl"] = nccl;
  json torch = json::object();
  if (!b.torch_version.empty()) torch["version"] = b.torch_version;
  j["torch"] = torch;
  json driver = json::object();
  if (!b.driver_library_version.empty()) driver["library_version"] = b.driver_library_version;
  if (!b.driver_cuda_version.empty()) driver["cuda_version"] = b.driver_cuda_version;
  j["cuda_driver"] = driver;
  if (b.pin_net_plugin) {
    j["net_plugin"] = {{"status", b.net_plugin_status},
                       {"api_versions", b.net_plugin_api_versions}};
  }
  if (b.pin_nccl_env) j["nccl_env"] = b.nccl_env;
  if (!b.devices.empty()) j["devices"] = b.devices;
  return j;
}

// Reads an optional string member; throws json::type_error on a wrong type, which
// parse_baseline turns into a "malformed" status.
std::string opt_str(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  return it->get<std::string>();
}

const json& opt_obj(const json& j, const char* key, const json& empty) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return empty;
  if (!it->is_object()) throw std::runtime_error(fmt::format("\"{}\" is not an object", key));
  return *it;
}

BaselineLoad fail(BaselineStatus status, const std::string& source, const std::string& what) {
  BaselineLoad load;
  load.status = status;
  load.error = fmt::format("baseline {}: {}", source, what);
  return load;
}

}  // namespace

bool write_baseline(const std::string& path, const Baseline& baseline, std::string* error) {
  std::string text;
  try {
    text = baseline_json(baseline).dump(2) + "\n";
  } catch (const std::exception& e) {  // invalid UTF-8 in a value
    *error = fmt::format("baseline {}: cannot encode: {}", path, e.what());
    return false;
  }
  if (!write_file_atomically(path, text, error)) {
    *error = "baseline " + *error;
    return false;
  }
  return true;
}

BaselineLoad parse_baseline(const std::string& text, const std::string& source) {
  // Depth-capped: a valid but deeply nested document ({"schema": [[[...]]]} with 100,000
  // levels) would parse and then overflow the stack in the recursive dump() of the error
  // message below. A baseline is 3 levels deep.
  BoundedJson parsed = parse_bounded_json(text);
  if (parsed.status == BoundedJsonStatus::too_deep) {
    return fail(BaselineStatus::malformed, source,
                fmt::format("nested more than {} levels deep: not a baseline", kMaxJsonDepth));
  }
  if (parsed.status != BoundedJsonStatus::ok)
    return fail(BaselineStatus::malformed, source, "not valid JSON");
  const json& j = parsed.value;
  if (!j.is_object()) return fail(BaselineStatus::malformed, source, "not a JSON object");
  auto schema = j.find("schema");
  if (schema == j.end()) {
    return fail(BaselineStatus::wrong_schema, source,
                fmt::format("no \"schema\" key (expected \"{}\")", kBaselineSchema));
  }
  if (!schema->is_string() || schema->get<std::string>() != kBaselineSchema) {
    return fail(BaselineStatus::wrong_schema, source,
                fmt::format("schema {} is not supported (this denpex-probe reads \"{}\")",
                            schema->dump(), kBaselineSchema));
  }
  try {
    const json empty = json::object();
    BaselineLoad load;
    Baseline& b = load.baseline;
    b.source = source;
    b.written_by = opt_str(j, "written_by");
    const json& nccl = opt_obj(j, "nccl", empty);
    b.nccl_version = opt_str(nccl, "version");
    b.nccl_cuda_build = opt_str(nccl, "cuda_build");
    b.torch_version = opt_str(opt_obj(j, "torch", empty), "version");
    const json& driver = opt_obj(j, "cuda_driver", empty);
    b.driver_library_version = opt_str(driver, "library_version");
    b.driver_cuda_version = opt_str(driver, "cuda_version");
    if (j.contains("net_plugin") && !j.at("net_plugin").is_null()) {
      const json& plugin = opt_obj(j, "net_plugin", empty);
      b.pin_net_plugin = true;
      b.net_plugin_status = opt_str(plugin, "status");
      if (b.net_plugin_status.empty()) b.net_plugin_status = "missing";
      if (plugin.contains("api_versions")) {
        b.net_plugin_api_versions = plugin.at("api_versions").get<std::vector<std::string>>();
      }
      std::sort(b.net_plugin_api_versions.begin(), b.net_plugin_api_versions.end());
    }
    if (j.contains("nccl_env") && !j.at("nccl_env").is_null()) {
      b.pin_nccl_env = true;
      b.nccl_env = j.at("nccl_env").get<std::map<std::string, std::string>>();
    }
    if (j.contains("devices") && !j.at("devices").is_null())
      b.devices = opt_obj(j, "devices", empty).get<std::map<std::string, std::string>>();
    load.status = BaselineStatus::ok;
    return load;
  } catch (const std::exception& e) {
    return fail(BaselineStatus::malformed, source, e.what());
  }
}

BaselineLoad load_baseline(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return fail(BaselineStatus::missing_file, path, "no such file");
    }
    return fail(BaselineStatus::unreadable, path, std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail(BaselineStatus::unreadable, path, "is a directory");
  if (st.st_size > kBaselineMaxBytes) {
    return fail(BaselineStatus::too_large, path,
                fmt::format("{} bytes, larger than the {} byte limit for a baseline",
                            static_cast<long long>(st.st_size), kBaselineMaxBytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(BaselineStatus::unreadable, path, std::strerror(errno));
  // Bounded read: the file may have grown (or be a FIFO) since stat.
  std::string text;
  char chunk[64 * 1024];
  while (in && text.size() <= static_cast<std::size_t>(kBaselineMaxBytes)) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return fail(BaselineStatus::unreadable, path, "read error");
  if (text.size() > static_cast<std::size_t>(kBaselineMaxBytes)) {
    return fail(BaselineStatus::too_large, path,
                fmt::format("larger than the {} byte limit for a baseline", kBaselineMaxBytes));
  }
  return parse_baseline(text, path);
}

}  // namespace denpex
