// Test tool: what evidence/collective_trace reads from one trace, one line per fact, for the shell
// tests of the recorder (run_recorder.sh) to grep. Not installed.
//
//   process calls=C recorded=R overwritten=O torn=T dropped=D in_flight=F end=E signal=S rank=G nccl_mapped=0|1
//   unattributed N
//   op NAME N                                      (recorded calls per operation)
//   unflight TEXT                                  (in flight on an unidentified communicator)
//   call COMM RANK NRANKS OP coll=K seq=Q STATE status=S group=0|1 count=N
//   life COMM RANK NRANKS OP STATE status=S
// Exit 2 when the trace cannot be read.
#include <cstdio>

#include <fmt/format.h>

#include "evidence/collective_trace.h"

using namespace denpex;

namespace {

const char* state_name(CallState s) {
  return s == CallState::in_flight ? "in_flight" : s == CallState::returned ? "returned" : "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: trace_dump TRACE\n");
    return 2;
  }
  CollectiveInput in = read_collective_trace(argv[1]);
  if (in.status != CollectiveInput::Status::ok) {
    fmt::print(stderr, "trace_dump: {}: {}\n", argv[1], in.error);
    return 2;
  }
  for (const auto& p : in.processes)
    fmt::print("process calls={} recorded={} overwritten={} torn={} dropped={} in_flight={} end={} signal={} rank={} "
               "nccl_mapped={}\n",
               p.calls, p.recorded, p.overwritten, p.torn, p.dropped, p.in_flight, to_string(p.end), p.signal,
               p.global_rank, p.nccl_mapped.empty() ? 0 : 1);
  fmt::print("unattributed {}\n", in.unattributed_calls);
  for (const auto& p : in.processes)
    for (const auto& kv : p.ops) fmt::print("op {} {}\n", kv.first, kv.second);
  for (const auto& p : in.processes)
    for (const auto& u : p.in_flight_unattributed) fmt::print("unflight {}\n", u);
  for (const auto& s : in.sequences) {
    for (const auto& c : s.calls)
      fmt::print("call {} {} {} {} coll={} seq={} {} status={} group={} count={}\n", s.comm, s.rank, s.nranks,
                 c.op_name.view(), c.coll_seq, c.trace_seq, state_name(c.state), c.status, c.in_group ? 1 : 0, c.count);
    for (const auto& c : s.comm_calls)
      fmt::print("life {} {} {} {} {} status={}\n", s.comm, s.rank, s.nranks, c.op_name.view(), state_name(c.state), c.status);
  }
  return 0;
}
