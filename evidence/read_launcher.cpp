// Launcher lines: a worker's exit as torchelastic, DeepSpeed, mp.spawn, srun or mpirun reports
// it (the launcher's claim, checked against the ranks' own lines by diagnose/blame), and the
// workers a launcher stopped (collateral). Open MPI's end-of-job block spans two lines: the
// first failed process's name, then its exit code.
#include <climits>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

// The process with this pid (from its NCCL header), or a new one named by it.
int process_of_pid(LogReader& r, long long pid) {
  for (size_t i = 0; i < r.processes.size(); ++i)
    if (r.processes[i].pid == pid) return static_cast<int>(i);
  int idx = r.process_by_key(fmt::format("pid {}", pid), -1);
  r.processes[static_cast<size_t>(idx)].pid = pid;
  return idx;
}

std::string signal_name(std::string_view s) {
  long long n = to_ll(s);
  if (n == 9) return "SIGKILL";
  if (n == 15) return "SIGTERM";
  if (n == 6) return "SIGABRT";
  if (n == 11) return "SIGSEGV";
  return std::string(s);
}

// A launcher's line naming a job rank with its host and pid ("process rank 0 with PID 8445 on
// node gpu-k3") names the process its own lines ("[gpu-k3:08445] Signal: ...") are from.
void name_process_by_launcher(LogReader& r, const LauncherEntry& e) {
  if (e.local || e.rank < 0 || e.pid <= 0 || e.host.empty()) return;
  int idx = r.find_process(fmt::format("{}:{}", e.host, e.pid));
  if (!r.valid_process(idx)) return;
  Process& p = r.processes[static_cast<size_t>(idx)];
  if (p.rank < 0 || p.rank_weak) {
    p.rank = e.rank;
    p.rank_weak = false;
  }
}

}  // namespace

void read_launcher(const Hit& hit, Record& rec) {
  long long pid = to_ll(hit.get(Field::pid));
  if (hit.signal->kind == "kill") {
    if (pid < 0) return;
    Failure f;
    f.kind = Failure::Kind::killed;
    f.who = rec.r.who_of(process_of_pid(rec.r, pid));
    f.what = std::string(cut(trim(hit.text), 160));
    f.when = rec.lab.when;
    f.evidence = rec.r.evidence(rec.st, rec.text);
    f.evidence.signal = hit.signal->id;
    rec.r.add_failure(std::move(f));
    return;
  }
  LauncherEntry e;
  long long rank = to_ll(hit.get(Field::rank));
  long long local = to_ll(hit.get(Field::local_rank));
  e.local = rank < 0 && local >= 0;
  long long r = rank >= 0 ? rank : local;
  e.rank = r >= 0 && r < kMaxRank ? static_cast<int>(r) : -1;
  e.host = std::string(cut(hit.get(Field::host), 128));
  if (e.host.empty()) e.host = rec.lab.host;
  e.pid = pid;
  e.when = rec.lab.when;
  e.exitcode = std::string(hit.has(Field::exit_code) ? hit.get(Field::exit_code) : cut(trim(hit.get(Field::what)), 60));
  e.signal = signal_name(hit.get(Field::signal));
  if (e.signal.empty() && (e.exitcode.find("Killed") != std::string::npos || e.exitcode == "-9")) e.signal = "SIGKILL";
  e.evidence = rec.r.evidence(rec.st, rec.text);
  e.evidence.signal = hit.signal->id;
  name_process_by_launcher(rec.r, e);
  rec.r.add_launcher(std::move(e));
}

void read_mpirun_first(const Hit& hit, Record& rec) {
  if (!rec.st.block.empty()) end_block(rec.r, rec.st);
  LauncherEntry e;
  long long rank = to_ll(hit.get(Field::rank));
  e.rank = rank >= 0 && rank < kMaxRank ? static_cast<int>(rank) : -1;
  e.host = rec.lab.host;
  e.when = rec.lab.when;
  // mpirun's claim of the first failure, as torchrun's "Root Cause" is torchrun's.
  e.root_cause = true;
  e.launcher = "mpirun";
  e.evidence = rec.r.evidence(rec.st, rec.text);
  e.evidence.signal = hit.signal->id;
  // A paste that lost the layout glues the exit code onto the name's line.
  if (hit.has(Field::exit_code)) {
    e.exitcode = std::string(hit.get(Field::exit_code));
    rec.r.add_launcher(std::move(e));
    return;
  }
  rec.st.entry = std::move(e);
  rec.st.have_entry = true;
  rec.st.block = "mpirun";
}

bool mpirun_line(std::string_view t, Record& rec) {
  constexpr std::string_view kExit = "Exit code:";
  FileState& st = rec.st;
  if (!st.have_entry || t.substr(0, kExit.size()) != kExit) return false;
  std::string_view code = trim(t.substr(kExit.size()));
  code = code.substr(0, code.find(' '));
  if (to_ll(code, LLONG_MIN) == LLONG_MIN) return false;
  st.entry.exitcode = std::string(code);
  st.entry.evidence.text += " " + std::string(cut(t, 80));
  rec.r.add_launcher(std::move(st.entry));
  st.entry = LauncherEntry();
  st.have_entry = false;
  return true;
}

}  // namespace denpex::evidence
