#include "evidence/collective_trace.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evidence/line_reader.h"
#include "evidence/line_repair.h"
#include "collect/trace_format.h"

namespace denpex {

namespace {

using nlohmann::json;

constexpr const char* kSchema = "denpex.trace.v1";
namespace tf = trace_format;

// Reads an integer field that may be absent or null; `fallback` then. An unsigned value past
// long long's range is LLONG_MAX (never wrapped negative).
long long int_field(const json& j, const char* key, long long fallback) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  if (it->is_number_unsigned() && it->get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX))
    return LLONG_MAX;
  return it->get<long long>();
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}


// Name and kind of a v2 slot's operation; false for an operation this reader does not know.
bool op_info(int32_t op, std::string* name, bool* call, bool* life) {
  struct Info { int32_t op; const char* name; bool call; bool life; };
  static constexpr Info kInfo[] = {
      {tf::kOpAllReduce, "AllReduce", true, false},        {tf::kOpAllGather, "AllGather", true, false},
      {tf::kOpReduceScatter, "ReduceScatter", true, false}, {tf::kOpBroadcast, "Broadcast", true, false},
      {tf::kOpBcast, "Broadcast", true, false},            {tf::kOpReduce, "Reduce", true, false},
      {tf::kOpAlltoAll, "AlltoAll", true, false},          {tf::kOpGather, "Gather", true, false},
      {tf::kOpScatter, "Scatter", true, false},            {tf::kOpSend, "Send", true, false},
      {tf::kOpRecv, "Recv", true, false},                  {tf::kOpGroupStart, "GroupStart", false, false},
      {tf::kOpGroupEnd, "GroupEnd", false, false},         {tf::kOpCommInitRank, "CommInitRank", false, true},
      {tf::kOpCommInitRankConfig, "CommInitRankConfig", false, true},
      {tf::kOpCommInitAll, "CommInitAll", false, true},    {tf::kOpCommSplit, "CommSplit", false, true},
      {tf::kOpCommInitRankScalable, "CommInitRankScalable", false, true},
      {tf::kOpCommShrink, "CommShrink", false, true},      {tf::kOpCommFinalize, "CommFinalize", false, true},
      {tf::kOpCommDestroy, "CommDestroy", false, true},    {tf::kOpCommAbort, "CommAbort", false, true},
      {tf::kOpCommRevoke, "CommRevoke", false, true},
  };
  for (const auto& i : kInfo)
    if (i.op == op) {
      *name = i.name;
      *call = i.call;
      *life = i.life;
      return true;
    }
  return false;
}

// The v2 control block, checked against the header; false with in->status set when it is not.
bool read_control(std::ifstream& f, const json& header, CollectiveInput* in, tf::TraceControl* ctl,
                  unsigned long long* size) {
  auto malformed = [in](std::string why) {
    in->status = CollectiveInput::Status::malformed;
    in->error = std::move(why);
    return false;
  };
  f.clear();
  f.seekg(0, std::ios::end);
  *size = static_cast<unsigned long long>(f.tellg());
  f.seekg(static_cast<std::streamoff>(tf::kHeaderBytes));
  if (*size < tf::kRingOffset || !f.read(reinterpret_cast<char*>(ctl), sizeof *ctl))
    return malformed(fmt::format("{} header but the file ends before its control block ({} bytes)", tf::kSchemaV2, *size));
  if (std::memcmp(ctl->magic, tf::kMagic, sizeof ctl->magic) != 0 || ctl->version != tf::kVersion ||
      ctl->slot_bytes != tf::kSlotBytes || ctl->ring_offset != tf::kRingOffset ||
      (ctl->slots != 0 && ((ctl->slots & (ctl->slots - 1)) != 0 || ctl->slots > tf::kMaxSlots)) ||
      static_cast<long long>(ctl->slots) != int_field(header, "slots", -1))
    return malformed(fmt::format("{} control block does not match its header (not written by this libdenpex-trace.so?)",
                                 tf::kSchemaV2));
  return true;
}

