#include "compare/device_rules.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/finding_codes.h"
#include "compare/fold.h"
#include "compare/shell_command.h"
#include "compare/vote.h"

namespace denpex {

namespace {

// Host lists in messages stay one line at any scale; the finding's JSON keeps every host.
constexpr std::size_t kHostsChars = 120;

std::string hosts_text(const std::vector<std::string>& hosts) {
  return abbreviate_list(fold_hosts(hosts), kHostsChars);
}

const char* has(const std::vector<std::string>& hosts) { return hosts.size() == 1 ? "has" : "have"; }

bool is_image(const std::string& host) { return host.rfind(kImageHostPrefix, 0) == 0; }

// The odd hosts and the first host of the reference, for a verify line.
std::vector<std::string> odd_and_reference(const std::vector<std::string>& odd,
                                           const std::vector<std::string>& reference) {
  std::vector<std::string> out = odd;
  if (!reference.empty()) out.push_back(reference.front());
  return out;
}

// How a host rule talks about its fact.
struct HostRule {
  FindingCode code;
  Severity severity;
  const char* topic;  // "the GPU model", for "no majority for the GPU model"
  std::function<std::string(const std::string& value)> describe;  // "4 usable GPUs"
  std::string fix;
  // Whether a minority value is reported against the reference (all are when empty); a rule
  // that reports only some kinds of difference also skips ties.
  std::function<bool(const std::string& reference, const std::string& value)> report = nullptr;
};

// The findings of one vote by hosts: each minority value named with the hosts that hold it and
// the hosts it differs from; a tie names every value.
void judge_hosts(const HostRule& rule, const VoteResult& result, std::vector<Finding>* out) {
  if (result.values.size() < 2) return;
  if (result.reference >= 0) {
    const VoteValue& ref = result.values[static_cast<std::size_t>(result.reference)];
    for (std::size_t i = 0; i < result.values.size(); ++i) {
      if (static_cast<int>(i) == result.reference) continue;
      const VoteValue& v = result.values[i];
      if (rule.report && !rule.report(ref.value, v.value)) continue;
      Finding f;
      f.code = rule.code;
      f.severity = rule.severity;
      f.ranks = v.ranks;
      f.hosts = v.hosts;
      f.expected = rule.describe(ref.value);
      f.found = rule.describe(v.value);
      f.fix = rule.fix;
      f.verify = device_verify(odd_and_reference(v.hosts, ref.hosts), 1);
      f.message = fmt::format("{} {} {}, where {} {} {}", hosts_text(v.hosts), has(v.hosts),
                              f.found, hosts_text(ref.hosts), has(ref.hosts), f.expected);
      out->push_back(std::move(f));
    }
    return;
  }
  if (rule.report) return;
  Finding f;
  f.code = rule.code;
  f.severity = rule.severity;
  f.fix = rule.fix;
  std::set<int> ranks;
  std::set<std::string> hosts;
  std::vector<std::string> parts;
  for (const auto& v : result.values) {
    ranks.insert(v.ranks.begin(), v.ranks.end());
    hosts.insert(v.hosts.begin(), v.hosts.end());
    parts.push_back(fmt::format("{} {} {}", hosts_text(v.hosts), has(v.hosts), rule.describe(v.value)));
  }
  f.ranks.assign(ranks.begin(), ranks.end());
  f.hosts.assign(hosts.begin(), hosts.end());
  f.found = fmt::format("{}", fmt::join(parts, "; "));
  f.verify = device_verify(f.hosts, 1);
  f.tied = true;
  f.message = fmt::format("no majority for {} ({} values, tied): {}", rule.topic,
                          result.values.size(), f.found);
  out->push_back(std::move(f));
}

void run(const HostRule& rule, const std::vector<ConfigGroup>& groups,
         const std::function<bool(const RankRecord&, std::string*)>& value_of,
         std::vector<Finding>* out) {
  judge_hosts(rule, vote(groups, value_of, VoteBy::hosts), out);
}

int usable_gpus(const GpuFacts& g) {
  return static_cast<int>(std::count_if(g.devices.begin(), g.devices.end(),
                                        [](const GpuDevice& d) { return d.excluded != "yes"; }));
}

std::string gpus_text(const std::string& n) {
  return n == "1" ? "1 usable GPU" : n + " usable GPUs";
}

// Where the job puts its ranks, as far as groups tell: a group on one host puts all its ranks
// there; a group on several hosts puts at least one on each.
struct Placement {
  std::map<std::string, std::size_t> at_least;  // ranks on the host, at least
  std::map<std::string, bool> exact;            // at_least is the number (single-host groups only)
  std::map<std::string, std::vector<int>> ranks;  // ranks known to be on the host
  bool uniform = false;                         // every host gets the same number of ranks
};

Placement placement_of(const std::vector<ConfigGroup>& groups) {
  Placement p;
  std::size_t total = 0;
  for (const auto& g : groups) {
    std::vector<std::string> hosts;
    for (const auto& h : g.hosts)
      if (!h.empty() && !is_image(h)) hosts.push_back(h);
    if (hosts.empty()) continue;
    total += g.ranks.size();
    for (const auto& h : hosts) p.exact.emplace(h, true);
    if (hosts.size() == 1) {
      p.at_least[hosts[0]] += g.ranks.size();
      auto& r = p.ranks[hosts[0]];
      r.insert(r.end(), g.ranks.begin(), g.ranks.end());
    } else {
      for (const auto& h : hosts) {
        p.at_least[h] += 1;
        p.exact[h] = false;
      }
    }
  }
  const std::size_t n = p.exact.size();
  if (n < 2 || total % n != 0) return p;
  p.uniform = true;
  for (const auto& [host, exact] : p.exact)
    if (exact && p.at_least[host] != total / n) p.uniform = false;
  return p;
}

// Error: more ranks placed on a host than it has usable GPUs. Hosts in the same situation (same
// GPU and rank numbers) share one finding, so 500 short hosts are one line.
std::set<std::string> gpu_count_short(const std::vector<ConfigGroup>& groups, const Placement& p,
                                      std::vector<Finding>* out) {
  std::map<std::string, int> usable;
  for (const auto& g : groups) {
    if (g.record.devices.gpus.status != FactStatus::ok) continue;
    for (const auto& h : g.hosts)
      if (!h.empty() && !is_image(h)) usable.emplace(h, usable_gpus(g.record.devices.gpus));
  }
  const std::string fix =
      "bring the missing GPUs back (nvidia-smi -q on the host; a GPU that fell off the bus needs a "
      "reset or a reboot, an excluded one its NVreg_ExcludedGpus entry removed), or place no more "
      "ranks on the host than it has GPUs (mpirun --map-by ppr:N:node, srun --ntasks-per-node, "
      "torchrun --nproc-per-node)";
  std::map<std::tuple<int, std::size_t, bool>, std::pair<std::set<std::string>, std::set<int>>>
      short_hosts;
  for (const auto& [host, gpus] : usable) {
    auto at = p.at_least.find(host);
    if (at == p.at_least.end() || at->second <= static_cast<std::size_t>(gpus)) continue;
    auto& entry = short_hosts[{gpus, at->second, p.exact.at(host)}];
    entry.first.insert(host);
    auto r = p.ranks.find(host);
    if (r != p.ranks.end()) entry.second.insert(r->second.begin(), r->second.end());
  }
  std::set<std::string> blamed;
  for (const auto& [key, who] : short_hosts) {
    const auto& [gpus, ranks, exact] = key;
    Finding f;
    f.code = FindingCode::gpu_count_short;
    f.severity = Severity::error;
    f.hosts.assign(who.first.begin(), who.first.end());
    f.ranks.assign(who.second.begin(), who.second.end());
    f.expected = fmt::format("at least {}", gpus_text(std::to_string(ranks)));
    f.found = gpus_text(std::to_string(gpus));
    f.message = fmt::format("{} {} {} for {}{} {} placed on {}", hosts_text(f.hosts),
                            has(f.hosts), f.found, exact ? "" : "at least ", ranks,
                            ranks == 1 ? "rank" : "ranks", f.hosts.size() == 1 ? "it" : "each");
    f.fix = fix;
    f.verify = device_verify(f.hosts, ranks);
    out->push_back(std::move(f));
    blamed.insert(who.first.begin(), who.first.end());
  }
  // A group spread over several hosts: more ranks than all its hosts' GPUs together means one
  // of them is short, whichever it is.
  for (const auto& g : groups) {
    if (g.hosts.size() < 2 || g.record.devices.gpus.status != FactStatus::ok) continue;
    std::size_t sum = 0;
    bool all_known = true;
    for (const auto& h : g.hosts) {
      auto u = usable.find(h);
      if (u == usable.end()) all_known = false;
      else sum += static_cast<std::size_t>(u->second);
    }
    if (!all_known || g.ranks.size() <= sum) continue;
    if (std::all_of(g.hosts.begin(), g.hosts.end(), [&](const std::string& h) { return blamed.count(h) > 0; }))
      continue;
    Finding f;
    f.code = FindingCode::gpu_count_short;
    f.severity = Severity::error;
    f.hosts = g.hosts;
    f.ranks = g.ranks;
    f.expected = fmt::format("at least {} usable GPUs on {} hosts", g.ranks.size(), g.hosts.size());
    f.found = fmt::format("{} usable GPUs", sum);
    f.message = fmt::format("{} places {} ranks on {} hosts that have {} between them",
                            rank_phrase(g.ranks, g.hosts), g.ranks.size(), g.hosts.size(),
                            f.found);
    f.fix = fix;
    f.verify = device_verify(f.hosts, (g.ranks.size() + g.hosts.size() - 1) / g.hosts.size());
    out->push_back(std::move(f));
    blamed.insert(g.hosts.begin(), g.hosts.end());
  }
  return blamed;
}

bool all_in(const std::vector<std::string>& hosts, const std::set<std::string>& set) {
  return !hosts.empty() &&
         std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return set.count(h) > 0; });
}

