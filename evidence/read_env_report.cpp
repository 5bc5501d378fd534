// Pasted environment reports: collect_env's version lines, pip list/freeze/show, nvidia-smi,
// /proc/driver/nvidia/version, dpkg and apt lines, libnccl file listings, ctypes symbol probes and
// the shell prompt that names the host they come from. Commands whose answer is on the next line
// (pip show's Version, torch.cuda.nccl.version()'s tuple, hasattr's True/False) open a block that
// reads it. Also the reports that span lines in Horovod's stall inspector ("Missing ranks:" then
// "rank: [tensors]") and Slurm's OOM pair (slurmstepd's oom-kill line, then srun's
// "task N: Out Of Memory", which names the task that ran out of host memory).
#include <algorithm>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"
#include "probe/record.h"

namespace denpex::evidence {

namespace {

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

Evidence evidence_of(const Hit& hit, Record& rec) {
  Evidence e = rec.r.evidence(rec.st, rec.text);
  e.signal = hit.signal->id;
  return e;
}

void add(Record& rec, Fact::Kind kind, int proc, std::string a, std::string b, Evidence ev) {
  rec.r.add_fact(Fact{kind, rec.r.who_of(proc), std::move(a), std::move(b), std::move(ev)});
}

// "124" (from +cu124) -> "12.4"; "" when it is not a CUDA release.
std::string cuda_of_suffix(std::string_view digits) {
  if (digits.size() < 3 || digits.size() > 4) return {};
  return fmt::format("{}.{}", digits.substr(0, digits.size() - 1), digits.substr(digits.size() - 1));
}

// The version in a libnccl file name ("libnccl.so.2.19.3" -> "2.19.3"); "" when it has none.
std::string version_of_file(std::string_view path) {
  size_t at = path.rfind("libnccl.so.");
  if (at == std::string_view::npos) return {};
  std::string_view v = path.substr(at + 11);
  std::vector<int> parts = int_list(v);
  if (parts.size() != 3 || v.find_first_not_of("0123456789.") != std::string_view::npos) return {};
  return std::string(v);
}

// torch.cuda.nccl.version() as printed: "(2, 21, 5)", or an integer code of older releases
// (2708, 21905). "" when `t` is neither.
std::string torch_nccl_output(std::string_view t) {
  t = trim(t);
  if (t.empty() || t.size() > 24) return {};
  if (t.front() == '(' && t.back() == ')') {
    std::vector<int> p = int_list(t);
    if (p.size() == 3 && t.find_first_not_of("(), 0123456789") == std::string_view::npos)
      return fmt::format("{}.{}.{}", p[0], p[1], p[2]);
    return {};
  }
  if (t.find_first_not_of("0123456789") != std::string_view::npos) return {};
  long long code = to_ll(t);
  return code >= 2000 && code < 1000000 ? nccl_version_from_code(static_cast<int>(code)) : std::string();
}

// A shell prompt: the host names the lines after it; the command on it is read as a line too.
void read_prompt(const Hit& hit, Record& rec) {
  std::string host(cut(hit.get(Field::host), 128));
  int idx = rec.r.process_by_key(host, -1);
  rec.r.processes[static_cast<size_t>(idx)].host = host;
  rec.st.last_proc = idx;
  std::string_view cmd = trim(hit.get(Field::what));
  Hit inner;
  if (cmd.empty() || !rec.r.matcher().match(Scope::line, cmd, &inner) || inner.signal == hit.signal) return;
  FamilyRead fn = family_reader(inner.signal->reader);
  Record sub{rec.r, rec.st, rec.lab, idx, cmd, false};
  if (fn != nullptr) fn(inner, sub);
}

void open_block(const char* name, const Hit& hit, Record& rec, std::string what) {
  if (!rec.st.block.empty()) end_block(rec.r, rec.st);
  rec.st.block = name;
  rec.st.env_name = std::move(what);
  rec.st.env_evidence = evidence_of(hit, rec);
  rec.st.env_proc = rec.proc;
}

// The fact a block's answer line gives; evidence is the command and its answer.
void block_fact(Record& rec, Fact::Kind kind, std::string a, std::string b, std::string_view answer) {
  Evidence ev = rec.st.env_evidence;
  ev.text = std::string(cut(ev.text + " => " + std::string(trim(answer)), kEvidenceChars));
  ev.line = rec.st.line_no;
  add(rec, kind, rec.st.env_proc, std::move(a), std::move(b), std::move(ev));
  rec.st.block.clear();
}

void read_driver(const Hit& hit, Record& rec, const std::string& kind) {
  std::string v(hit.get(Field::version));
  if (kind == "driver_smi") {
    add(rec, Fact::Kind::driver_version, rec.proc, v, "smi", evidence_of(hit, rec));
    if (hit.has(Field::cuda))
      add(rec, Fact::Kind::driver_cuda, rec.proc, std::string(hit.get(Field::cuda)), "", evidence_of(hit, rec));
  } else if (kind == "driver_kernel") {
    add(rec, Fact::Kind::driver_version, rec.proc, v, "kernel", evidence_of(hit, rec));
  } else if (kind == "api_mismatch") {
    // The client's version on this line; the module's here too (syslog) or on an NVRM: line after.
    if (!v.empty()) add(rec, Fact::Kind::driver_version, rec.proc, v, "user", evidence_of(hit, rec));
    if (hit.has(Field::found))
      add(rec, Fact::Kind::driver_version, rec.proc, std::string(hit.get(Field::found)), "kernel", evidence_of(hit, rec));
    else
      open_block("env.nvrm", hit, rec, v.empty() ? "client" : "kernel");
  } else if (!hit.has(Field::version) && hit.has(Field::found)) {
    add(rec, Fact::Kind::driver_version, rec.proc, std::string(hit.get(Field::found)), "user", evidence_of(hit, rec));
  } else {
    // apt history's "Upgrade: pkg (old, new)": the libraries are the new version now.
    add(rec, Fact::Kind::driver_version, rec.proc, v, "user", evidence_of(hit, rec));
    if (hit.has(Field::found))
      add(rec, Fact::Kind::driver_version, rec.proc, std::string(hit.get(Field::found)), "user-before", evidence_of(hit, rec));
  }
}

}  // namespace

// Prose puts several versions on one line ("updated to `nvidia-driver-550:amd64 N`, but
// /proc/driver/nvidia/version reports `NVRM version: ... N`"): every driver entry but the one
// that read the line is tried on it too.
void env_driver_facts(Record& rec, const Signal* except) {
  static const char* const kDriverEntries[] = {"env.nvrm_version", "env.driver_package", "env.driver_package_plain",
                                               "env.nvidia_smi_header", "env.driver_collect_env"};
  const Matcher& m = rec.r.matcher();
  for (const char* id : kDriverEntries) {
    int i = m.index_of(id);
    Hit h;
    if (i < 0 || &m.table().signals[static_cast<size_t>(i)] == except || !m.match_entry(i, rec.text, &h)) continue;
    read_driver(h, rec, h.signal->kind);
  }
}

void read_env(const Hit& hit, Record& rec) {
  const std::string& kind = hit.signal->kind;
  std::string v(hit.get(Field::version));
  if (kind == "prompt") {
    read_prompt(hit, rec);
  } else if (kind == "torch_version") {
    add(rec, Fact::Kind::torch_version, rec.proc, v, cuda_of_suffix(hit.get(Field::cuda)), evidence_of(hit, rec));
  } else if (kind == "torch_cuda") {
    add(rec, Fact::Kind::torch_version, rec.proc, "", std::string(hit.get(Field::cuda)), evidence_of(hit, rec));
  } else if (kind == "cuda_runtime") {
    add(rec, Fact::Kind::cuda_runtime, rec.proc, v, "", evidence_of(hit, rec));
  } else if (starts(kind, "driver_") || kind == "api_mismatch") {
    read_driver(hit, rec, kind);
    env_driver_facts(rec, hit.signal);
  } else if (kind == "nccl_package") {
    add(rec, Fact::Kind::nccl_file, rec.proc, "conda " + std::string(hit.get(Field::name)), v, evidence_of(hit, rec));
  } else if (kind == "nccl_file") {
    std::string_view path = hit.get(Field::path);
    // A package file names its version itself (libnccl-2.11.4-1+cuda11.4.x86_64.rpm).
    std::string ver = hit.has(Field::version) ? v : version_of_file(hit.has(Field::value) ? hit.get(Field::value) : path);
    if (ver.empty()) ver = version_of_file(path);
    add(rec, Fact::Kind::nccl_file, rec.proc, std::string(cut(path, 200)), ver, evidence_of(hit, rec));
  } else if (kind == "pip_show") {
    open_block("env.pip_show", hit, rec, std::string(hit.get(Field::name)));
  } else if (kind == "sys_module_open") {
    open_block("env.sys_module", hit, rec, {});
  } else if (kind == "torch_nccl_open") {
    open_block("env.torch_nccl", hit, rec, {});
  } else if (kind == "cdll") {
    rec.st.cdll = std::string(cut(hit.get(Field::library), 200));
  } else if (kind == "symbol_probe") {
    std::string sym(hit.get(Field::symbol));
    std::string lib = rec.st.cdll.empty() ? "the library loaded with ctypes" : rec.st.cdll;
    if (hit.get(Field::value) == "False") add(rec, Fact::Kind::nccl_symbol_absent, rec.proc, sym, lib, evidence_of(hit, rec));
    else if (!hit.has(Field::value)) open_block("env.hasattr", hit, rec, sym);
  }
}

// Horovod 0.20+: the header opens the report; "Missing ranks:" and "N: [names]" lines follow.
void read_horovod_stall(const Hit& hit, Record& rec) {
  if (!rec.st.block.empty()) end_block(rec.r, rec.st);
  FileState& st = rec.st;
  Reported& r = st.horovod_report;
  r = Reported();
  r.kind = Reported::Kind::missing_ranks;
  r.who = rec.r.who_of(rec.proc);
  r.evidence = evidence_of(hit, rec);
  r.detail = "Horovod stall report: missing ranks";
  st.horovod = true;
  st.ready_lists.clear();
  st.ready_ops.clear();
  st.block = "env.horovod";
  st.env_name.clear();
  ++rec.r.records;
  // A paste that glued the list onto the header.
  size_t m = rec.text.find("Missing ranks:");
  if (m == std::string_view::npos) m = rec.text.find("Stalled ranks:");
  if (m != std::string_view::npos) env_line(rec.text.substr(m), rec);
}

namespace {

// One line inside Horovod's report. env_name is "open" while a "N: [" list has not closed.
bool horovod_line(std::string_view t, Record& rec) {
  FileState& st = rec.st;
  // "Stalled ranks:" in newer releases: the same list, the ranks that did not submit the tensors.
  if (starts(t, "Missing ranks:") || starts(t, "Stalled ranks:")) {
    t = trim(t.substr(14));
    if (t.empty()) return true;
  }
  size_t colon = t.find(": [");
  bool numbered = colon != std::string_view::npos && colon > 0 && colon <= 7 &&
                  std::all_of(t.begin(), t.begin() + static_cast<long>(colon), is_digit);
  // Line repair takes a leading "3: " for srun's task label: here it is the rank.
  bool labelled = !numbered && rec.lab.task >= 0 && starts(t, "[");
  if (numbered || labelled) {
    long long k = numbered ? to_ll(t.substr(0, colon)) : rec.lab.task;
    auto& ranks = st.horovod_report.ranks;
    if (k >= 0 && k < kMaxRank && std::find(ranks.begin(), ranks.end(), k) == ranks.end())
      ranks.push_back(static_cast<int>(k));
    std::string_view names = numbered ? t.substr(colon + 3) : t.substr(1);
    std::string first(cut(names.substr(0, names.find_first_of(", ]")), 120));
    Reported& rep = st.horovod_report;
    if (rep.op.empty()) {
      rep.op = first;
      rep.detail = fmt::format("rank {} waits for {}", k, first);
    } else if (!rep.ranks.empty() && rep.ranks.back() == k && first != rep.op && rep.detail.size() < 400) {
      rep.sides = true;
      rep.detail += fmt::format(", rank {} for {}", k, first);
    }
    st.env_name = t.back() == ']' ? "" : "open";
    return true;
  }
  // A terminal-wrapped tensor list continues until its "]".
  if (st.env_name == "open") {
    if (!t.empty() && t.back() == ']') st.env_name.clear();
    return true;
  }
  return false;
}

// The lines after an NVRM API mismatch ("NVRM: the version 595.80.  Please") or after
// `cat /sys/module/nvidia/version` (a bare version): the kernel module's version, or the client's
// when the first line had none. env_name says which side is still missing.
bool driver_line(std::string_view t, Record& rec) {
  FileState& st = rec.st;
  bool nvrm = st.block == "env.nvrm";
  size_t at = t.find("the version ");
  std::string_view v = nvrm ? (at == std::string_view::npos ? std::string_view() : t.substr(at + 12)) : trim(t);
  size_t end = v.find_first_not_of("0123456789.");
  v = v.substr(0, end);
  while (!v.empty() && v.back() == '.') v.remove_suffix(1);
  bool version = v.size() >= 3 && is_digit(v[0]) && v.find('.') != std::string_view::npos;
  if (nvrm && !starts(t, "NVRM:")) return false;
  if (!nvrm && !version) return false;
  if (!version) return true;  // an NVRM: line without the version yet
  std::string side = !nvrm || st.env_name == "kernel" ? "kernel" : "user";
  if (nvrm && st.env_name == "client") st.env_name = "kernel";
  else st.block.clear();
  Evidence ev = st.env_evidence;
  ev.text = std::string(cut(ev.text + " => " + std::string(trim(t)), kEvidenceChars));
  ev.line = st.line_no;
  add(rec, Fact::Kind::driver_version, st.env_proc, std::string(v), side, std::move(ev));
  return true;
}

}  // namespace

bool env_line(std::string_view t, Record& rec) {
  FileState& st = rec.st;
  if (st.block == "env.horovod") return horovod_line(t, rec);
  if (st.block == "env.pip_show") {
    if (starts(t, "Version:")) {
      std::string v(trim(t.substr(8)));
      if (v.empty() || !is_digit(v[0])) return false;
      block_fact(rec, Fact::Kind::nccl_wheel, v, st.env_name, t);
      return true;
    }
    return false;
  }
  if (st.block == "env.torch_nccl") {
    std::string v = torch_nccl_output(t);
    if (v.empty()) return false;
    block_fact(rec, Fact::Kind::torch_nccl, v, "", t);
    return true;
  }
  if (st.block == "env.nvrm" || st.block == "env.sys_module") return driver_line(t, rec);
  if (st.block == "env.hasattr") {
    std::string_view a = trim(t);
    if (a != "False" && a != "True") return false;
    if (a == "False") {
      std::string lib = st.cdll.empty() ? "the library loaded with ctypes" : st.cdll;
      block_fact(rec, Fact::Kind::nccl_symbol_absent, st.env_name, lib, t);
    }
    st.block.clear();
    return true;
  }
  return false;
}

void read_slurm_oom(const Hit& hit, Record& rec) {
  FileState& st = rec.st;
  ++rec.r.records;
  if (st.have_slurm_oom) return;  // the first one; srun names the tasks
  Failure& f = st.slurm_oom;
  f = Failure();
  f.kind = Failure::Kind::oom;
  f.who = rec.r.who_of(rec.proc);
  f.what = "host memory: Slurm's cgroup OOM killer: " + short_what(hit.get(Field::what));
  f.when = rec.lab.when;
  f.evidence = evidence_of(hit, rec);
  st.have_slurm_oom = true;
  st.slurm_oom_claimed = false;
}

// srun's "HOST: task N: Out Of Memory" (or "tasks 1-3,7: ..."): those tasks ran out of host
// memory, each its own failure; srun's other lines are the launcher's report.
void read_slurm_task(const Hit& hit, Record& rec) {
  std::string_view what = hit.get(Field::what);
  if (what.find("Out Of Memory") == std::string_view::npos) {
    read_launcher(hit, rec);
    return;
  }
  size_t at = hit.text.find(": task");
  if (at == std::string_view::npos) return;
  std::string_view list = hit.text.substr(at + 6);
  if (!list.empty() && list[0] == 's') list.remove_prefix(1);
  list = trim(list.substr(0, list.find(':')));
  std::vector<int> tasks;
  for (size_t i = 0; i < list.size() && tasks.size() < 4096;) {
    size_t end = list.find(',', i);
    std::string_view part = list.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i);
    std::vector<int> ends = int_list(part);
    if (ends.size() == 1) tasks.push_back(ends[0]);
    for (int k = ends.size() == 2 ? ends[0] : 1; ends.size() == 2 && k <= ends[1] && tasks.size() < 4096; ++k) tasks.push_back(k);
    if (end == std::string_view::npos) break;
    i = end + 1;
  }
  std::string host(cut(hit.get(Field::host), 128));
  FileState& st = rec.st;
  size_t d = st.slurm_oom.what.find("Detected");
  std::string oom = st.have_slurm_oom && d != std::string::npos ? st.slurm_oom.what.substr(d) : std::string();
  for (int k : tasks) {
    Failure f;
    f.kind = Failure::Kind::oom;
    f.who = Who{-1, k, host, fmt::format("rank {}", k)};
    f.what = fmt::format("Out Of Memory (host memory): srun reports task {} on {} killed by the cgroup OOM killer{}", k,
                         host, oom.empty() ? "" : " (" + oom + ")");
    f.when = rec.lab.when.known() ? rec.lab.when : st.slurm_oom.when;
    f.evidence = evidence_of(hit, rec);
    rec.r.add_failure(std::move(f));
  }
  if (!tasks.empty()) st.slurm_oom_claimed = true;
}

void end_env(LogReader& r, FileState& st) {
  if (st.have_slurm_oom && !st.slurm_oom_claimed) r.add_failure(st.slurm_oom);
  st.have_slurm_oom = false;
  st.slurm_oom_claimed = false;
  st.cdll.clear();
}

}  // namespace denpex::evidence
