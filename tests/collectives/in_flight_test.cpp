// compare/collectives on recorder v2 sequences (calls with entry/return state and collective
// numbers), and evidence/collective_trace reading v2 files written here byte by byte per
// collect/trace_format.h: torn slots, a wrapped ring, a group whose End is in flight.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "evidence/collective_trace.h"
#include "collect/trace_format.h"
#include "compare/collectives.h"

using namespace denpex;
namespace tf = denpex::trace_format;

namespace {

constexpr long long kT0 = 1796115333000000000LL;  // 2026-12-01 08:55:33 UTC

// Rank r of comm "c" (4 ranks) having entered AllReduce #first..#last; the last one in flight
// when `stuck`.
CommSequence ranks_calls(int r, long long first, long long last, bool stuck, int nranks = 4) {
  CommSequence s;
  s.comm = "c";
  s.rank = r;
  s.nranks = nranks;
  s.global_rank = r;
  s.host = "n" + std::to_string(r);
  for (long long k = first; k <= last; ++k) {
    CollectiveCall c;
    c.kind = CollKind::all_reduce;
    c.op_name = "AllReduce";
    c.count = 1024;
    c.datatype = 7;
    c.redop = 0;
    c.coll_seq = k;
    c.trace_seq = k;
    c.entered_ns = kT0 + k * 1000000000LL;
    bool in_flight = stuck && k == last;
    c.state = in_flight ? CallState::in_flight : CallState::returned;
    c.returned_ns = in_flight ? -1 : c.entered_ns + 1000;
    c.status = in_flight ? -1 : 0;
    s.calls.push_back(c);
  }
  return s;
}

const Finding* find_code(const std::vector<Finding>& f, const std::string& code) {
  for (const auto& x : f)
    if (code_name(x.code) == code) return &x;
  return nullptr;
}

}  // namespace

TEST_CASE("rank-stuck: the rank in flight in #50 while the others returned from it and wait in #51") {
  std::vector<CommSequence> seqs = {ranks_calls(0, 0, 51, true), ranks_calls(1, 0, 51, true),
                                    ranks_calls(2, 0, 51, true), ranks_calls(3, 0, 50, true)};
  // Rank 1 reached #51 three seconds after the others: still one group, with the earliest time.
  seqs[1].calls.back().entered_ns += 3000000000LL;
  auto f = analyse_sequences(seqs);
  const Finding* s = find_code(f, "rank-stuck");
  REQUIRE(s != nullptr);
  CHECK(s->severity == Severity::error);
  CHECK(s->ranks == std::vector<int>{3});
  CHECK(s->hosts == std::vector<std::string>{"n3"});
  CHECK(s->seq == 50);
  CHECK(s->comm == "c");
  CHECK(s->message ==
        "rank 3 is stuck in AllReduce #50 on communicator c since 2026-12-01 08:56:23 UTC (entered, never returned); "
        "ranks 0-2 returned from #50 and are waiting in AllReduce #51 since 2026-12-01 08:56:24 UTC");
  CHECK(s->found == "in flight since 2026-12-01 08:56:23 UTC: AllReduce(count=1024, float32, sum)");
  CHECK(find_code(f, "collective-in-flight") == nullptr);
  // Its sequence ends at #50 because it is blocked there, not because it skipped #51.
  CHECK(find_code(f, "collective-missing") == nullptr);
  CHECK(f.size() == 1);
}

TEST_CASE("rank-stuck: the others went past and are out of NCCL") {
  std::vector<CommSequence> seqs = {ranks_calls(0, 0, 9, false), ranks_calls(1, 0, 9, false),
                                    ranks_calls(2, 0, 4, true), ranks_calls(3, 0, 9, false)};
  auto f = analyse_sequences(seqs);
  const Finding* s = find_code(f, "rank-stuck");
  REQUIRE(s != nullptr);
  CHECK(s->ranks == std::vector<int>{2});
  CHECK(s->message.find("ranks 0-1,3 returned from #4 and are not in NCCL now (last call: AllReduce #9, returned)") !=
        std::string::npos);
}

TEST_CASE("collective-in-flight names the rank that never entered the call the others wait in") {
  std::vector<CommSequence> seqs = {ranks_calls(0, 0, 5, true), ranks_calls(1, 0, 5, true),
                                    ranks_calls(2, 0, 4, false), ranks_calls(3, 0, 5, true)};
  auto f = analyse_sequences(seqs);
  const Finding* w = find_code(f, "collective-in-flight");
  REQUIRE(w != nullptr);
  CHECK(w->severity == Severity::error);
  CHECK(w->ranks == std::vector<int>{2});
  CHECK(w->message.find("ranks 0-1,3 are waiting in AllReduce #5 on communicator c") == 0);
  CHECK(w->message.find("rank 2 returned from AllReduce #4 and made no call on this communicator since") !=
        std::string::npos);
  CHECK(find_code(f, "rank-stuck") == nullptr);
}

