#include "diagnose/facts_judge.h"
#include "diagnose/env_judge.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/fold.h"
#include "evidence/matcher.h"
#include "compare/group.h"
#include "compare/judge.h"
#include "probe/record.h"

namespace denpex::diag {

namespace {

constexpr size_t kEvidencePerFinding = 4;

// A record that every rule finds unremarkable: the judge then speaks only about what a fact set.
RankRecord neutral_record(int rank, const std::string& host) {
  RankRecord r;
  r.rank = rank;
  r.host = host;
  r.mode = "log";
  r.nccl.status = NcclStatus::ok;
  r.system_nccl.status = NcclStatus::ok;
  r.cuda_driver.status = DriverStatus::ok;
  r.net_plugin.status = PluginStatus::missing;
  return r;
}

struct Identity {
  int rank;            // real rank, or a stand-in >= kSyntheticRank
  std::string host;
  std::string name;    // process name for stand-ins
};

class Identities {
 public:
  const Identity& of(const Who& w) {
    std::string key = w.rank >= 0 ? fmt::format("r{}", w.rank) : (w.proc.empty() ? "h" + w.host : w.proc);
    auto it = ids_.find(key);
    if (it != ids_.end()) {
      if (it->second.host.empty()) it->second.host = w.host;
      return it->second;
    }
    Identity id;
    id.host = w.host;
    if (w.rank >= 0) {
      id.rank = w.rank;
    } else {
      id.rank = kSyntheticRank + 2 * next_++;
      id.name = w.proc.empty() ? (w.host.empty() ? "an unnamed process" : "a process on " + w.host) : w.proc;
      names_.emplace_back(id.rank, id.name);
    }
    return ids_.emplace(key, id).first->second;
  }
  const std::vector<std::pair<int, std::string>>& names() const { return names_; }

 private:
  std::map<std::string, Identity> ids_;
  std::vector<std::pair<int, std::string>> names_;
  int next_ = 0;
};

std::string hosts_of(const std::vector<const Fact*>& fs) {
  std::set<std::string> h;
  for (const auto* f : fs)
    if (!f->who.host.empty()) h.insert(f->who.host);
  return fmt::format("{}", fmt::join(h, ","));
}

std::vector<std::string> map_keys(const std::map<std::string, const Fact*>& m) {
  std::vector<std::string> k;
  for (const auto& kv : m) k.push_back(kv.first);
  return k;
}

}  // namespace

namespace {

// `s` with each stand-in rank number in it (a whole run of digits found in `by_num`) replaced by
// its process's name, "rank N" becoming "process NAME": one pass over `s`, whatever the count of
// processes.
std::string with_process_names(const std::string& s, const std::unordered_map<long long, const std::string*>& by_num) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += s[i++];
      continue;
    }
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    auto it = j - i <= 12 ? by_num.find(std::stoll(s.substr(i, j - i))) : by_num.end();
    if (it == by_num.end()) {
      out.append(s, i, j - i);
    } else {
      auto ends = [&](const char* w) { return out.size() >= std::strlen(w) && out.compare(out.size() - std::strlen(w), std::string::npos, w) == 0; };
      if (ends("ranks ")) out.replace(out.size() - 6, 6, "processes ");
      else if (ends("rank ")) out.replace(out.size() - 5, 5, "process ");
      out += *it->second;
    }
    i = j;
  }
  return out;
}

}  // namespace

void name_synthetic(Finding* f, const std::vector<std::pair<int, std::string>>& names) {
  std::vector<int> kept;
  for (int r : f->ranks)
    if (r < kSyntheticRank) kept.push_back(r);
  bool any = kept.size() != f->ranks.size();
  f->ranks = kept;
  if (!any && f->message.find(std::to_string(kSyntheticRank).substr(0, 3)) == std::string::npos) return;
  std::unordered_map<long long, const std::string*> by_num;
  for (const auto& [num, name] : names) by_num.emplace(num, &name);
  for (std::string* s : {&f->message, &f->found, &f->expected}) *s = with_process_names(*s, by_num);
}

