// Flight Recorder dumps read and judged. The fr-gloo-torch-2.8.0 fixtures are real dumps, made
// by torch 2.8.0's own Flight Recorder on gloo (fr_gloo_gen.py; tests/evidence/run_fr_real.sh
// makes them again where that torch is installed). The NCCL-state cases are dumps written here
// in the JSON form that torch's FlightRecorder::dump_json defines ("from the sources" in their
// names): no GPU here to make real NCCL ones.
#include "evidence/fr_dump.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "evidence/fr_analyse.h"
#include "evidence/input_source.h"

namespace denpex::evidence {
namespace {

// DENPEX_FR_REAL_DIR: dumps fr_gloo_gen.py has just made (run_fr_real.sh), instead of the
// committed ones.
std::string real_dir() {
  const char* fresh = std::getenv("DENPEX_FR_REAL_DIR");
  return fresh && *fresh ? std::string(fresh) + "/" : std::string(DENPEX_EVIDENCE_FIXTURES) + "/fr-gloo-torch-2.8.0/";
}

std::vector<std::string> dumps_of(const std::string& scenario, std::vector<int> ranks, bool json = false) {
  std::vector<std::string> out;
  for (int r : ranks)
    out.push_back(real_dir() + scenario + (json ? "-json/nccl_trace_rank_" : "/nccl_trace_rank_") +
                  std::to_string(r) + (json ? ".json" : ""));
  return out;
}

const FrFinding* find(const FrAnalysis& a, const std::string& code) {
  for (const FrFinding& f : a.judgement.findings)
    if (code_name(f.finding.code) == code) return &f;
  return nullptr;
}

std::string codes(const FrAnalysis& a) {
  std::string s;
  for (const FrFinding& f : a.judgement.findings) s += code_name(f.finding.code) + std::string(": ") + f.finding.message + "\n";
  for (const std::string& p : a.problems) s += "problem: " + p + "\n";
  return s;
}

}  // namespace

TEST_CASE("a real torch 2.8.0 gloo dump: version, groups, entries, stacks", "[real-torch-dumps]") {
  for (bool json : {false, true}) {
    SECTION(json ? "json" : "pickle") {
      std::string path = dumps_of("agree", {2}, json)[0];
      std::ifstream f(path, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      FrDump d = read_fr_dump(bytes, path);
      INFO(d.message);
      REQUIRE(d.status == FrDump::Status::ok);
      CHECK(d.format == (json ? "json" : "pickle"));
      CHECK(d.rank == 2);
      CHECK(d.version == "2.9");
      CHECK(d.version_known);
      CHECK(d.warnings.empty());
      REQUIRE(d.entries.size() == 6);
      const FrEntry& e = d.entries[3];
      CHECK(e.collective_seq_id == 4);
      CHECK(e.profiling_name == "gloo:all_reduce");
      CHECK(e.pg_name == "0");
      CHECK(e.pg_desc == "default_pg");
      CHECK(e.input_sizes == std::vector<std::vector<int64_t>>{{4}});
      CHECK(e.input_dtypes == std::vector<std::string>{"Float"});
      CHECK(e.time_created_ns > 1700000000000000000);
      REQUIRE(d.pg_config.size() == 1);
      CHECK(d.pg_config[0].ranks == std::vector<int>{0, 1, 2, 3});
      if (!json) {  // the JSON form has no stacks
        REQUIRE(e.frames.size() >= 2);
        CHECK(d.frames[e.frames[0]].name == "all_reduce");
        // Shared frames stored once: the dump has far fewer frames than entries x depth.
        CHECK(d.frames.size() < d.entries.size() * e.frames.size());
      }
    }
  }
}

TEST_CASE("real gloo dumps that agree: no finding, every rank's position", "[real-torch-dumps]") {
  FrAnalysis a = analyse_fr_dumps(dumps_of("agree", {0, 1, 2, 3}));
  INFO(codes(a));
  CHECK(a.dumps == 4);
  CHECK(a.problems.empty());
  CHECK(a.judgement.findings.empty());
  CHECK(a.judgement.positions.size() == 4);
  CHECK(a.bytes > 4 * 1000);
}

TEST_CASE("real gloo dumps: rank 2's all_reduce of 8 elements against 4, and rank 2 behind", "[real-torch-dumps]") {
  for (bool json : {false, true}) {
    SECTION(json ? "json" : "pickle") {
      FrAnalysis a = analyse_fr_dumps(dumps_of("size_mismatch", {0, 1, 2, 3}, json));
      INFO(codes(a));
      const FrFinding* size = find(a, "collective-args-mismatch");
      REQUIRE(size);
      CHECK(size->finding.ranks == std::vector<int>{2});
      CHECK(size->finding.seq == 4);
      CHECK(size->finding.found == "[[8]] -> [[8]]");
      CHECK(size->finding.expected == "[[4]] -> [[4]]");
      CHECK(size->finding.message.find("rank 2 recorded sizes [[8]] -> [[8]] for collective #4 of process group 0 (default_pg)") == 0);
      REQUIRE_FALSE(size->evidence.empty());
      CHECK(size->evidence[0].file.find("nccl_trace_rank_2") != std::string::npos);
      if (!json) CHECK(size->evidence[0].text.find("fr_gloo_gen.py:") != std::string::npos);  // the caller's frame
      const FrFinding* behind = find(a, "collective-missing");
      REQUIRE(behind);
      CHECK(behind->finding.ranks == std::vector<int>{2});
      CHECK(behind->finding.seq == 5);
    }
  }
}

TEST_CASE("a partial dump set names its missing ranks and still finds the size mismatch", "[real-torch-dumps]") {
  FrAnalysis a = analyse_fr_dumps(dumps_of("size_mismatch", {1, 2, 3}));
  INFO(codes(a));
  const FrFinding* absent = find(a, "collective-ranks-absent");
  REQUIRE(absent);
  CHECK(absent->finding.ranks == std::vector<int>{0});
  CHECK(absent->finding.severity == Severity::warning);
  CHECK(absent->finding.message.find("no Flight Recorder dump from rank 0 of the 4 ranks") == 0);
  CHECK(a.judgement.missing_ranks == std::vector<int>{0});
  const FrFinding* size = find(a, "collective-args-mismatch");
  REQUIRE(size);
  CHECK(size->finding.ranks == std::vector<int>{2});
}

TEST_CASE("real gloo dumps: rank 0 crashed (no dump), rank 1's float64 all_reduce named", "[real-torch-dumps]") {
  // In this scenario gloo aborted rank 0 on the mismatched bytes: its dump was never written.
  FrAnalysis a = analyse_fr_dumps(dumps_of("dtype_mismatch", {1, 2, 3}));
  INFO(codes(a));
  CHECK(a.judgement.missing_ranks == std::vector<int>{0});
  const FrFinding* dtype = find(a, "collective-args-mismatch");
  REQUIRE(dtype);
  CHECK(dtype->finding.ranks == std::vector<int>{1});
  CHECK(dtype->finding.found == "Double -> Double");
  CHECK(dtype->finding.expected == "Float -> Float");
}

TEST_CASE("real gloo dumps: rank 3 left before the fourth all_reduce; the ranks ahead are not blamed", "[real-torch-dumps]") {
  FrAnalysis a = analyse_fr_dumps(dumps_of("stuck", {0, 1, 2, 3}));
  INFO(codes(a));
  const FrFinding* behind = find(a, "collective-missing");
  REQUIRE(behind);
  CHECK(behind->finding.ranks == std::vector<int>{3});
  CHECK(behind->finding.message.find("rank 3 never recorded collective #5 (gloo:all_reduce) of "
                                     "process group 0 (default_pg) that ranks 0-2 launched") == 0);
  CHECK(find(a, "collective-mismatch") == nullptr);
}

namespace {

// An NCCL dump in the JSON form of torch's dump_json (version 2.4, torch 2.6/2.7): written here
// from the sources, as no GPU is there to make one.
std::string nccl_json_dump(int rank, const std::string& last_state, const std::string& last_op,
                           const std::string& version = "2.4") {
  std::string entries;
  for (int seq = 1; seq <= 3; ++seq) {
    bool last = seq == 3;
    std::string state = last ? last_state : "completed";
    entries += std::string(entries.empty() ? "" : ",") + R"({"record_id":)" + std::to_string(seq - 1) +
               R"(,"pg_id":0,"process_group":["0","default_pg"],"collective_seq_id":)" +
               std::to_string(seq) + R"(,"p2p_seq_id":0,"op_id":)" + std::to_string(seq) +
               R"(,"profiling_name":")" + (last ? last_op : "nccl:all_reduce") +
               R"(","time_created_ns":1733040000000000000,"input_sizes":[[1024]],"input_dtypes":["BFloat16"],)"
               R"("output_sizes":[[1024]],"output_dtypes":["BFloat16"],"state":")" + state +
               R"(","time_discovered_started_ns":0,"time_discovered_completed_ns":0,"retired":)" +
               (state == "completed" ? "true" : "false") + R"(,"timeout_ms":600000,"is_p2p":false})";
  }
  (void)rank;
  return R"({"version":")" + version + R"(","pg_config":{"0":{"name":"0","desc":"default_pg","ranks":"[0, 1, 2, 3]"}},)"
         R"("pg_status":{"0":{"last_enqueued_collective":"3","last_started_collective":"3","last_completed_collective":"2"}},)"
         R"("entries":[)" + entries + "]}";
}

}  // namespace