TEST_CASE("everyone in the input waits: a warning naming the waiting ranks and the missing ones") {
  std::vector<CommSequence> seqs = {ranks_calls(0, 0, 7, true, 4), ranks_calls(1, 0, 7, true, 4)};
  auto f = analyse_sequences(seqs);
  const Finding* w = find_code(f, "collective-in-flight");
  REQUIRE(w != nullptr);
  CHECK(w->severity == Severity::warning);
  CHECK(w->ranks == std::vector<int>{0, 1});
  CHECK(w->message.find("2 of the 4 ranks of the communicator are not in the input") != std::string::npos);

  std::vector<CommSequence> all = {ranks_calls(0, 0, 7, true, 2), ranks_calls(1, 0, 7, true, 2)};
  auto g = analyse_sequences(all);
  REQUIRE(find_code(g, "collective-in-flight") != nullptr);
  CHECK(find_code(g, "collective-in-flight")->message.find("the collective itself does not complete") != std::string::npos);
}

TEST_CASE("no state, no in-flight finding: logs and v1 traces do not say whether a call returned") {
  std::vector<CommSequence> seqs = {ranks_calls(0, 0, 5, true), ranks_calls(1, 0, 4, true)};
  for (auto& s : seqs)
    for (auto& c : s.calls) c.state = CallState::unknown;
  auto f = analyse_sequences(seqs);
  CHECK(find_code(f, "rank-stuck") == nullptr);
  CHECK(find_code(f, "collective-in-flight") == nullptr);
}

TEST_CASE("stuck in communicator init while another rank returned from it and went on") {
  CommSequence a = ranks_calls(0, 0, 2, false, 2);
  CommSequence b = ranks_calls(1, 0, -1, false, 2);  // no collective
  CollectiveCall init;
  init.op_name = "CommInitRank";
  init.entered_ns = kT0;
  init.state = CallState::returned;
  a.comm_calls.push_back(init);
  init.state = CallState::in_flight;
  b.comm_calls.push_back(init);
  auto f = analyse_sequences({a, b});
  const Finding* s = find_code(f, "rank-stuck");
  REQUIRE(s != nullptr);
  CHECK(s->ranks == std::vector<int>{1});
  CHECK(s->message.find("rank 1 is stuck in CommInitRank on communicator c") == 0);
}

TEST_CASE("rings that wrapped at different points are aligned by collective number") {
  // Rank 1 differs at collective 180; the rings hold 100.., 150.. and 120.. respectively.
  std::vector<CommSequence> seqs = {ranks_calls(0, 100, 199, false, 3), ranks_calls(1, 150, 249, false, 3),
                                    ranks_calls(2, 120, 230, false, 3)};
  for (auto& s : seqs) s.truncated = true;
  for (auto& c : seqs[1].calls)
    if (c.coll_seq == 180) c.count = 1000;
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{1});
  CHECK(f[0].seq == 180);
}

TEST_CASE("traced processes: NCCL mapped, no call seen, unless another process of that rank made calls") {
  TracedProcess seen, unseen, worker, anonymous;
  seen.global_rank = 0;
  seen.calls = 10;
  unseen.global_rank = 1;
  unseen.nccl_mapped = "/usr/lib/libtorch_cuda.so";
  unseen.host = "n1";
  unseen.pid = 42;
  worker.global_rank = 0;  // a forked data-loader worker of rank 0
  worker.nccl_mapped = "/usr/lib/libnccl.so.2";
  anonymous.nccl_mapped = "/usr/lib/libnccl.so.2";  // no launcher rank: not a rank
  auto f = analyse_traced_processes({seen, unseen, worker, anonymous});
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_rank_unseen);
  CHECK(f[0].severity == Severity::warning);
  CHECK(f[0].ranks == std::vector<int>{1});
  CHECK(f[0].message.find("the recorder could not see rank 1 (pid 42 on n1)") == 0);
  CHECK(f[0].fix.find("NCCL_DEBUG=INFO") != std::string::npos);

  TracedProcess stuck;
  stuck.global_rank = 5;
  stuck.calls = 3;
  stuck.in_flight_unattributed = {"CommSplit (communicator 00000000000000aa)"};
  auto g = analyse_traced_processes({stuck});
  REQUIRE(g.size() == 1);
  CHECK(g[0].code == FindingCode::rank_stuck);
  CHECK(g[0].ranks == std::vector<int>{5});
}