bool rdma_known(const DevicesInfo& d) {
  return d.rdma.status == FactStatus::ok || d.rdma.status == FactStatus::absent;
}

std::string hca_summary(const RdmaFacts& r) {
  if (r.status != FactStatus::ok || r.devices.empty()) return "no RDMA device";
  std::map<std::string, int> by_type;
  for (const auto& d : r.devices) ++by_type[d.hca_type.empty() ? "(type unknown)" : d.hca_type];
  std::vector<std::string> parts;
  for (const auto& [type, n] : by_type) parts.push_back(fmt::format("{} x {}", n, type));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// One device fact compared between hosts and with a baseline: how findings speak of it, and
// how a record gives its value (false: unknown there, the host takes no part).
struct DeviceFact {
  std::string key;  // its name in a baseline: "gpu_model", "rdma_firmware:MT4129", ...
  HostRule rule;
  std::function<bool(const RankRecord&, std::string*)> value;
};

DeviceFact gpu_count_fact() {
  return {"gpu_count",
          {FindingCode::gpu_count_mismatch, Severity::warning, "the GPU count", gpus_text,
           "check the host's GPUs (nvidia-smi; dmesg for Xid 79, \"fallen off the bus\"); drain "
           "the host or reset the GPU before the job"},
          [](const RankRecord& r, std::string* v) {
            if (r.devices.gpus.status != FactStatus::ok) return false;
            *v = std::to_string(usable_gpus(r.devices.gpus));
            return true;
          }};
}

DeviceFact gpu_model_fact() {
  return {"gpu_model",
          {FindingCode::gpu_model_mismatch, Severity::warning, "the GPU model",
           [](const std::string& v) { return "GPU model " + v; },
           "run the job on hosts of one GPU model (a Slurm constraint or a node list): the "
           "slowest model sets the pace of every collective"},
          [](const RankRecord& r, std::string* v) {
            if (r.devices.gpus.status != FactStatus::ok) return false;
            std::set<std::string> models;
            for (const auto& g : r.devices.gpus.devices)
              if (!g.model.empty()) models.insert(g.model);
            if (models.empty()) return false;
            *v = fmt::format("{}", fmt::join(models, " + "));
            return true;
          }};
}

DeviceFact hca_fact() {
  return {"rdma_hcas",
          {FindingCode::rdma_hca_mismatch, Severity::warning, "the RDMA devices",
           [](const std::string& v) { return v; },
           "check the host's RDMA devices (ibv_devinfo, ibstat): a missing one is often a driver "
           "not loaded (mlx5_ib) or a card that is down"},
          [](const RankRecord& r, std::string* v) {
            if (!rdma_known(r.devices)) return false;
            *v = hca_summary(r.devices.rdma);
            return true;
          }};
}

// Firmware is compared between devices of one model: another model has other firmware.
DeviceFact firmware_fact(const std::string& model) {
  return {"rdma_firmware:" + model,
          {FindingCode::rdma_firmware_mismatch, Severity::warning, "the RDMA firmware",
           [model](const std::string& v) { return fmt::format("{} firmware {}", model, v); },
           fmt::format("update every {} to one firmware version (mlxfwmanager, or the vendor's "
                       "tool), then reset the device or reboot",
                       model)},
          [model](const RankRecord& r, std::string* v) {
            if (r.devices.rdma.status != FactStatus::ok) return false;
            std::set<std::string> fws;
            for (const auto& d : r.devices.rdma.devices)
              if (d.hca_type == model && !d.fw_ver.empty()) fws.insert(d.fw_ver);
            if (fws.empty()) return false;
            *v = fmt::format("{}", fmt::join(fws, ", "));
            return true;
          }};
}

// A port that is ACTIVE on the reference and not on the odd hosts; ports down everywhere are
// the site's choice, not a difference.
DeviceFact port_fact(const std::string& device, const std::string& port) {
  const std::string name = fmt::format("{} port {}", device, port);
  DeviceFact f{"rdma_port:" + device + ":" + port,
               {FindingCode::rdma_port_down, Severity::warning, "the port state",
                [name](const std::string& v) { return fmt::format("{} {}", name, v); },
                fmt::format("bring {} up (ibstat; check its cable and switch port), or leave the "
                            "device out on every host with NCCL_IB_HCA",
                            name)},
               [device, port](const RankRecord& r, std::string* v) {
                 if (r.devices.rdma.status != FactStatus::ok) return false;
                 for (const auto& d : r.devices.rdma.devices) {
                   if (d.name != device) continue;
                   for (const auto& p : d.ports) {
                     if (p.port != port || p.state.empty()) continue;
                     *v = p.state;
                     return true;
                   }
                 }
                 return false;
               }};
  f.rule.report = [](const std::string& ref, const std::string& v) {
    return ref == "ACTIVE" && v != "ACTIVE";
  };
  return f;
}

DeviceFact gpudirect_fact() {
  return {"gpudirect",
          {FindingCode::gpudirect_mismatch, Severity::warning, "GPUDirect RDMA",
           [](const std::string& v) {
             return v == "loaded" ? std::string("a peer-memory module loaded (GPUDirect RDMA)")
                                  : std::string("no peer-memory module loaded (nvidia_peermem, "
                                                "nv_peer_mem): no GPUDirect RDMA");
           },
           "load nvidia_peermem on every host with RDMA devices (modprobe nvidia_peermem, and make "
           "it load at boot), or on none"},
          [](const RankRecord& r, std::string* v) {
            const auto& g = r.devices.gpudirect;
            if (g.status != FactStatus::ok && g.status != FactStatus::absent) return false;
            if (r.devices.rdma.status != FactStatus::ok || r.devices.rdma.devices.empty())
              return false;
            // GPUDirect RDMA moves GPU memory: a host whose GPUs are unknown (no driver seen)
            // cannot be said to lack it.
            if (r.devices.gpus.status != FactStatus::ok) return false;
            *v = g.status == FactStatus::ok ? "loaded" : "not loaded";
            return true;
          }};
}

// NVML's GPUs of a host that answered (lost ones left out); false when NVML was not read.
bool nvml_gpus(const RankRecord& r, std::vector<const NvmlGpu*>* out) {
  if (r.devices.nvml.status != FactStatus::ok) return false;
  for (const auto& g : r.devices.nvml.gpus)
    if (!g.lost) out->push_back(&g);
  return !out->empty();
}

// MIG on some hosts only: CUDA there sees MIG instances (or, without instances, no device) and
// NCCL cannot use them as it uses the others' GPUs.
DeviceFact mig_fact() {
  return {"gpu_mig",
          {FindingCode::gpu_mig_mismatch, Severity::error, "MIG mode",
           [](const std::string& v) { return "MIG " + v; },
           "disable MIG on every GPU of the job's hosts (nvidia-smi -mig 0, then a GPU reset), or "
           "run the job on hosts that agree"},
          [](const RankRecord& r, std::string* v) {
            std::vector<const NvmlGpu*> gpus;
            if (!nvml_gpus(r, &gpus)) return false;
            const bool on = std::any_of(gpus.begin(), gpus.end(),
                                        [](const NvmlGpu* g) { return g->mig == "enabled"; });
            *v = on ? "enabled" : "disabled";
            return true;
          }};
}

DeviceFact compute_mode_fact() {
  return {"gpu_compute_mode",
          {FindingCode::gpu_compute_mode_mismatch, Severity::warning, "the compute mode",
           [](const std::string& v) { return "compute mode " + v; },
           "set one compute mode on every GPU (nvidia-smi -c DEFAULT); in exclusive-process mode "
           "two ranks cannot share a GPU, in prohibited mode none can use it"},
          [](const RankRecord& r, std::string* v) {
            std::vector<const NvmlGpu*> gpus;
            if (!nvml_gpus(r, &gpus)) return false;
            std::set<std::string> modes;
            for (const NvmlGpu* g : gpus)
              if (!g->compute_mode.empty()) modes.insert(g->compute_mode);
            if (modes.empty()) return false;
            *v = fmt::format("{}", fmt::join(modes, " + "));
            return true;
          }};
}

// ECC on some hosts only. Hosts where NVML gives no GPU an ECC mode take no part.
DeviceFact ecc_fact() {
  return {"gpu_ecc",
          {FindingCode::gpu_ecc_mode_mismatch, Severity::warning, "the ECC mode",
           [](const std::string& v) { return "ECC " + v; },
           "set one ECC mode on every GPU of the job's hosts (nvidia-smi -e 1, then a GPU reset "
           "or a reboot), or run the job on hosts that agree"},
          [](const RankRecord& r, std::string* v) {
            std::vector<const NvmlGpu*> gpus;
            if (!nvml_gpus(r, &gpus)) return false;
            std::set<std::string> modes;
            for (const NvmlGpu* g : gpus)
              if (!g->ecc.empty()) modes.insert(g->ecc);
            if (modes.empty()) return false;
            *v = fmt::format("{}", fmt::join(modes, " + "));
            return true;
          }};
}

// "U of T" NVLink links active over a host's GPUs; a host with more links down (T - U) than the
// reference is reported: fewer down is no fault, and a host with fewer GPUs has fewer links
// without any being down (the GPU count's own finding says that). Hosts whose GPUs have no
// NVLink take no part.
long links_down(const std::string& v) {
  char* end = nullptr;
  const long up = std::strtol(v.c_str(), &end, 10);
  const std::string of = " of ";
  if (v.compare(static_cast<std::size_t>(end - v.c_str()), of.size(), of) != 0) return 0;
  return std::strtol(end + of.size(), nullptr, 10) - up;
}

DeviceFact nvlink_fact() {
  DeviceFact f{"nvlink",
               {FindingCode::nvlink_down, Severity::warning, "the NVLink links",
                [](const std::string& v) { return v + " NVLink links active"; },
                "check the links (nvidia-smi nvlink -s, dmesg for Xid 74); a link down needs a "
                "GPU reset, a reseat or service: drain the host until then"},
               [](const RankRecord& r, std::string* v) {
                 std::vector<const NvmlGpu*> gpus;
                 if (!nvml_gpus(r, &gpus)) return false;
                 int links = 0, up = 0;
                 for (const NvmlGpu* g : gpus) {
                   links += g->nvlink_links;
                   up += g->nvlink_up;
                 }
                 if (links == 0) return false;
                 *v = fmt::format("{} of {}", up, links);
                 return true;
               }};
  f.rule.report = [](const std::string& ref, const std::string& v) {
    return links_down(v) > links_down(ref);
  };
  return f;
}

// A condition of a host alone (no vote): hosts with the same `found` share one finding, so 500
// hosts alike are one line.
struct HostCondition {
  FindingCode code;
  Severity severity;
  const char* expected;
  const char* source;  // said after what was found: "(NVML: GPU is lost)"
  std::string fix;
  std::function<std::string(const RankRecord&)> found;  // "" where the host is fine
};

void host_condition_rule(const HostCondition& c, const std::vector<ConfigGroup>& groups,
                         std::vector<Finding>* out) {
  std::map<std::string, ConfigGroup> by_found;
  for (const auto& g : groups) {
    const std::string found = c.found(g.record);
    if (found.empty()) continue;
    ConfigGroup& m = by_found[found];
    m.ranks.insert(m.ranks.end(), g.ranks.begin(), g.ranks.end());
    m.hosts.insert(m.hosts.end(), g.hosts.begin(), g.hosts.end());
  }
  for (auto& [found, m] : by_found) {
    std::sort(m.ranks.begin(), m.ranks.end());
    std::sort(m.hosts.begin(), m.hosts.end());
    m.hosts.erase(std::unique(m.hosts.begin(), m.hosts.end()), m.hosts.end());
    Finding f;
    f.code = c.code;
    f.severity = c.severity;
    f.ranks = m.ranks;
    f.hosts = m.hosts;
    f.expected = c.expected;
    f.found = found;
    f.message = fmt::format("{} {} {} {}", hosts_text(f.hosts), has(f.hosts), found, c.source);
    f.fix = c.fix;
    f.verify = device_verify(f.hosts, 1);
    out->push_back(std::move(f));
  }
}

std::string gpus_count_text(std::size_t n) { return n == 1 ? "1 GPU" : fmt::format("{} GPUs", n); }

// GPUs NVML reports lost (their procfs entry stays): CUDA fails on them.
HostCondition gpu_lost_condition() {
  return {FindingCode::gpu_lost, Severity::error, "no GPU lost", "(NVML: GPU is lost)",
          "drain the host and reset the GPU (nvidia-smi -r) or reboot; dmesg shows the Xid (79: "
          "fallen off the bus) that lost it",
          [](const RankRecord& r) -> std::string {
            if (r.devices.nvml.status != FactStatus::ok) return "";
            const auto& gpus = r.devices.nvml.gpus;
            const auto lost = static_cast<std::size_t>(
                std::count_if(gpus.begin(), gpus.end(), [](const NvmlGpu& x) { return x.lost; }));
            return lost == 0 ? "" : gpus_count_text(lost) + " lost";
          }};
}

// What of a GPU's memory health needs a reset before a job, in the words findings use; none
// when it is healthy (or unknown).
std::vector<const char*> memory_troubles(const NvmlGpu& g) {
  std::vector<const char*> t;
  if (g.ecc_uncorrected > 0) t.push_back("volatile uncorrected ECC errors");
  if (g.retired_pending == "yes") t.push_back("pages pending retirement");
  if (g.remap_pending == "yes") t.push_back("rows pending remapping");
  if (g.remap_failed) t.push_back("a failed row remapping");
  return t;
}

HostCondition ecc_errors_condition() {
  return {FindingCode::gpu_ecc_errors_pending, Severity::error,
          "no uncorrected ECC error, retirement or remapping pending", "(NVML)",
          "drain the host and reset its GPUs (nvidia-smi -r, or reboot) so that pending page "
          "retirements and row remappings take effect; a GPU with a failed remapping, or errors "
          "that come back, needs service (nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER)",
          [](const RankRecord& r) -> std::string {
            std::vector<const NvmlGpu*> gpus;
            if (!nvml_gpus(r, &gpus)) return "";
            std::size_t affected = 0;
            std::set<std::string> kinds;
            for (const NvmlGpu* g : gpus) {
              const auto t = memory_troubles(*g);
              if (!t.empty()) ++affected;
              kinds.insert(t.begin(), t.end());
            }
            if (affected == 0) return "";
            return fmt::format("{} with {}", gpus_count_text(affected), fmt::join(kinds, ", "));
          }};
}

HostCondition fabric_condition() {
  return {FindingCode::fabric_manager_not_ready, Severity::error,
          "every GPU's fabric registration completed",
          "(NVML: the fabric manager is not running, has not finished, or failed)",
          "start the fabric manager and let it finish (systemctl status nvidia-fabricmanager; its "
          "version must be the driver's), until nvidia-smi -q shows the GPUs' Fabric State "
          "Completed and Status Success",
          [](const RankRecord& r) -> std::string {
            const auto& s = r.devices.nvswitch;
            return s.fabric_manager == "not-ready" ? s.fabric_manager_why : "";
          }};
}

// The kernel module is read with or without the driver's library, so a host whose libcuda is
// missing still has one to compare (and to pin: the prolog's baseline).
DeviceFact kernel_module_fact() {
  return {"gpu_kernel_module",
          {FindingCode::gpu_kernel_module_mismatch, Severity::warning,
           "the NVIDIA kernel module version",
           [](const std::string& v) { return "kernel module " + v; },
           "install the same NVIDIA driver on every node, and reboot (or reload the nvidia "
           "modules) after an upgrade"},
          [](const RankRecord& r, std::string* v) {
            *v = r.cuda_driver.kernel_module_version;
            return !v->empty();
          }};
}

// The facts every host is compared on, but the GPU count (which depends on the placement):
// model, MIG, compute mode, ECC mode, NVLink links active, RDMA devices, one firmware per model
// and one state per port seen, GPUDirect.
std::vector<DeviceFact> compared_facts(const std::vector<ConfigGroup>& groups) {
  std::vector<DeviceFact> facts = {gpu_model_fact(), mig_fact(),    compute_mode_fact(),
                                   ecc_fact(),       nvlink_fact(), hca_fact()};
  std::set<std::string> models;
  std::set<std::pair<std::string, std::string>> ports;
  for (const auto& g : groups) {
    if (g.record.devices.rdma.status != FactStatus::ok) continue;
    for (const auto& d : g.record.devices.rdma.devices) {
      if (!d.hca_type.empty()) models.insert(d.hca_type);
      for (const auto& p : d.ports) ports.insert({d.name, p.port});
    }
  }
  for (const auto& m : models) facts.push_back(firmware_fact(m));
  for (const auto& [device, port] : ports) facts.push_back(port_fact(device, port));
  facts.push_back(gpudirect_fact());
  return facts;
}

// The fact a baseline key names; false for a key this version does not know (ignored, as the
// baseline's unknown keys are).
bool fact_for_key(const std::string& key, DeviceFact* out) {
  if (key == "gpu_count") *out = gpu_count_fact();
  else if (key == "gpu_model") *out = gpu_model_fact();
  else if (key == "gpu_mig") *out = mig_fact();
  else if (key == "gpu_compute_mode") *out = compute_mode_fact();
  else if (key == "gpu_ecc") *out = ecc_fact();
  else if (key == "nvlink") *out = nvlink_fact();
  else if (key == "rdma_hcas") *out = hca_fact();
  else if (key == "gpudirect") *out = gpudirect_fact();
  else if (key == "gpu_kernel_module") *out = kernel_module_fact();
  else if (key.rfind("rdma_firmware:", 0) == 0) *out = firmware_fact(key.substr(14));
  else if (key.rfind("rdma_port:", 0) == 0 && key.rfind(':') > 10)
    *out = port_fact(key.substr(10, key.rfind(':') - 10), key.substr(key.rfind(':') + 1));
  else return false;
  return true;
}

void gpu_count_rules(const std::vector<ConfigGroup>& groups, std::vector<Finding>* out) {
  const Placement placement = placement_of(groups);
  const std::set<std::string> short_hosts = gpu_count_short(groups, placement, out);
  if (!placement.uniform) return;
  // Hosts already rejected for too few GPUs take no part: the others are compared among
  // themselves (two short hosts against two full ones is no tie to report).
  std::vector<ConfigGroup> unblamed;
  for (const auto& g : groups)
    if (!all_in(g.hosts, short_hosts)) unblamed.push_back(g);
  const DeviceFact count = gpu_count_fact();
  run(count.rule, unblamed, count.value, out);
}

void kernel_module_rule(const std::vector<ConfigGroup>& groups, std::vector<Finding>* out) {
  std::vector<Finding> found;
  const DeviceFact module = kernel_module_fact();
  run(module.rule, groups, module.value, &found);
  // The driver version finding already names hosts whose driver differs; said once.
  for (auto& f : found) {
    bool repeated = std::any_of(out->begin(), out->end(), [&](const Finding& o) {
      return o.code == FindingCode::cuda_driver_version_mismatch && o.hosts == f.hosts;
    });
    if (!repeated) out->push_back(std::move(f));
  }
}

// Every group whose value differs from the one `baseline` pins for a fact.
void baseline_rules(const std::vector<ConfigGroup>& groups, const Baseline& baseline,
                    std::vector<Finding>* out) {
  const std::string source = baseline.source.empty() ? "the baseline" : "baseline " + baseline.source;
  for (const auto& [key, pinned] : baseline.devices) {
    DeviceFact fact;
    if (!fact_for_key(key, &fact)) continue;
    for (const auto& g : groups) {
      std::string v;
      if (!fact.value(g.record, &v) || v == pinned) continue;
      if (fact.rule.report && !fact.rule.report(pinned, v)) continue;
      Finding f;
      f.code = fact.rule.code;
      f.severity = fact.rule.severity;
      f.ranks = g.ranks;
      f.hosts = g.hosts;
      f.expected = fact.rule.describe(pinned);
      f.found = fact.rule.describe(v);
      f.fix = fact.rule.fix;
      f.verify = device_verify(g.hosts, 1);
      f.message = fmt::format("{} {} {}, where {} pins {}", hosts_text(g.hosts), has(g.hosts),
                              f.found, source, f.expected);
      out->push_back(std::move(f));
    }
  }
}

}  // namespace