// What the control block says about the traced process.
TracedProcess traced_process(const tf::TraceControl& ctl, const json& header, const std::string& path) {
  TracedProcess proc;
  proc.source = path;
  proc.host = string_field(header, "host");
  proc.pid = ctl.pid;
  proc.global_rank = ctl.rank;
  proc.calls = static_cast<long long>(ctl.next);
  proc.overwritten = ctl.next > ctl.slots ? static_cast<long long>(ctl.next - ctl.slots) : 0;
  proc.dropped = static_cast<long long>(ctl.dropped);
  proc.nccl_mapped.assign(ctl.nccl_mapped, strnlen(ctl.nccl_mapped, sizeof ctl.nccl_mapped));
  proc.end = ctl.state == tf::kStateExited      ? TracedProcess::End::exited
             : ctl.state == tf::kStateSignalled ? TracedProcess::End::signalled
             : ctl.state == tf::kStateRunning   ? TracedProcess::End::killed_or_running
                                                : TracedProcess::End::unknown;
  proc.signal = ctl.signal;
  proc.ended_ns = ctl.ended_ns > 0 ? static_cast<long long>(ctl.ended_ns) : -1;
  return proc;
}

CollectiveCall slot_call(const tf::TraceSlot& sl, const std::string& name) {
  CollectiveCall c;
  c.op_name = name;
  c.kind = parse_coll_kind(name);
  c.count = sl.count;
  c.datatype = sl.dtype;
  c.redop = sl.redop;
  c.root = sl.root;
  c.peer = sl.peer;
  c.trace_seq = sl.comm_seq;
  c.coll_seq = sl.coll_seq;
  c.state = sl.t_return != 0 ? CallState::returned : CallState::in_flight;
  c.entered_ns = static_cast<long long>(sl.t_enter);
  c.returned_ns = sl.t_return != 0 ? static_cast<long long>(sl.t_return) : -1;
  c.status = sl.t_return != 0 ? sl.status : -1;
  c.in_group = sl.depth > 0;
  return c;
}

// The slots of one v2 ring, in call order, into the input's sequences.
class RingReader {
 public:
  RingReader(const tf::TraceControl& ctl, TracedProcess* proc, CollectiveInput* in) : ctl_(ctl), proc_(proc), in_(in) {}

  void add(const tf::TraceSlot& sl) {
    ++proc_->recorded;
    std::string name;
    bool is_call = false, is_life = false;
    if (!op_info(sl.op, &name, &is_call, &is_life)) {
      note_unreadable(in_, static_cast<long long>(sl.seq), fmt::format("slot of call {}: unknown operation {}", sl.seq, sl.op));
      return;
    }
    ++in_->used;
    ++proc_->ops[name];
    CollectiveCall c = slot_call(sl, name);
    if (c.state == CallState::in_flight) ++proc_->in_flight;
    if (sl.op == tf::kOpGroupEnd && sl.depth <= 1) return group_end(sl, c);
    if (!is_call && !is_life) return;  // GroupStart, inner GroupEnd
    if ((sl.flags & tf::kFlagCommKnown) == 0 || sl.rank < 0) return unattributed(sl, c, is_call, name);
    const size_t at_seq = sequence_of(sl);
    CommSequence& seq = in_->sequences[at_seq];
    if (sl.nranks > 0) seq.nranks = sl.nranks;
    if (is_life) {
      seq.comm_calls.push_back(std::move(c));
      return;
    }
    seq.calls.push_back(std::move(c));
    if (sl.depth > 0) open_group_[sl.tid].emplace_back(at_seq, seq.calls.size() - 1);
  }

 private:
  // An outermost GroupEnd still in flight leaves every call of its group in flight.
  void group_end(const tf::TraceSlot& sl, const CollectiveCall& c) {
    auto& grouped = open_group_[sl.tid];
    for (const auto& g : grouped)
      if (c.state == CallState::in_flight) in_->sequences[g.first].calls[g.second].state = CallState::in_flight;
    if (c.state == CallState::in_flight && grouped.empty())
      proc_->in_flight_unattributed.push_back("ncclGroupEnd (no grouped call on a known communicator recorded)");
    grouped.clear();
  }

  void unattributed(const tf::TraceSlot& sl, const CollectiveCall& c, bool is_call, const std::string& name) {
    if (is_call) ++in_->unattributed_calls;
    if (c.state != CallState::in_flight) return;
    const bool known = (sl.flags & tf::kFlagCommKnown) != 0;
    proc_->in_flight_unattributed.push_back(
        fmt::format("{} ({} {})", is_call ? describe(c) : name, known ? "communicator" : "communicator handle",
                    known ? fmt::format("{:016x}", sl.comm) : fmt::format("0x{:x}", sl.comm)));
  }

