#include "diagnose/env_judge.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probe/cuda_compat.h"

namespace denpex::diag {

namespace {

constexpr size_t kEvidence = 4;

// The facts of one environment: a host a prompt named, else one process or file.
struct Env {
  std::string name;
  std::string host;
  std::set<int> ranks;
  std::vector<const Fact*> all, wheels, torch_nccl, files, absent, torch, drivers, driver_cuda;
  std::vector<const Fact*> packages;  // system NCCL packages and an image's NCCL_VERSION (a = version)
};

bool in_site_packages(const std::string& path) {
  return path.find("site-packages") != std::string::npos || path.find("dist-packages") != std::string::npos;
}

// The one host the shell prompts of a file name, per file ("" for a file naming none or several):
// the lines pasted before its first prompt came from the same shell.
std::map<std::string, std::string> prompt_host_of_files(const std::vector<Fact>& facts) {
  std::map<std::string, std::set<std::string>> hosts;
  for (const auto& f : facts)
    if (!f.who.host.empty()) hosts[f.evidence.file].insert(f.who.host);
  std::map<std::string, std::string> out;
  for (const auto& [file, hs] : hosts)
    if (hs.size() == 1) out[file] = *hs.begin();
  return out;
}

std::map<std::string, Env> environments(const std::vector<Fact>& facts) {
  std::map<std::string, Env> out;
  const std::map<std::string, std::string> file_host = prompt_host_of_files(facts);
  for (const auto& f : facts) {
    std::vector<const Fact*> Env::*list = nullptr;
    switch (f.kind) {
      case Fact::Kind::nccl_wheel: list = &Env::wheels; break;
      case Fact::Kind::torch_nccl: list = &Env::torch_nccl; break;
      case Fact::Kind::nccl_file: list = &Env::files; break;
      case Fact::Kind::nccl_symbol_absent: list = &Env::absent; break;
      case Fact::Kind::torch_version: list = &Env::torch; break;
      case Fact::Kind::driver_version: case Fact::Kind::nvml_mismatch: list = &Env::drivers; break;
      case Fact::Kind::driver_cuda: list = &Env::driver_cuda; break;
      case Fact::Kind::nccl_version:
        if (f.evidence.signal.rfind("install.", 0) == 0) list = &Env::packages;
        break;
      default: break;
    }
    if (list == nullptr) continue;
    std::string host = f.who.host;
    if (host.empty() && f.who.rank < 0) {
      auto it = file_host.find(f.evidence.file);
      if (it != file_host.end()) host = it->second;
    }
    std::string key = !host.empty() ? host : f.who.proc;
    Env& e = out[key];
    e.name = key;
    e.host = host;
    if (f.who.rank >= 0) e.ranks.insert(f.who.rank);
    (e.*list).push_back(&f);
    e.all.push_back(&f);
  }
  return out;
}

std::string subject(const Env& e) {
  if (!e.host.empty()) return e.host;
  if (e.name.rfind("file ", 0) == 0) return "the environment in " + e.name.substr(5);
  return e.name.empty() ? "the environment" : e.name;
}

JudgedFact finding(const Env& e, FindingCode code, Severity sev, const std::vector<const Fact*>& ev) {
  JudgedFact jf;
  jf.finding.code = code;
  jf.finding.severity = sev;
  jf.finding.ranks.assign(e.ranks.begin(), e.ranks.end());
  if (!e.host.empty()) jf.finding.hosts = {e.host};
  for (const Fact* f : ev)
    if (jf.evidence.size() < kEvidence) jf.evidence.push_back(f->evidence);
  return jf;
}

// Two nvidia-nccl-cu* wheels, or two versions of one, in one environment.
void wheel_conflict(const Env& e, std::vector<JudgedFact>* out) {
  std::vector<std::string> seen;
  std::vector<const Fact*> ev;
  for (const Fact* f : e.wheels) {
    std::string w = fmt::format("{} {}", f->b, f->a);
    if (std::find(seen.begin(), seen.end(), w) != seen.end()) continue;
    seen.push_back(w);
    ev.push_back(f);
  }
  if (seen.size() < 2) return;
  JudgedFact jf = finding(e, FindingCode::nccl_wheel_conflict, Severity::error, ev);
  Finding& f = jf.finding;
  std::string list = seen.size() == 2 ? seen[0] + " and " + seen[1] : fmt::format("{}", fmt::join(seen, ", "));
  f.message = fmt::format("{}: {} NCCL wheels in one environment: {}; each installs nvidia/nccl/lib/libnccl.so.2, so that "
                          "file is whichever was installed last, and uninstalling either deletes it",
                          subject(e), seen.size(), list);
  f.expected = "one nvidia-nccl-cu* wheel";
  f.found = fmt::format("{}", fmt::join(seen, ", "));
  f.fix = "uninstall every nvidia-nccl-cu* wheel (pip uninstall -y nvidia-nccl-cu11 nvidia-nccl-cu12 nvidia-nccl-cu13), "
          "then reinstall the one PyTorch requires for its CUDA (pip show torch lists it under Requires) with "
          "pip install --force-reinstall";
  out->push_back(std::move(jf));
}

// "nvidia-nccl-cu12 2.21.5" for every wheel; "" when none.
std::string wheels_text(const Env& e) {
  std::vector<std::string> w;
  for (const Fact* f : e.wheels) w.push_back(fmt::format("{} {}", f->b, f->a));
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return fmt::format("{}", fmt::join(w, ", "));
}

// "2.15.5 (+cuda11.8)" for every system package version; "" when none.
std::string packages_text(const Env& e) {
  std::map<std::string, std::string> cuda;  // version -> its +cuda build, where a line printed one
  for (const Fact* f : e.packages)
    if (cuda[f->a].empty()) cuda[f->a] = f->b;
  std::vector<std::string> v;
  for (const auto& [version, build] : cuda) v.push_back(build.empty() ? version : fmt::format("{} (+cuda{})", version, build));
  return fmt::format("{}", fmt::join(v, ", "));
}

// System libnccl files and conda's NCCL: "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3 (2.19.3)".
std::vector<const Fact*> system_nccl(const Env& e) {
  std::vector<const Fact*> out;
  for (const Fact* f : e.files)
    if (!f->b.empty() && !in_site_packages(f->a)) out.push_back(f);
  return out;
}

bool any_version(const std::vector<const Fact*>& fs, const std::string& v, bool b_side) {
  for (const Fact* f : fs)
    if ((b_side ? f->b : f->a) == v) return true;
  return false;
}

// How the NCCL PyTorch was built with compares with what it loads and what is installed.
struct TorchNcclView {
  std::string built, wheel;
  std::vector<const Fact*> sys;
};

std::string torch_nccl_message(const Env& e, const TorchNcclView& v) {
  std::vector<std::string> parts;
  if (!v.wheel.empty() && !any_version(e.wheels, v.built, false)) parts.push_back(fmt::format("the wheel installed is {}", wheels_text(e)));
  std::vector<std::string> sys;
  for (const Fact* f : v.sys) sys.push_back(fmt::format("NCCL {} ({})", f->b, f->a));
  if (!sys.empty() && !any_version(v.sys, v.built, true)) parts.push_back(fmt::format("the system has {}", fmt::join(sys, ", ")));
  if (!e.packages.empty() && !any_version(e.packages, v.built, false))
    parts.push_back(fmt::format("the system's NCCL package is {}", packages_text(e)));
  return fmt::format("{}: PyTorch was built with NCCL {} (torch.cuda.nccl.version()), but {}", subject(e), v.built,
                     fmt::join(parts, "; "));
}

// The NCCL a process printed it loaded is compared with PyTorch's over the whole input by
// facts_judge (installed_vs_loaded); here, without such a line, the wheel and the system's.
void torch_nccl(const Env& e, std::vector<JudgedFact>* out) {
  if (e.torch_nccl.empty()) return;
  TorchNcclView v;
  v.built = e.torch_nccl.front()->a;
  if (!e.wheels.empty()) v.wheel = e.wheels.front()->a;
  v.sys = system_nccl(e);
  bool wheel_differs = !v.wheel.empty() && !any_version(e.wheels, v.built, false);
  bool sys_differs = !v.sys.empty() && !any_version(v.sys, v.built, true);
  bool pkg_differs = !e.packages.empty() && !any_version(e.packages, v.built, false);
  if (!wheel_differs && !sys_differs && !pkg_differs) return;
  // A wheel older than the build can lack functions PyTorch calls; the system's copy only matters
  // to programs that resolve it (or to PyTorch when it wins on LD_LIBRARY_PATH).
  bool older = wheel_differs && compare_driver_versions(v.wheel, v.built) < 0;
  std::vector<const Fact*> ev = e.torch_nccl;
  ev.insert(ev.end(), e.wheels.begin(), e.wheels.end());
  ev.insert(ev.end(), v.sys.begin(), v.sys.end());
  ev.insert(ev.end(), e.packages.begin(), e.packages.end());
  JudgedFact jf = finding(e, FindingCode::torch_nccl_mismatch, older ? Severity::error : Severity::warning, ev);
  Finding& f = jf.finding;
  f.message = torch_nccl_message(e, v);
  f.expected = fmt::format("NCCL {} (the NCCL PyTorch was built with)", v.built);
  f.found = wheel_differs ? wheels_text(e)
            : sys_differs ? fmt::format("NCCL {} ({})", v.sys.front()->b, v.sys.front()->a)
                          : "NCCL " + packages_text(e);
  f.fix = fmt::format("make PyTorch load NCCL {}: reinstall the nvidia-nccl-cu* wheel PyTorch requires (pip show torch "
                      "lists it) and keep other libnccl directories off LD_LIBRARY_PATH and LD_PRELOAD; check with "
                      "NCCL_DEBUG=VERSION, which prints the NCCL a process loaded",
                      v.built);
  out->push_back(std::move(jf));
}

void symbol_absent(const Env& e, std::vector<JudgedFact>* out) {
  for (const Fact* a : e.absent) {
    std::vector<const Fact*> sys = system_nccl(e);
    std::vector<const Fact*> ev = {a};
    ev.insert(ev.end(), sys.begin(), sys.end());
    JudgedFact jf = finding(e, FindingCode::nccl_abi_mismatch, Severity::error, ev);
    Finding& f = jf.finding;
    std::string where;
    if (a->b.find('/') == std::string::npos && !sys.empty())
      where = fmt::format(" (loaded by name, ld.so finds the system copy first unless LD_LIBRARY_PATH says otherwise: {} is NCCL {})",
                          sys.front()->a, sys.front()->b);
    std::string wheel = e.wheels.empty() ? "" : fmt::format("; the wheel installed is {}", wheels_text(e));
    f.message = fmt::format("{}: {}{} does not export {}: that NCCL is older than the code that calls it{}", subject(e), a->b,
                            where, a->a, wheel);
    f.expected = fmt::format("an NCCL exporting {}", a->a);
    f.found = fmt::format("{} without {}", a->b, a->a);
    f.fix = fmt::format("load an NCCL that exports {}: the nvidia-nccl-cu* wheel's library by its path "
                        "(site-packages/nvidia/nccl/lib/libnccl.so.2), or a newer libnccl2 for the system copy",
                        a->a);
    out->push_back(std::move(jf));
  }
}

// Which side of the driver a version is, and where it was read.
struct DriverVersion {
  std::string version;
  bool kernel = false;
  std::string source;
};

std::vector<DriverVersion> driver_versions(const std::vector<const Fact*>& fs) {
  std::vector<DriverVersion> out;
  for (const Fact* f : fs) {
    DriverVersion d;
    const std::string& sig = f->evidence.signal;
    if (f->kind == Fact::Kind::nvml_mismatch) {
      if (f->b.empty()) continue;
      d = {f->b, false, "NVML library"};
    } else if (f->b == "kernel") {
      d = {f->a, true, sig == "env.nvrm_api_mismatch" ? "NVRM API mismatch message"
                       : sig == "env.sys_module_version" ? "/sys/module/nvidia/version"
                                                         : "/proc/driver/nvidia/version"};
    } else if (f->b == "smi") {
      d = {f->a, true, sig == "env.driver_collect_env" ? "collect_env, from nvidia-smi" : "nvidia-smi"};
    } else if (f->b == "user") {
      d = {f->a, false, sig == "env.nvrm_api_mismatch" ? "the client in NVRM's API mismatch message" : "installed package"};
    } else {
      continue;  // the version an upgrade replaced
    }
    bool dup = false;
    for (const auto& x : out) dup = dup || (x.version == d.version && x.kernel == d.kernel);
    if (!dup) out.push_back(d);
  }
  return out;
}

// "550.144" and "550.144.03" are one version printed to different precision.
bool same_driver(const std::string& a, const std::string& b) {
  const std::string& s = a.size() <= b.size() ? a : b;
  const std::string& l = a.size() <= b.size() ? b : a;
  return l.compare(0, s.size(), s) == 0 && (l.size() == s.size() || l[s.size()] == '.');
}

std::string side_text(const std::vector<DriverVersion>& ds, bool kernel) {
  std::vector<std::string> parts;
  for (const auto& d : ds)
    if (d.kernel == kernel) parts.push_back(fmt::format("{} ({})", d.version, d.source));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Versions of both sides that differ, without NVML's own error line (that one is judged from the
// message itself, with these versions added to it).
void driver_mismatch(const Env& e, std::vector<JudgedFact>* out) {
  std::vector<DriverVersion> ds = driver_versions(e.drivers);
  bool differ = false;
  for (const auto& u : ds)
    for (const auto& k : ds)
      if (!u.kernel && k.kernel && !same_driver(u.version, k.version)) differ = true;
  if (!differ) return;
  JudgedFact jf = finding(e, FindingCode::cuda_driver_kernel_mismatch, Severity::error, e.drivers);
  Finding& f = jf.finding;
  f.message = fmt::format("{}: the user-space driver is {} but the loaded kernel module is {}: a driver installed or "
                          "upgraded without a reboot", subject(e), side_text(ds, false), side_text(ds, true));
  f.expected = "user-space driver = kernel module";
  f.found = fmt::format("user-space {}, kernel module {}", side_text(ds, false), side_text(ds, true));
  f.fix = "reboot the node (or unload and reload the nvidia kernel modules) so that the module matches the installed "
          "libraries; pin the driver packages against unattended upgrades";
  out->push_back(std::move(jf));
}

// PyTorch's CUDA build against the driver's CUDA (nvidia-smi's header, or from its version).
void driver_too_old(const Env& e, std::vector<JudgedFact>* out) {
  std::string built, version, driver_cuda;
  const Fact* torch_fact = nullptr;
  for (const Fact* f : e.torch)
    if (built.empty() && !f->b.empty()) built = f->b, torch_fact = f;
  for (const Fact* f : e.drivers)
    if (version.empty() && (f->b == "smi" || f->b == "kernel")) version = f->a;
  if (!e.driver_cuda.empty()) driver_cuda = e.driver_cuda.front()->a;
  if (driver_cuda.empty() && !version.empty()) driver_cuda = cuda_version_for_driver(version);
  if (built.empty() || driver_cuda.empty() || cuda_compat(built, driver_cuda, version) != CudaCompat::too_old) return;
  std::vector<const Fact*> ev = {torch_fact};
  ev.insert(ev.end(), e.drivers.begin(), e.drivers.end());
  JudgedFact jf = finding(e, FindingCode::cuda_driver_too_old, Severity::error, ev);
  Finding& f = jf.finding;
  f.message = fmt::format("{}: PyTorch is built for CUDA {}, but the driver{} supports CUDA {} at most", subject(e), built,
                          version.empty() ? "" : " " + version, driver_cuda);
  f.expected = fmt::format("a driver for CUDA {}", built);
  f.found = fmt::format("driver {} (CUDA {})", version.empty() ? "of unknown version" : version, driver_cuda);
  f.fix = fmt::format("upgrade the NVIDIA driver to one that supports CUDA {}, or install the PyTorch build for CUDA {} "
                      "or older", built, driver_cuda);
  out->push_back(std::move(jf));
}

// Without PyTorch in the environment: system NCCL libraries and packages of different versions
// side by side (a build's own libnccl.so.2 beside the system's, an installed package beside the
// one meant): which one a program gets depends on its RPATH and LD_LIBRARY_PATH, so a program
// built against one can load the other.
void system_versions(const Env& e, std::vector<JudgedFact>* out) {
  if (!e.torch_nccl.empty() || !e.wheels.empty()) return;
  std::map<std::string, std::vector<const Fact*>> by_version;
  for (const Fact* f : system_nccl(e)) by_version[f->b].push_back(f);
  for (const Fact* f : e.packages) by_version[f->a].push_back(f);
  if (by_version.size() < 2) return;
  std::vector<std::string> seen;
  std::vector<const Fact*> ev;
  for (const auto& [v, fs] : by_version) {
    const Fact* f = fs.front();
    bool file = f->kind == Fact::Kind::nccl_file;
    seen.push_back(file ? fmt::format("NCCL {} ({})", v, f->a)
                        : fmt::format("NCCL {}{} (package)", v, f->b.empty() ? "" : " +cuda" + f->b));
    ev.push_back(f);
  }
  JudgedFact jf = finding(e, FindingCode::nccl_version_mismatch, Severity::warning, ev);
  Finding& f = jf.finding;
  f.message = fmt::format("{} holds {} NCCL versions side by side: {}; a program gets whichever its RPATH or LD_LIBRARY_PATH "
                          "finds first, which need not be the one it was built against",
                          subject(e), by_version.size(), fmt::join(seen, ", "));
  f.expected = "one NCCL version";
  f.found = fmt::format("{}", fmt::join(seen, ", "));
  f.fix = "keep one NCCL: remove the other library or package, or point the program at the one it was built against "
          "(its RPATH, or LD_LIBRARY_PATH); NCCL_DEBUG=VERSION prints the one a process loaded";
  out->push_back(std::move(jf));
}

// Environments (hosts a prompt named, or separate files) that report different PyTorch versions.
void torch_versions(const std::map<std::string, Env>& envs, std::vector<JudgedFact>* out) {
  std::map<std::string, std::vector<const Env*>> by_version;
  std::map<std::string, const Fact*> first;
  for (const auto& [key, e] : envs)
    for (const Fact* f : e.torch)
      if (!f->a.empty()) {
        by_version[f->a].push_back(&e);
        if (!first.count(f->a)) first[f->a] = f;
        break;
      }
  if (by_version.size() < 2) return;
  // The version most environments report is the reference; the others are blamed.
  auto ref = std::max_element(by_version.begin(), by_version.end(),
                              [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  std::vector<std::string> odd;
  JudgedFact jf;
  jf.evidence.push_back(first[ref->first]->evidence);
  for (const auto& [v, es] : by_version) {
    if (v == ref->first) continue;
    for (const Env* e : es) {
      odd.push_back(fmt::format("{} has PyTorch {}", subject(*e), v));
      if (!e->host.empty()) jf.finding.hosts.push_back(e->host);
      jf.finding.ranks.insert(jf.finding.ranks.end(), e->ranks.begin(), e->ranks.end());
    }
    if (jf.evidence.size() < kEvidence) jf.evidence.push_back(first[v]->evidence);
  }
  std::sort(jf.finding.hosts.begin(), jf.finding.hosts.end());
  std::sort(jf.finding.ranks.begin(), jf.finding.ranks.end());
  Finding& f = jf.finding;
  f.code = FindingCode::torch_version_mismatch;
  f.severity = Severity::error;
  f.message = fmt::format("{}; the others ({}) have PyTorch {}", fmt::join(odd, "; "), ref->second.size(), ref->first);
  f.expected = "PyTorch " + ref->first;
  f.found = fmt::format("{}", fmt::join(odd, "; "));
  f.fix = fmt::format("install PyTorch {} (the same build, +cu suffix included) on every node", ref->first);
  out->push_back(std::move(jf));
}

}  // namespace

std::string driver_versions_note(const std::vector<Fact>& facts) {
  std::vector<const Fact*> fs;
  for (const auto& f : facts)
    if (f.kind == Fact::Kind::driver_version || f.kind == Fact::Kind::nvml_mismatch) fs.push_back(&f);
  std::vector<DriverVersion> ds = driver_versions(fs);
  std::string user = side_text(ds, false), kernel = side_text(ds, true);
  std::string before;
  for (const Fact* f : fs)
    if (f->b == "user-before" && before.empty()) before = f->a;
  if (user.empty() && kernel.empty()) return {};
  std::string out = fmt::format("user-space {}, kernel module {}", user.empty() ? "not shown" : user,
                                kernel.empty() ? "not shown (cat /proc/driver/nvidia/version prints it)" : kernel);
  if (!before.empty() && kernel.empty())
    out += fmt::format("; the libraries were upgraded from {}, which the module loaded before a reboot usually still is", before);
  return out;
}

std::vector<JudgedFact> judge_env_facts(const std::vector<Fact>& facts) {
  std::vector<JudgedFact> out;
  bool nvml = std::any_of(facts.begin(), facts.end(), [](const Fact& f) { return f.kind == Fact::Kind::nvml_mismatch; });
  bool loaded_any = std::any_of(facts.begin(), facts.end(), [](const Fact& f) {
    return f.kind == Fact::Kind::nccl_version && f.evidence.signal.rfind("install.", 0) != 0;
  });
  std::map<std::string, Env> envs = environments(facts);
  torch_versions(envs, &out);
  for (const auto& [key, e] : envs) {
    wheel_conflict(e, &out);
    if (!loaded_any) torch_nccl(e, &out);
    symbol_absent(e, &out);
    if (!loaded_any) system_versions(e, &out);
    driver_too_old(e, &out);
    if (!nvml) driver_mismatch(e, &out);
  }
  return out;
}

}  // namespace denpex::diag