namespace {

// A v2 trace written by hand: `slots` ring slots, `next` calls claimed.
struct V2File {
  std::string path;
  std::vector<char> bytes;
  tf::TraceControl* ctl() { return reinterpret_cast<tf::TraceControl*>(bytes.data() + tf::kHeaderBytes); }
  tf::TraceSlot* slot(uint64_t i) {
    return reinterpret_cast<tf::TraceSlot*>(bytes.data() + tf::kRingOffset) + i;
  }
  V2File(uint64_t slots, uint64_t next) : bytes(tf::kRingOffset + slots * tf::kSlotBytes, 0) {
    char tmpl[] = "/tmp/denpex-v2-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd);
    path = tmpl;
    std::string header = "{\"schema\":\"denpex.trace.v2\",\"host\":\"h\",\"pid\":9,\"rank\":2,\"slots\":" +
                         std::to_string(slots) + "}";
    std::memcpy(bytes.data(), header.data(), header.size());
    std::memset(bytes.data() + header.size(), ' ', tf::kHeaderBytes - 1 - header.size());
    bytes[tf::kHeaderBytes - 1] = '\n';
    std::memcpy(ctl()->magic, tf::kMagic, 8);
    ctl()->version = tf::kVersion;
    ctl()->slot_bytes = tf::kSlotBytes;
    ctl()->slots = slots;
    ctl()->ring_offset = tf::kRingOffset;
    ctl()->next = next;
    ctl()->pid = 9;
    ctl()->rank = 2;
  }
  ~V2File() { std::remove(path.c_str()); }
  // Call `seq` (1-based) as an AllReduce #coll on comm 0xaa, rank 2 of 4.
  tf::TraceSlot* put(uint64_t seq, int32_t op, int64_t coll, bool returned, int depth = 0, int tid = 1) {
    tf::TraceSlot* s = slot((seq - 1) & (ctl()->slots - 1));
    *s = tf::TraceSlot{};
    s->seq = seq;
    s->t_enter = 1000;
    s->t_return = returned ? 2000 : 0;
    s->comm = 0xaa;
    s->flags = tf::kFlagCommKnown;
    s->comm_seq = static_cast<int64_t>(seq);
    s->coll_seq = coll;
    s->op = op;
    s->count = 8;
    s->dtype = 7;
    s->rank = 2;
    s->nranks = 4;
    s->depth = depth;
    s->tid = tid;
    return s;
  }
  void write() {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

}  // namespace

TEST_CASE("v2 reader: wrapped ring, torn slot, killed process") {
  V2File t(1024, 2500);  // 2,500 calls, the newest 1,024 kept
  for (uint64_t q = 1477; q <= 2500; ++q) t.put(q, tf::kOpAllReduce, static_cast<int64_t>(q - 1), true);
  t.slot((2000 - 1) & 1023)->seq = 0;  // torn: killed while writing call 2000
  t.write();
  CollectiveInput in = read_collective_trace(t.path);
  REQUIRE(in.status == CollectiveInput::Status::ok);
  REQUIRE(in.processes.size() == 1);
  const TracedProcess& p = in.processes[0];
  CHECK(p.calls == 2500);
  CHECK(p.overwritten == 1476);
  CHECK(p.recorded == 1023);
  CHECK(p.torn == 1);
  CHECK(p.end == TracedProcess::End::killed_or_running);
  CHECK(p.global_rank == 2);
  REQUIRE(in.sequences.size() == 1);
  const CommSequence& s = in.sequences[0];
  CHECK(s.comm == "00000000000000aa");
  CHECK(s.truncated);
  REQUIRE(s.calls.size() == 1023);
  CHECK(s.calls.front().coll_seq == 1476);
  CHECK(s.calls.back().coll_seq == 2499);
  CHECK(s.calls.back().state == CallState::returned);
}

TEST_CASE("v2 reader: a group whose outermost End is in flight puts its calls in flight") {
  V2File t(1024, 6);
  t.put(1, tf::kOpGroupStart, -1, true, 1)->comm = 0;
  t.put(2, tf::kOpGroupStart, -1, true, 2)->comm = 0;
  t.put(3, tf::kOpSend, -1, true, 2);
  t.put(4, tf::kOpGroupEnd, -1, true, 2)->comm = 0;
  t.put(5, tf::kOpRecv, -1, true, 1);
  t.put(6, tf::kOpGroupEnd, -1, false, 1)->comm = 0;
  t.write();
  CollectiveInput in = read_collective_trace(t.path);
  REQUIRE(in.status == CollectiveInput::Status::ok);
  REQUIRE(in.sequences.size() == 1);
  REQUIRE(in.sequences[0].calls.size() == 2);
  CHECK(in.sequences[0].calls[0].state == CallState::in_flight);
  CHECK(in.sequences[0].calls[0].in_group);
  CHECK(in.sequences[0].calls[1].state == CallState::in_flight);
  CHECK(in.processes[0].in_flight == 1);  // the GroupEnd itself
  CHECK(in.processes[0].ops.at("GroupStart") == 2);
}

TEST_CASE("v2 reader: a slot number that does not belong at its index is not a call") {
  V2File t(1024, 3);
  t.put(1, tf::kOpAllReduce, 0, true);
  t.put(2, tf::kOpAllReduce, 1, true);
  t.slot(2)->seq = 7;  // beyond `next`: garbage
  t.slot(2)->op = tf::kOpAllReduce;
  t.write();
  CollectiveInput in = read_collective_trace(t.path);
  REQUIRE(in.status == CollectiveInput::Status::ok);
  CHECK(in.processes[0].recorded == 2);
  CHECK(in.processes[0].torn == 1);
}