  // (communicator id, rank in it) -> in->sequences[i]; keyed by number so that the comm's name
  // is formatted once per sequence, not once per call.
  size_t sequence_of(const tf::TraceSlot& sl) {
    auto key = std::make_pair(static_cast<uint64_t>(sl.comm), static_cast<int>(sl.rank));
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    CommSequence q;
    q.comm = fmt::format("{:016x}", sl.comm);
    q.rank = sl.rank;
    q.nranks = sl.nranks;
    q.global_rank = ctl_.rank;
    q.host = proc_->host;
    q.pid = ctl_.pid;
    q.source = in_->path;
    it = index_.emplace(key, in_->sequences.size()).first;
    in_->sequences.push_back(std::move(q));
    return it->second;
  }

  const tf::TraceControl& ctl_;
  TracedProcess* proc_;
  CollectiveInput* in_;
  std::map<std::pair<uint64_t, int>, size_t> index_;
  // Calls made inside the open outermost group of each thread: (sequence, call) indexes.
  std::map<int, std::vector<std::pair<size_t, size_t>>> open_group_;
};

// The v2 ring: control block checked against the header, valid slots in call order.
void read_v2(std::ifstream& f, const json& header, CollectiveInput* in) {
  tf::TraceControl ctl{};
  unsigned long long size = 0;
  if (!read_control(f, header, in, &ctl, &size)) return;
  TracedProcess proc = traced_process(ctl, header, in->path);
  if (!proc.host.empty()) in->hosts.push_back(proc.host);
  // A file cut short (a full disk, a copy interrupted) keeps the slots it has.
  const unsigned long long fit = (size - tf::kRingOffset) / tf::kSlotBytes;
  const unsigned long long nslots = std::min<unsigned long long>(ctl.slots, fit);
  in->lines = 1;
  RingReader ring(ctl, &proc, in);
  // Calls in order, oldest kept first: call q is in slot (q-1) mod N, so the ring is read from
  // the oldest call's slot round to the newest, a chunk at a time, and never held whole.
  std::vector<tf::TraceSlot> chunk(static_cast<size_t>(std::min<unsigned long long>(nslots, 65536)));
  unsigned long long chunk_begin = 0, chunk_end = 0;  // slot indexes in `chunk`
  const unsigned long long first = ctl.next > ctl.slots ? ctl.next - ctl.slots + 1 : 1;
  for (unsigned long long q = first; ctl.slots > 0 && q <= ctl.next && q != 0; ++q) {
    const unsigned long long at = (q - 1) & (ctl.slots - 1);
    if (at >= nslots) {  // beyond the end of a cut file
      ++proc.torn;
      continue;
    }
    if (at < chunk_begin || at >= chunk_end) {
      size_t n = static_cast<size_t>(std::min<unsigned long long>(chunk.size(), nslots - at));
      f.clear();
      f.seekg(static_cast<std::streamoff>(tf::kRingOffset + at * tf::kSlotBytes));
      if (!f.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(n * sizeof(tf::TraceSlot)))) {
        ++proc.torn;
        continue;
      }
      chunk_begin = at;
      chunk_end = at + n;
    }
    const tf::TraceSlot& sl = chunk[static_cast<size_t>(at - chunk_begin)];
    // Anything but this call's number is a slot cut while being written (0) or never finished.
    if (sl.seq != q) {
      ++proc.torn;
      continue;
    }
    ring.add(sl);
  }
  for (auto& seq : in->sequences) {
    seq.truncated = proc.overwritten > 0 || proc.torn > 0;
    seq.calls.shrink_to_fit();  // a full ring is 262,144 calls: no doubling slack kept per rank
  }
  in->processes.push_back(std::move(proc));
}

