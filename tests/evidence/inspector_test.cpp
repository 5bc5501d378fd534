// NCCL Inspector records, written here in the layout of NCCL's plugins/profiler/inspector
// (inspector_json.cc; "from the sources" in the names: no GPU here to run the plugin), read into
// call sequences and judged by compare/collectives' analyser.
#include "evidence/inspector.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <algorithm>

namespace denpex::evidence {
namespace {

std::string record(int rank, const std::string& host, long long pid, const std::string& coll, long long sn,
                   long long bytes) {
  return fmt::format(
      R"({{"header":{{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":{},"n_ranks":4,"nnodes":2}},)"
      R"("metadata":{{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface",)"
      R"("dump_timestamp_us":1748030377748202,"hostname":"{}","pid":{}}},)"
      R"("coll_perf":{{"coll":"{}","coll_sn":{},"coll_msg_size_bytes":{},"coll_exec_time_us":61974,)"
      R"("coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,"coll_busbw_gbs":485.119099}}}})"
      "\n",
      rank, host, pid, coll, sn, bytes);
}

InspectorInput read_text(const std::string& text, const std::string& name) {
  auto src = memory_source(text);
  return read_inspector(src.get(), name);
}

}  // namespace

TEST_CASE("Inspector records from the sources: sequences per communicator and rank") {
  std::string f;
  for (long long sn = 1; sn <= 5; ++sn) f += record(2, "gpu-a02", 4242, sn == 3 ? "AllGather" : "AllReduce", sn, 17179869184);
  f += record(2, "gpu-a02", 4242, "AllReduce", 4, 17179869184);  // a second dump of the same op
  CHECK(looks_like_inspector(f));
  InspectorInput in = read_text(f, "gpu-a02-pid4242.log");
  INFO(in.message);
  REQUIRE(in.status == InspectorInput::Status::ok);
  CHECK(in.version == "v4.0");
  CHECK(in.records == 6);
  REQUIRE(in.sequences.size() == 1);
  const CommSequence& s = in.sequences[0];
  CHECK(s.comm == "0x7f8c496ae9f661");
  CHECK(s.rank == 2);
  CHECK(s.nranks == 4);
  CHECK(s.host == "gpu-a02");
  CHECK(s.pid == 4242);
  REQUIRE(s.calls.size() == 5);
  CHECK(s.calls[2].kind == CollKind::all_gather);
  CHECK(s.calls[4].coll_seq == 5);
}

namespace {

// Four ranks of one communicator; `last` and `odd` say where each rank's records end and which
// rank calls Broadcast at sn 2.
std::vector<CommSequence> job(int short_rank, int odd_rank) {
  std::vector<CommSequence> all;
  for (int rank = 0; rank < 4; ++rank) {
    std::string f;
    long long last = rank == short_rank ? 3 : 5;
    for (long long sn = 1; sn <= last; ++sn)
      f += record(rank, "gpu-a0" + std::to_string(rank / 2 + 1), 100 + rank,
                  sn == 2 && rank == odd_rank ? "Broadcast" : "AllReduce", sn, 1 << 20);
    InspectorInput in = read_text(f, "gpu-pid" + std::to_string(100 + rank) + ".log");
    REQUIRE(in.status == InspectorInput::Status::ok);
    all.insert(all.end(), in.sequences.begin(), in.sequences.end());
  }
  return all;
}

bool has(const std::vector<Finding>& fs, const std::string& code, std::vector<int> ranks) {
  for (const Finding& f : fs)
    if (code_name(f.code) == code && f.ranks == ranks) return true;
  return false;
}

}  // namespace

TEST_CASE("Inspector records from the sources: a mismatch and a rank behind, judged by the analyser") {
  CHECK(has(analyse_sequences(job(-1, 1)), "collective-mismatch", {1}));
  CHECK(has(analyse_sequences(job(3, -1)), "collective-missing", {3}));
  CHECK(analyse_sequences(job(-1, -1)).empty());
}

TEST_CASE("Inspector: lines that are not records, files that are not Inspector's") {
  std::string f = record(0, "h", 1, "AllReduce", 1, 8192) + "garbage line\n" + std::string(70000, 'x') + "\n";
  InspectorInput in = read_text(f, "h-pid1.log");
  CHECK(in.status == InspectorInput::Status::ok);
  CHECK(in.unreadable == 2);
  CHECK(in.message.find("h-pid1.log: 2 of 3 lines are not Inspector records") == 0);
  InspectorInput none = read_text("NCCL INFO hello\n", "x.log");
  CHECK(none.status == InspectorInput::Status::malformed);
  CHECK(none.message.find("x.log: no NCCL Inspector record") == 0);
  CHECK_FALSE(looks_like_inspector("{\"header\": 1}\n"));
}

}  // namespace denpex::evidence