TEST_CASE("NCCL dumps from the sources: a rank stuck in a collective the others completed") {
  std::vector<FrDump> dumps;
  for (int r = 0; r < 4; ++r)
    dumps.push_back(read_fr_dump(nccl_json_dump(r, r == 1 ? "started" : "completed", "nccl:all_reduce"),
                                 "nccl_trace_rank_" + std::to_string(r)));
  REQUIRE(dumps[1].status == FrDump::Status::ok);
  CHECK(dumps[1].pg_status[0].last_completed == 2);
  CHECK(dumps[1].entries[2].time_completed_ns == -1);  // 0 in the JSON form means not yet
  FrAnalysis a = analyse_fr_dumps(dumps);
  INFO(codes(a));
  const FrFinding* stuck = find(a, "rank-stuck");
  REQUIRE(stuck);
  CHECK(stuck->finding.ranks == std::vector<int>{1});
  CHECK(stuck->finding.seq == 3);
  bool rank1_in_flight = false;
  for (const FrRankPosition& p : a.judgement.positions)
    if (p.rank == 1) rank1_in_flight = p.in_flight && p.seq == 3 && p.state == "in flight (started)";
  CHECK(rank1_in_flight);
}

TEST_CASE("NCCL dumps from the sources: a type mismatch, and every rank waiting") {
  std::vector<FrDump> dumps;
  for (int r = 0; r < 4; ++r)
    dumps.push_back(read_fr_dump(nccl_json_dump(r, "scheduled", r == 3 ? "nccl:broadcast" : "nccl:all_reduce"),
                                 "nccl_trace_rank_" + std::to_string(r)));
  FrAnalysis a = analyse_fr_dumps(dumps);
  INFO(codes(a));
  const FrFinding* type = find(a, "collective-mismatch");
  REQUIRE(type);
  CHECK(type->finding.ranks == std::vector<int>{3});
  CHECK(type->finding.found == "nccl:broadcast");
  std::vector<FrDump> waiting;
  for (int r = 0; r < 4; ++r)
    waiting.push_back(read_fr_dump(nccl_json_dump(r, "started", "nccl:all_reduce"), "rank" + std::to_string(r) + ".json"));
  FrAnalysis w = analyse_fr_dumps(waiting);
  INFO(codes(w));
  const FrFinding* all = find(w, "collective-in-flight");
  REQUIRE(all);
  CHECK(all->finding.severity == Severity::warning);
  CHECK(find(w, "rank-stuck") == nullptr);
}