namespace {

using Apply = std::function<void(RankRecord*, const Fact&)>;

// One dimension: the facts of `kinds`, applied to neutral records by `apply`, judged by
// compare/'s rules, and the findings of `codes` kept with the blamed processes' lines.
void judge_dimension(const std::vector<Fact>& facts, Identities& ids, const std::set<Fact::Kind>& kinds,
                     const std::set<FindingCode>& codes, const Apply& apply, std::vector<JudgedFact>* out) {
  // One record at a time, grouped as it is made: a record per configuration is kept, not one
  // per process (a RankRecord is kilobytes, and a log may name a hundred thousand processes).
  std::map<int, std::vector<const Fact*>> by_rank;
  std::map<int, std::string> host_of;  // the host the rank's first fact gives
  for (const auto& f : facts) {
    if (!kinds.count(f.kind)) continue;
    const Identity& id = ids.of(f.who);
    host_of.emplace(id.rank, id.host);
    by_rank[id.rank].push_back(&f);
  }
  if (by_rank.empty()) return;
  GroupBuilder groups;
  for (const auto& [rank, fs] : by_rank) {
    RankRecord record = neutral_record(rank, host_of[rank]);
    for (const Fact* x : fs) apply(&record, *x);
    groups.add(record);
  }
  for (auto& f : judge(groups.finish(), {}, JudgeOptions{})) {
    if (!codes.count(f.code)) continue;
    JudgedFact jf;
    // Evidence: the blamed ranks' lines first, then one line of the reference.
    std::set<int> blamed(f.ranks.begin(), f.ranks.end());
    std::set<std::pair<std::string, long long>> seen;
    auto add = [&](const Evidence& e) {
      if (seen.insert({e.file, e.line}).second) jf.evidence.push_back(e);
    };
    for (int r : f.ranks)
      for (const Fact* x : by_rank[r])
        if (jf.evidence.size() < kEvidencePerFinding - 1) add(x->evidence);
    for (const auto& kv : by_rank)
      if (!blamed.count(kv.first) && jf.evidence.size() < kEvidencePerFinding &&
          !seen.count({kv.second.front()->evidence.file, kv.second.front()->evidence.line})) {
        add(kv.second.front()->evidence);
        break;
      }
    std::unordered_map<int, const std::string*> name_of;
    for (const auto& [num, name] : ids.names()) name_of.emplace(num, &name);
    for (int r : f.ranks)
      if (auto it = name_of.find(r); it != name_of.end()) jf.processes.push_back(*it->second);
    name_synthetic(&f, ids.names());
    jf.finding = std::move(f);
    out->push_back(std::move(jf));
  }
}

void judge_dimensions(const std::vector<Fact>& facts, std::vector<JudgedFact>* out) {
  Identities ids;
  judge_dimension(facts, ids, {Fact::Kind::nccl_version}, {FindingCode::nccl_version_mismatch, FindingCode::nccl_build_mismatch},
                  [](RankRecord* r, const Fact& f) {
                    if (!r->nccl.version.empty()) return;  // the first version a process printed
                    r->nccl.version = f.a;
                    r->nccl.cuda_build = f.b;
                  }, out);
  judge_dimension(facts, ids, {Fact::Kind::plugin_loaded, Fact::Kind::plugin_missing}, {FindingCode::nccl_net_plugin_mismatch},
                  [](RankRecord* r, const Fact& f) {
                    // NCCL tries several names before it loads one: a load wins over "could not find".
                    if (f.kind == Fact::Kind::plugin_loaded) {
                      r->net_plugin.status = PluginStatus::ok;
                      r->net_plugin.path = f.a;
                      if (!f.b.empty()) r->net_plugin.api_versions = {f.b};
                    } else if (r->net_plugin.status != PluginStatus::ok) {
                      r->net_plugin.status = PluginStatus::missing;
                    }
                  }, out);
  judge_dimension(facts, ids, {Fact::Kind::nccl_env}, {FindingCode::nccl_env_mismatch},
                  [](RankRecord* r, const Fact& f) { r->nccl_env[f.a] = f.b; }, out);
  judge_dimension(facts, ids, {Fact::Kind::undefined_symbol}, {FindingCode::nccl_abi_mismatch}, [](RankRecord* r, const Fact& f) {
    AbiCheck a;
    a.consumer = f.b.empty() ? "libtorch_cuda.so" : f.b;
    a.library = "the libnccl.so.2 it loaded";
    a.imported = {f.a};
    a.missing = {f.a};
    if (r->abi.empty()) r->abi.push_back(a);
  }, out);
  judge_dimension(facts, ids, {Fact::Kind::driver_stub}, {FindingCode::cuda_driver_stub}, [](RankRecord* r, const Fact& f) {
    r->cuda_driver.status = DriverStatus::stub;
    if (!f.a.empty()) r->cuda_driver.library = f.a;
  }, out);
  // The driver's CUDA version against the CUDA build of the NCCL the same process printed.
  judge_dimension(facts, ids, {Fact::Kind::driver_cuda, Fact::Kind::nccl_version}, {FindingCode::cuda_driver_too_old},
                  [](RankRecord* r, const Fact& f) {
                    if (f.kind == Fact::Kind::driver_cuda) r->cuda_driver.cuda_version = f.a;
                    else if (r->nccl.version.empty()) {
                      r->nccl.version = f.a;
                      r->nccl.cuda_build = f.b;
                    }
                  }, out);
}

const evidence::Signal* signal_named(const std::string& id) {
  int i = evidence::builtin_matcher().index_of(id);
  return i >= 0 ? &evidence::builtin_signals().signals[static_cast<size_t>(i)] : nullptr;
}

// The code of a message that states its verdict itself: the one its signature gives.
FindingCode direct_code(const Fact& f) {
  if (const evidence::Signal* s = signal_named(f.evidence.signal)) return s->finding;
  return f.kind == Fact::Kind::driver_too_old ? FindingCode::cuda_driver_too_old
         : f.kind == Fact::Kind::nccl_missing ? FindingCode::nccl_missing
         : f.kind == Fact::Kind::plugin_unloadable ? FindingCode::nccl_net_plugin_mismatch
                                              : FindingCode::cuda_driver_kernel_mismatch;
}

JudgedFact direct_finding(FindingCode code, const std::vector<const Fact*>& fs, const std::vector<Fact>& facts) {
  JudgedFact jf;
  Finding& f = jf.finding;
  f.code = code;
  f.severity = Severity::error;
  std::set<int> ranks;
  std::set<std::string> hosts, procs;
  for (const Fact* x : fs) {
    if (x->who.rank >= 0) ranks.insert(x->who.rank);
    else if (!x->who.proc.empty() && x->who.proc != x->who.host) procs.insert(x->who.proc);
    if (!x->who.host.empty()) hosts.insert(x->who.host);
    if (jf.evidence.size() < kEvidencePerFinding) jf.evidence.push_back(x->evidence);
  }
  f.ranks.assign(ranks.begin(), ranks.end());
  f.hosts.assign(hosts.begin(), hosts.end());
  std::string who = ranks.empty() ? (procs.empty() ? "a process" : fmt::format("{}", fmt::join(procs, ", ")))
                                  : rank_subject(std::vector<int>(ranks.begin(), ranks.end()));
  if (!hosts.empty()) who += " on " + hosts_of(fs);
  const evidence::Signal* sig = signal_named(fs.front()->evidence.signal);
  f.message = fmt::format("{}: {}", who, fs.front()->a);
  if (code == FindingCode::cuda_driver_kernel_mismatch) {
    f.message = fmt::format("{}: NVML reports \"Driver/library version mismatch\": the user-space driver and the loaded kernel module differ", who);
    f.expected = "user-space driver = kernel module";
    std::string versions = driver_versions_note(facts);
    f.found = versions.empty() ? "different versions" : versions;
    if (!versions.empty()) f.message += ": " + versions;
    f.fix = "reboot (or reload the nvidia kernel modules) after the driver update, or install the user-space driver that "
            "matches the loaded module; do not bake libcuda into container images";
  } else if (code == FindingCode::cuda_driver_too_old) {
    f.expected = "a driver for the CUDA version PyTorch and NCCL were built for";
    f.found = "an older driver";
    f.fix = "upgrade the NVIDIA driver on these hosts to one that supports the CUDA version of the PyTorch/NCCL build, "
            "or install a PyTorch/NCCL build for the CUDA version the driver supports (nvidia-smi shows it)";
  } else {
    f.found = fs.front()->a;
    f.fix = sig ? sig->fix : "see the evidence line";
  }
  return jf;
}

void direct_findings(const std::vector<Fact>& facts, std::vector<JudgedFact>* out) {
  std::map<FindingCode, std::vector<const Fact*>, CodeNameLess> direct;
  for (const auto& f : facts)
    if (f.kind == Fact::Kind::driver_too_old || f.kind == Fact::Kind::nvml_mismatch || f.kind == Fact::Kind::nccl_missing ||
        f.kind == Fact::Kind::plugin_unloadable)
      direct[direct_code(f)].push_back(&f);
  for (const auto& [code, fs] : direct) out->push_back(direct_finding(code, fs, facts));
}

// A version NCCL itself printed (the library the process loaded), not a package's or a wheel's.
bool loaded_version(const Fact& f) {
  return f.kind == Fact::Kind::nccl_version && f.evidence.signal.rfind("install.", 0) != 0;
}

JudgedFact install_finding(FindingCode code, const std::string& message, const std::string& fix,
                           const std::vector<const Fact*>& lines) {
  JudgedFact jf;
  jf.finding.code = code;
  jf.finding.severity = Severity::error;
  jf.finding.message = message;
  jf.finding.found = message.substr(0, 160);
  jf.finding.fix = fix;
  for (const Fact* x : lines)
    if (jf.evidence.size() < kEvidencePerFinding) jf.evidence.push_back(x->evidence);
  return jf;
}

// What PyTorch says it uses (torch.cuda.nccl.version(), the nvidia-nccl wheels beside it) against
// the NCCL the processes printed they loaded. Judged over the whole input, since a `pip list` or
// an interpreter line belongs to no rank: a difference blames no rank by itself.
void installed_vs_loaded(const std::vector<Fact>& facts, std::vector<JudgedFact>* out) {
  std::map<std::string, const Fact*> torch, loaded, wheels;
  for (const auto& f : facts) {
    if (f.kind == Fact::Kind::torch_nccl) torch.emplace(f.a, &f);
    if (loaded_version(f)) loaded.emplace(f.a, &f);
    if (f.kind == Fact::Kind::nccl_wheel) wheels.emplace(f.b + " " + f.a, &f);
  }
  auto lines = [](const std::map<std::string, const Fact*>& a, const std::map<std::string, const Fact*>& b) {
    std::vector<const Fact*> v;
    for (const auto* m : {&a, &b})
      for (const auto& kv : *m) v.push_back(kv.second);
    return v;
  };
  // Two wheels in one environment (nccl-wheel-conflict) are judged per environment by env_judge.
  const std::map<std::string, const Fact*>& said = torch.empty() ? wheels : torch;
  if (said.size() != 1 || loaded.empty() || loaded.count(said.begin()->second->a)) return;
  std::string what = torch.empty() ? "the installed " + said.begin()->second->b + " wheel" : "torch.cuda.nccl.version()";
  out->push_back(install_finding(
      FindingCode::torch_nccl_mismatch,
      fmt::format("{} says NCCL {}, but the process loaded NCCL {}: another libnccl.so.2 wins (LD_LIBRARY_PATH, the "
                  "system's libnccl2, a second wheel)",
                  what, said.begin()->second->a, fmt::join(map_keys(loaded), ", ")),
      "make the process load the NCCL PyTorch was built for: remove the other libnccl.so.2 from LD_LIBRARY_PATH (or "
      "LD_PRELOAD the wheel's nvidia/nccl/lib/libnccl.so.2), then check NCCL_DEBUG=VERSION prints the same version",
      lines(said, loaded)));
}

}  // namespace

std::vector<JudgedFact> judge_facts(const std::vector<Fact>& facts) {
  std::vector<JudgedFact> out;
  judge_dimensions(facts, &out);
  direct_findings(facts, &out);
  installed_vs_loaded(facts, &out);
  for (auto& jf : judge_env_facts(facts)) out.push_back(std::move(jf));
  return out;
}

}  // namespace denpex::diag
