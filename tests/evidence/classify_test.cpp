// classify(): inputs told apart by content (real torch 2.8.0 dumps, RAS and Inspector output in
// the layout of NCCL's sources, logs, binaries), and read_recorders() on a mixed set.
#include "evidence/classify.h"

#include <catch2/catch.hpp>

#include "evidence/recorders.h"
#include "tests/evidence/scratch_dir.h"

namespace denpex::evidence {
namespace {

const std::string kFix = std::string(DENPEX_EVIDENCE_FIXTURES) + "/";

const char* kRas = R"({
  "nccl_version": "2.29.1",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2025-12-19 13:06:53",
  "communicators_count": 1,
  "communicators": [
    {"hash": "0xae94", "secondary_hash": "0x1:0x2", "size": 2, "ranks_count": 2, "missing_ranks_count": 0,
     "ranks": [
       {"rank": 0, "host": "10.0.0.1", "pid": 11, "cuda_dev": 0, "nvml_dev": 0, "status": {"init_state": 0, "async_error": 0, "finalize_called": false, "destroy_flag": false, "abort_flag": false},
        "collective_counts": {"AllReduce": 641}},
       {"rank": 1, "host": "10.0.0.2", "pid": 12, "cuda_dev": 0, "nvml_dev": 0, "status": {"init_state": 0, "async_error": 0, "finalize_called": false, "destroy_flag": false, "abort_flag": false},
        "collective_counts": {"AllReduce": 640}}],
     "missing_ranks": []}
  ],
  "ras": {"collection_time_sec": 0.010, "timeouts_count": 0}
}
)";

const char* kInspector =
    R"({"header":{"id":"0x7f8c","comm_name":"DP","rank":0,"n_ranks":2,"nnodes":1},"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":1,"hostname":"h","pid":7},"coll_perf":{"coll":"AllReduce","coll_sn":1,"coll_msg_size_bytes":8192,"coll_exec_time_us":5,"coll_timing_source":"kernel_gpu","coll_algobw_gbs":1.0,"coll_busbw_gbs":1.0}})"
    "\n";

}  // namespace

TEST_CASE("classify tells inputs apart by content, not by name") {
  test::ScratchDir dir;
  CHECK(classify(kFix + "fr-gloo-torch-2.8.0/agree/nccl_trace_rank_0").kind == InputKind::fr_dump);
  CHECK(classify(kFix + "fr-gloo-torch-2.8.0/agree-json/nccl_trace_rank_0.json").kind == InputKind::fr_dump);
  CHECK(classify(dir.write("status.txt", kRas)).kind == InputKind::ras_json);
  CHECK(classify(dir.write("dump.json", kInspector)).kind == InputKind::inspector);
  CHECK(classify(dir.write("rank0.pkl", "[rank0]: NCCL INFO hello\n")).kind == InputKind::text);
  CHECK(classify(dir.write("r.json", "{\"schema\": \"denpex.report.v1\", \"ranks\": []}\n")).kind == InputKind::denpex_report);
  CHECK(classify(dir.write("t", "{\"schema\":\"denpex.trace.v1\",\"host\":\"h\"}\n")).kind == InputKind::recorder_trace);
  REQUIRE(test::sh("gzip -c '" + kFix + "fr-gloo-torch-2.8.0/agree/nccl_trace_rank_1' > '" + dir.file("d.gz") + "'") == 0);
  ClassifiedInput gz = classify(dir.file("d.gz"));
  CHECK(gz.kind == InputKind::fr_dump);
  CHECK(gz.encoding == "gzip+pickle");
  ClassifiedInput bin = classify(dir.write("core", std::string("\x7f" "ELF\0\0\0", 7)));
  CHECK(bin.kind == InputKind::unreadable);
  CHECK(bin.message.find(dir.file("core") + ": an ELF program") == 0);
  CHECK(classify("-").kind == InputKind::text);
  CHECK(is_recorder(InputKind::fr_dump));
  CHECK_FALSE(is_recorder(InputKind::text));
}