TEST_CASE("dumps: unknown versions named, names without a rank, broken files") {
  FrDump future = read_fr_dump(nccl_json_dump(0, "completed", "nccl:all_reduce", "3.1"), "nccl_trace_rank_0");
  REQUIRE(future.status == FrDump::Status::ok);
  CHECK_FALSE(future.version_known);
  REQUIRE(future.warnings.size() == 1);
  CHECK(future.warnings[0].find("version \"3.1\" is not one this reader knows") != std::string::npos);
  FrDump nameless = read_fr_dump(nccl_json_dump(0, "completed", "nccl:all_reduce"), "trace.json");
  CHECK(nameless.rank == -1);
  FrAnalysis a = analyse_fr_dumps(std::vector<FrDump>{nameless});
  REQUIRE(a.problems.size() == 1);
  CHECK(a.problems[0].find("trace.json: its name ends in no rank number") == 0);
  CHECK(read_fr_dump("{\"a\": 1}", "x").status == FrDump::Status::malformed);
  CHECK(read_fr_dump("not json", "x").status == FrDump::Status::malformed);
  // sizeof, not a count by hand: the literal holds NULs, and a wrong count read past its end.
  static const char kHostile[] = "\x80\x02" "cos\nsystem\n" "X\x01\x00\x00\x00" "x\x85R.";
  FrDump hostile = read_fr_dump(std::string(kHostile, sizeof kHostile - 1), "nccl_trace_rank_1");
  CHECK(hostile.status == FrDump::Status::refused);
  CHECK(hostile.message.find("nccl_trace_rank_1: not read as a Flight Recorder dump: GLOBAL at offset 2: os.system") == 0);
  // A float past int64 (found by fuzz_pickle: converting it was undefined) is out of range: the
  // entry is not kept, and is counted with a sample.
  FrDump huge = read_fr_dump(R"({"version":"2.4","entries":[{"collective_seq_id":9.5e18,"time_created_ns":-1e300}]})", "nccl_trace_rank_2");
  REQUIRE(huge.status == FrDump::Status::ok);
  CHECK(huge.entries.empty());
  CHECK(huge.unreadable == 1);
  REQUIRE(huge.unreadable_samples.size() == 1);
  CHECK(huge.unreadable_samples[0] == "entry 0: collective_seq_id 9.5e18 is out of range");
  CHECK(rank_from_dump_name("/tmp/nccl_trace_rank_12") == 12);
  CHECK(rank_from_dump_name("dumps/rank7.json.gz") == 7);
  CHECK(rank_from_dump_name("dump") == -1);
}

