#include "compare/device_setting_rules.h"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "compare/device_rules.h"
#include "compare/finding_codes.h"
#include "compare/fold.h"

namespace denpex {

namespace {

constexpr std::size_t kHostsChars = 120;

struct SettingRule {
  const char* variable;
  FindingCode code;
  Severity severity;
  const char* fix;
};

const SettingRule kRules[] = {
    {"NCCL_SOCKET_IFNAME", FindingCode::nccl_socket_ifname_unmatched, Severity::error,
     "set NCCL_SOCKET_IFNAME to a prefix every host's interface for the job's network has "
     "(`ip -br addr` on each host; `=name` for an exact name, `^name` to leave one out), or unset "
     "it and let NCCL choose"},
    {"NCCL_IB_HCA", FindingCode::nccl_ib_hca_unmatched, Severity::warning,
     "name HCAs and ports that exist and are ACTIVE on every host (`ibstat`, `ibv_devinfo`; "
     "`=mlx5_0:1` for an exact name and port), or bring the named ports up"},
    {"CUDA_VISIBLE_DEVICES", FindingCode::cuda_visible_devices_beyond, Severity::error,
     "name only GPUs the host has (`nvidia-smi -L`), or place fewer ranks per host; a GPU that "
     "is missing from the host needs a reset or a reboot"},
    {"NVIDIA_VISIBLE_DEVICES", FindingCode::container_visible_devices_unmatched, Severity::error,
     "set NVIDIA_VISIBLE_DEVICES to `all`, or to indices or UUIDs the host has (`nvidia-smi -L`); "
     "`none` and `void` give a container no GPU (a base image or a pod spec may set them)"},
    {"NCCL_NET", FindingCode::nccl_net_unavailable, Severity::error,
     "name a network the host has (`IB` needs an ACTIVE RDMA port, see `ibstat`; `Socket` always "
     "works; a plugin's name needs its net plugin installed), or unset NCCL_NET and let NCCL "
     "choose"},
    {"NCCL_TOPO_FILE", FindingCode::nccl_topo_file_unreadable, Severity::warning,
     "put the topology file on every host at the path named (readable by the job's user), or "
     "unset NCCL_TOPO_FILE"},
};

const SettingRule* rule_of(const std::string& variable) {
  for (const auto& r : kRules)
    if (variable == r.variable) return &r;
  return nullptr;
}

bool fails(SettingStatus s) {
  return s == SettingStatus::no_device || s == SettingStatus::ports_down ||
         s == SettingStatus::too_many || s == SettingStatus::unreadable;
}

struct Failing {
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::string value, source;
};

}  // namespace

void device_setting_rules(const std::vector<ConfigGroup>& groups, std::vector<Finding>* out) {
  // (variable, status, detail) -> who; variable -> hosts where it selects devices.
  std::map<std::tuple<std::string, SettingStatus, std::string>, Failing> failing;
  std::map<std::string, std::set<std::string>> working;
  for (const auto& g : groups) {
    for (const auto& c : g.record.devices.settings) {
      if (!rule_of(c.variable)) continue;
      if (c.status == SettingStatus::ok) working[c.variable].insert(g.hosts.begin(), g.hosts.end());
      if (!fails(c.status)) continue;
      Failing& f = failing[{c.variable, c.status, c.detail}];
      f.ranks.insert(g.ranks.begin(), g.ranks.end());
      f.hosts.insert(g.hosts.begin(), g.hosts.end());
      if (f.value.empty()) {
        f.value = c.value;
        f.source = c.source;
      }
    }
  }
  for (const auto& [key, who] : failing) {
    const auto& [variable, status, detail] = key;
    const SettingRule& rule = *rule_of(variable);
    Finding f;
    f.code = rule.code;
    f.severity = rule.severity;
    f.ranks.assign(who.ranks.begin(), who.ranks.end());
    f.hosts.assign(who.hosts.begin(), who.hosts.end());
    f.found = fmt::format("{}={} ({}): {}", variable, who.value, who.source, detail);
    f.expected = fmt::format("{} naming {} the host has", variable,
                             variable == std::string("NCCL_TOPO_FILE") ? "a file" : "devices");
    std::vector<std::string> others;
    for (const auto& h : working[variable])
      if (!who.hosts.count(h)) others.push_back(h);
    const std::string where =
        others.empty() ? ""
                       : fmt::format(", where it {} on {}",
                                     status == SettingStatus::unreadable ? "is read"
                                                                         : "selects devices",
                                     abbreviate_list(fold_hosts(others), kHostsChars));
    f.message = fmt::format("{}: {}={} {}{}", rank_phrase(f.ranks, f.hosts), variable, who.value,
                            detail, where);
    f.fix = rule.fix;
    f.verify = device_verify(f.hosts, 1, {variable});
    out->push_back(std::move(f));
  }
}

}  // namespace denpex