// One v1 "call" record (a JSON object with ev "call") into its sequence. Returns false, adding
// nothing, when a rank, size, root or peer in it is out of range.
bool v1_call(const json& j, const std::string& comm, const json& header, const std::string& path,
             std::map<std::pair<std::string, int>, size_t>* index, CollectiveInput* in) {
  for (const char* key : {"rank", "nranks", "root", "peer"})
    if (!evidence::rank_like(int_field(j, key, -1))) return false;
  if (!evidence::rank_like(int_field(header, "rank", -1))) return false;
  int rank = static_cast<int>(int_field(j, "rank", -1));
  if (comm.rfind("local:", 0) == 0 || rank < 0) {
    ++in->unattributed_calls;
    return true;
  }
  auto key = std::make_pair(comm, rank);
  auto it = index->find(key);
  if (it == index->end()) {
    CommSequence s;
    s.comm = comm;
    s.rank = rank;
    s.nranks = static_cast<int>(int_field(j, "nranks", -1));
    s.global_rank = static_cast<int>(int_field(header, "rank", -1));
    s.host = string_field(header, "host");
    s.pid = int_field(header, "pid", -1);
    s.source = path;
    it = index->emplace(key, in->sequences.size()).first;
    in->sequences.push_back(std::move(s));
  }
  CollectiveCall c;
  c.op_name = string_field(j, "op");
  c.kind = parse_coll_kind(c.op_name.view());
  c.count = static_cast<unsigned long long>(int_field(j, "count", 0));
  c.datatype = static_cast<int>(int_field(j, "dtype", -1));
  c.redop = static_cast<int>(int_field(j, "redop", -1));
  c.root = static_cast<int>(int_field(j, "root", -1));
  c.peer = static_cast<int>(int_field(j, "peer", -1));
  c.trace_seq = int_field(j, "seq", -1);
  in->sequences[it->second].calls.push_back(c);
  return true;
}

// The v1 records after the header line: JSON lines, one event each.
void read_v1(evidence::LineReader& lines, const json& header, const std::string& path, CollectiveInput* in) {
  std::string host = string_field(header, "host");
  if (!host.empty()) in->hosts.push_back(host);
  std::map<std::pair<std::string, int>, size_t> index;  // (comm, rank in comm) -> sequences[i]
  std::string line;
  bool cut = false;
  while (lines.next(&line, &cut)) {
    ++in->lines;
    if (line.empty()) continue;
    if (cut) {  // no trace record is this long
      note_unreadable(in, in->lines, line);
      continue;
    }
    json j = json::parse(line, nullptr, false);
    std::string ev = j.is_object() ? string_field(j, "ev") : std::string();
    if (ev == "group_start" || ev == "group_end") {
      ++in->used;
      continue;
    }
    std::string comm = ev.empty() ? std::string() : string_field(j, "comm");
    if (ev.empty() || comm.empty()) {
      note_unreadable(in, in->lines, line);
      continue;
    }
    ++in->used;
    if (ev == "comm") continue;  // the calls carry rank and size themselves
    if (ev != "call") {
      note_unreadable(in, in->lines, line);
      continue;
    }
    if (!v1_call(j, comm, header, path, &index, in)) note_unreadable(in, in->lines, line);
  }
}

}  // namespace

bool is_collective_trace(const std::string& first_line) {
  json j = json::parse(first_line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  std::string schema = string_field(j, "schema");
  return schema == kSchema || schema == tf::kSchemaV2;
}

CollectiveInput read_collective_trace(const std::string& path) {
  CollectiveInput in;
  in.path = path;
  in.format = "trace";
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    in.status = CollectiveInput::Status::missing;
    in.error = "cannot open file";
    return in;
  }
  std::string line;
  bool cut = false;
  // Lines are read through the room's one bounded reader; no trace record is longer than 16 KiB.
  std::unique_ptr<evidence::ByteSource> src = evidence::stream_source(&f);
  evidence::LineReader lines(src.get(), 16 * 1024);
  if (!lines.next(&line, &cut) || cut || !is_collective_trace(line)) {
    in.status = CollectiveInput::Status::malformed;
    in.error = fmt::format("first line is not a {} or {} header", kSchema, tf::kSchemaV2);
    return in;
  }
  in.lines = 1;
  json header = json::parse(line, nullptr, false);
  if (string_field(header, "schema") == tf::kSchemaV2)
    read_v2(f, header, &in);
  else
    read_v1(lines, header, path, &in);
  return in;
}

}  // namespace denpex