TEST_CASE("dumps: numbers out of range are refused, never wrapped") {
  // 19-digit ranks in pg_config (as text and as a list) would have become 922337203, 685477580
  // and -2147483648: the group is refused and counted, the rest of the dump read.
  const std::string text = R"({"version":"2.4","pg_config":{"0":{"name":"0","desc":"default_pg",)"
                           R"("ranks":"[0, 9223372036854775807]"},"1":{"name":"1","desc":"d",)"
                           R"("ranks":[0, 1]}},"entries":[]})";
  FrDump d = read_fr_dump(text, "nccl_trace_rank_0");
  REQUIRE(d.status == FrDump::Status::ok);
  REQUIRE(d.pg_config.size() == 1);
  CHECK(d.pg_config[0].name == "1");
  CHECK(d.unreadable == 1);
  REQUIRE(d.unreadable_samples.size() == 1);
  CHECK(d.unreadable_samples[0] == "pg_config \"0\": rank 9223372036854775807 is out of range (0 to 4194303)");
  FrDump list = read_fr_dump(R"({"version":"2.4","pg_config":{"0":{"ranks":[0, 9223372036854775808, -1]}}})",
                             "nccl_trace_rank_0");
  REQUIRE(list.status == FrDump::Status::ok);
  CHECK(list.pg_config.empty());
  CHECK(list.unreadable_samples.at(0) == "pg_config \"0\": rank 9223372036854775808 is out of range (0 to 4194303)");
  // A record id past 32 bits, a string that overflows, an unsigned past int64, a dimension.
  FrDump e = read_fr_dump(R"({"version":"2.4","entries":[{"record_id":4294967296},)"
                          R"({"record_id":1,"op_id":1},{"time_created_ns":"99999999999999999999"},)"
                          R"({"timeout_ms":18446744073709551615},{"input_sizes":[[1e30]]}],)"
                          R"("pg_status":{"0":{"last_enqueued_collective":"99999999999999999999"}}})",
                          "nccl_trace_rank_0");
  REQUIRE(e.status == FrDump::Status::ok);
  REQUIRE(e.entries.size() == 1);
  CHECK(e.entries[0].op_id == 1);
  CHECK(e.pg_status.empty());
  CHECK(e.unreadable == 5);
  REQUIRE(e.unreadable_samples.size() == 5);
  CHECK(e.unreadable_samples[0] == "entry 0: record_id 4294967296 is out of range (a 32-bit number)");
  CHECK(e.unreadable_samples[1] == "entry 2: time_created_ns \"99999999999999999999\" is out of range");
  CHECK(e.unreadable_samples[2] == "entry 3: timeout_ms 18446744073709551615 is out of range");
  CHECK(e.unreadable_samples[3] == "entry 4: a tensor dimension 1e30 is out of range");
  CHECK(e.unreadable_samples[4] == "pg_status \"0\": last_enqueued_collective \"99999999999999999999\" is out of range");
}

TEST_CASE("dumps: the JSON form keeps what it reads within its bound, streamed") {
  // 2 MB of empty tensors keep 24 bytes per 3 read: refused as too large, not held.
  std::string dims = R"({"version":"2.4","entries":[{"input_sizes":[)";
  for (int i = 0; i < 700000; ++i) dims += i ? ",[]" : "[]";
  dims += "]}]}";
  FrDump d = read_fr_dump(dims, "nccl_trace_rank_0");
  CHECK(d.status == FrDump::Status::too_large);
  CHECK(d.message.find("nccl_trace_rank_0: JSON that would keep") == 0);
  CHECK(d.entries.empty());
  // A real shape, read from a source in pieces, is read whole.
  const std::string one = nccl_json_dump(0, "completed", "nccl:all_reduce");
  auto src = memory_source(one);
  FrDump streamed = read_fr_dump(src.get(), "nccl_trace_rank_0");
  FrDump whole = read_fr_dump(one, "nccl_trace_rank_0");
  REQUIRE(streamed.status == FrDump::Status::ok);
  CHECK(streamed.entries.size() == whole.entries.size());
  CHECK(streamed.bytes == one.size());
  // Nested past 64 levels: refused as not shallow.
  FrDump deep = read_fr_dump(std::string(100, '[') + std::string(100, ']'), "nccl_trace_rank_0");
  CHECK(deep.message.find("neither a pickle nor shallow JSON") != std::string::npos);
}

}  // namespace denpex::evidence