TEST_CASE("read_recorders: dumps, RAS and Inspector of one job, read together") {
  test::ScratchDir dir;
  std::vector<ClassifiedInput> in;
  for (int r : {1, 2, 3}) in.push_back(classify(kFix + "fr-gloo-torch-2.8.0/size_mismatch/nccl_trace_rank_" + std::to_string(r)));
  in.push_back(classify(dir.write("ras.json", kRas)));
  in.push_back(classify(dir.write("h-pid7.log", kInspector)));
  in.push_back(classify(dir.write("log", "text\n")));  // not a recorder: left alone
  RecorderEvidence e = read_recorders(in);
  CHECK(e.fr_dumps == 3);
  CHECK(e.ras_reports == 1);
  CHECK(e.inspector_files == 1);
  CHECK(e.problems.empty());
  REQUIRE(e.sequences.size() == 1);
  CHECK(e.sequences[0].calls.size() == 1);
  bool size = false, absent = false, ras_behind = false;
  for (const FrFinding& f : e.findings) {
    size = size || (f.finding.code == FindingCode::collective_args_mismatch && f.finding.ranks == std::vector<int>{2});
    absent = absent || (f.finding.code == FindingCode::collective_ranks_absent && f.finding.ranks == std::vector<int>{0});
    ras_behind = ras_behind || (f.finding.code == FindingCode::collective_missing && f.finding.comm == "0xae94" &&
                                f.finding.ranks == std::vector<int>{1});
  }
  CHECK(size);
  CHECK(absent);
  CHECK(ras_behind);
  std::vector<std::string> lines = describe_positions(e.positions, 2);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("rank 1 last recorded collective #5 (gloo:all_reduce) of process group 0") == 0);
  CHECK(lines[2] == "... 1 more");
}

TEST_CASE("classify reads JSON by its keys: any spacing, key order or cut") {
  // A Flight Recorder dump as Python's json.dump(indent=2) writes the pickle's dict: keys in
  // insertion order, spaces and line breaks, and cut inside its entries (a large dump's head).
  const std::string pretty = "{\n  \"version\": \"2.4\",\n  \"pg_status\": {},\n  \"entries\": [\n    {\n"
                             "      \"record_id\": 0,\n      \"collective_seq_id\": 1,\n      \"state\": \"comp";
  CHECK(classify_head(pretty, "text") == InputKind::fr_dump);
  CHECK(classify_head("{ \"entries\" : [ { \"profiling_name\": \"nccl:all_reduce\" } ] }", "text") == InputKind::fr_dump);
  // RAS with its keys in another order; a rank record pretty-printed; reports and pages of our own.
  CHECK(classify_head("{\n \"communicators\": [],\n \"nccl_version\": \"2.29.1\"\n}", "text") == InputKind::ras_json);
  CHECK(classify_head("{\n  \"host\": \"n1\",\n  \"nccl\": {\"status\": \"ok\"},\n  \"rank\": 3\n}", "text") ==
        InputKind::other_json);
  CHECK(classify_head("{\"verdict\": \"reject\",\n \"schema\" : \"denpex.report.v1\"}", "text") == InputKind::denpex_report);
  CHECK(classify_head("{\"pid\": 1, \"schema\": \"denpex.trace.v1\"}\n{\"ev\": \"call\"}\n", "text") ==
        InputKind::recorder_trace);
  CHECK(classify_head("<!DOCTYPE html>\n<html><head><meta name=\"generator\" content=\"denpex-probe\">", "text") ==
        InputKind::denpex_page);
  // A page of anyone else, a JSON-lines log with a rank, and a JSON text that is not closed: text.
  CHECK(classify_head("<!DOCTYPE html>\n<html><head><title>forum</title>", "text") == InputKind::text);
  CHECK(classify_head("{\"rank\": 0, \"msg\": \"step 5\"}\n{\"rank\": 1, \"msg\": \"step 5\"}\n", "text") == InputKind::text);
  CHECK(classify_head("{\"rank\": ", "text") == InputKind::text);
  CHECK(is_own_report(InputKind::denpex_page));
  CHECK_FALSE(is_own_report(InputKind::other_json));
}

}  // namespace denpex::evidence