// A verify line stays pasteable: at most this many hosts are named in it.
constexpr std::size_t kVerifyHosts = 16;

ShellCommand device_verify(std::vector<std::string> hosts, std::size_t per_host,
                           const std::vector<std::string>& exported) {
  hosts.erase(std::remove_if(hosts.begin(), hosts.end(),
                             [](const std::string& h) { return h.empty() || is_image(h); }),
              hosts.end());
  if (hosts.size() > kVerifyHosts) hosts.resize(kVerifyHosts);
  const std::string prose =
      "the gate on the hosts named above (a host name cannot be put in a command)";
  std::vector<std::string> argv = {"mpirun"};
  if (!hosts.empty()) {
    per_host = std::max<std::size_t>(per_host, 1);
    std::vector<std::string> slots;
    for (const auto& h : hosts) slots.push_back(fmt::format("{}:{}", h, per_host));
    argv.insert(argv.end(), {"-np", std::to_string(hosts.size() * per_host), "-H",
                             fmt::format("{}", fmt::join(slots, ","))});
  }
  argv.insert(argv.end(), {"--map-by", fmt::format("ppr:{}:node", hosts.empty() ? 1 : per_host)});
  for (const auto& name : exported) argv.insert(argv.end(), {"-x", name});
  argv.push_back("denpex-probe");
  return command_or(std::move(argv), prose);
}

void device_rules(const std::vector<ConfigGroup>& groups, const Baseline* baseline,
                  std::vector<Finding>* out) {
  gpu_count_rules(groups, out);
  for (const HostCondition& c : {gpu_lost_condition(), ecc_errors_condition(), fabric_condition()})
    host_condition_rule(c, groups, out);
  kernel_module_rule(groups, out);
  for (const DeviceFact& f : compared_facts(groups)) run(f.rule, groups, f.value, out);
  if (baseline) baseline_rules(groups, *baseline, out);
}

std::map<std::string, std::string> device_pins(const ConfigGroup& group) {
  std::map<std::string, std::string> pins;
  std::vector<DeviceFact> facts = compared_facts({group});
  facts.push_back(gpu_count_fact());
  facts.push_back(kernel_module_fact());
  for (const DeviceFact& f : facts) {
    std::string v;
    if (f.value(group.record, &v)) pins[f.key] = v;
  }
  return pins;
}

}  // namespace denpex
