#include "evidence/collective_log.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

// Each member's calls are converted chunk by chunk, each chunk freed once converted: the
// reader's copy and the analyser's are never both held in full.
void add_sequences(LogReader& r, const std::string& path, CollectiveInput* in) {
  in->sequences.reserve(r.all_calls.size());
  for (auto& m : r.all_calls) {
    CommSequence s;
    s.comm = m.comm;
    s.rank = m.rank_in_comm;
    s.nranks = m.nranks;
    if (r.valid_process(m.proc)) {
      const Process& p = r.processes[static_cast<size_t>(m.proc)];
      s.global_rank = p.rank;
      s.host = p.host;
      s.pid = p.pid;
    }
    s.source = path;
    s.cut = !r.cuts.empty();
    s.calls.reserve(m.count);
    for (auto& chunk : m.calls) {
      for (const auto& c : chunk) s.calls.push_back(to_collective_call(c, c.line));
      std::vector<CollCall>().swap(chunk);
    }
    m.calls.clear();
    in->sequences.push_back(std::move(s));
  }
}

// Watchdog lines of one rank and group merge into one state (the timeout line and the "last
// enqueued" line are separate); a line without a group takes the only group the log names.
void add_watchdog(const LogReader& r, const std::string& path, CollectiveInput* in) {
  std::map<std::pair<std::string, int>, WatchdogState> states;
  std::set<std::string> named;
  for (const auto& w : r.watch)
    if (!w.fingerprint && !w.group.empty()) named.insert(w.group);
  for (const auto& w : r.watch) {
    if (w.fingerprint) continue;
    std::string group = !w.group.empty() ? w.group : named.size() == 1 ? *named.begin() : std::string("default");
    if (group.rfind("PG ", 0) == 0) group = "pg " + group.substr(3);
    int global = -1;
    if (r.valid_process(w.who.index) && !r.processes[static_cast<size_t>(w.who.index)].rank_weak) global = w.who.rank;
    WatchdogState& s = states[{group, global >= 0 ? global : w.group_rank}];
    s.group = group;
    s.rank = w.group_rank;
    s.global_rank = global;
    s.host = w.who.host;
    s.source = path;
    if (s.seq < 0 && (w.seq >= 0 || !w.op.empty()) && w.last_enqueued < 0) {
      s.seq = w.seq;
      s.op_type = w.op;
      s.numel_in = w.numel_in;
      s.numel_out = w.numel_out;
    }
    if (w.last_enqueued >= 0) s.last_enqueued = w.last_enqueued;
    if (w.last_completed >= 0) s.last_completed = w.last_completed;
  }
  for (auto& kv : states) in->watchdog.push_back(std::move(kv.second));
}

}  // namespace

CollectiveInput read_collective_log(ByteSource* src, const std::string& path, int read_threads) {
  CollectiveInput in;
  in.path = path;
  in.format = "log";
  LogReader r(/*keep_all_calls=*/true);
  if (read_threads > 0) r.set_read_threads(read_threads);
  std::string error;
  if (!r.read(src, path, &error)) {
    in.status = CollectiveInput::Status::malformed;
    in.error = error;
    return in;
  }
  r.finish();
  add_sequences(r, path, &in);
  add_watchdog(r, path, &in);
  in.lines = r.lines;
  if (!r.cuts.empty()) in.cut = r.cuts.front().cut;
  in.used = r.records;
  in.unreadable = r.unreadable.count;
  for (const auto& e : r.unreadable.samples) in.unreadable_samples.push_back(fmt::format("{}:{}: {}", path, e.line, e.text));
  in.unattributed_calls = r.unattributed_calls;
  std::set<std::string> hosts;
  for (const auto& s : in.sequences)
    if (!s.host.empty()) hosts.insert(s.host);
  for (const auto& p : r.processes)
    if (!p.host.empty() && p.key.find(':') != std::string::npos) hosts.insert(p.host);
  in.hosts.assign(hosts.begin(), hosts.end());
  return in;
}

CollectiveInput read_collective_log(const std::string& path, int read_threads, const DecodeLimits& limits) {
  OpenedInput o = open_input(path, limits);
  if (o.status == OpenedInput::Status::corrupt) {
    // Damaged from its first bytes: nothing to read, and the other inputs are still judged.
    CollectiveInput in;
    in.path = path;
    in.format = "log";
    in.cut = o.cut;
    return in;
  }
  if (o.status != OpenedInput::Status::ok) {
    CollectiveInput in;
    in.path = path;
    in.format = "log";
    in.status = o.status == OpenedInput::Status::missing ? CollectiveInput::Status::missing : CollectiveInput::Status::malformed;
    in.error = o.message;
    return in;
  }
  return read_collective_log(o.source.get(), path, read_threads);
}

}  // namespace denpex::evidence
