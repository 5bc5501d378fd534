// NCCL RAS's text report (evidence/read_ras.h), written in the layout NCCL's
// src/ras/client_support.cc prints ("from the sources" in the names: no NCCL job runs here).
// The fixtures in tests/fixtures/evidence/ras-text hold one situation in the text form (bare and
// behind a pdsh prefix) and in the JSON form; both must give the same findings.
#include "evidence/read_ras.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

#include "evidence/log_reader.h"

namespace denpex::evidence {
namespace {

std::string slurp(const std::string& name) {
  std::ifstream in(std::string(DENPEX_EVIDENCE_FIXTURES) + "/ras-text/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

LogReader read(const std::string& text) {
  LogReader r;
  r.read_text(text, "ras.txt");
  return r;
}

// Everything a finding says, as one line, to compare the two forms.
std::string describe(const Finding& f) {
  return fmt::format("{} sev {} comm {} ranks [{}] hosts [{}] seq {} expected '{}' found '{}' | {} | fix {}", code_name(f.code),
                     static_cast<int>(f.severity), f.comm, fmt::join(f.ranks, ","), fmt::join(f.hosts, ","), f.seq,
                     f.expected, f.found, f.message, f.fix);
}

std::vector<std::string> described(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const Finding& f : fs) out.push_back(describe(f));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Finding> text_findings(const LogReader& r) {
  std::vector<Finding> out;
  for (const RasTextFinding& x : r.ras_text) out.push_back(x.finding);
  return out;
}

}  // namespace

TEST_CASE("RAS text from the sources: summary, table, dead rank, async error, a rank behind") {
  LogReader r = read(slurp("status.txt"));
  REQUIRE(r.reported.empty());  // the counts were rebuilt: nothing left to judge as printed
  std::vector<std::string> got = described(text_findings(r));
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0], Catch::Contains("collective-missing") && Catch::Contains("ranks [3] hosts [10.0.0.1]") &&
                         Catch::Contains("than ranks 0-2,4-5,7, which launched 120"));
  CHECK_THAT(got[1], Catch::Contains("ras-rank-dead") && Catch::Contains("ranks [6] hosts [10.0.0.2]"));
  CHECK_THAT(got[2], Catch::Contains("ras-rank-error") && Catch::Contains("ranks [3]") &&
                         Catch::Contains("async_error 6"));
  for (const RasTextFinding& x : r.ras_text) {
    REQUIRE_FALSE(x.evidence.empty());
    CHECK(x.evidence.front().text == "NCCL version 2.28.9 compiled with CUDA 12.8");
  }
}

TEST_CASE("RAS text and JSON from the sources: one situation, the same findings") {
  RasReport json = read_ras_json(slurp("status.json"), "status.json");
  REQUIRE(json.status == RasReport::Status::ok);
  std::vector<std::string> from_json = described(judge_ras(json));
  REQUIRE(from_json.size() == 3);
  CHECK(described(text_findings(read(slurp("status.txt")))) == from_json);
  CHECK(described(text_findings(read(slurp("status-pdsh.txt")))) == from_json);
}

TEST_CASE("RAS JSON without the keys the reader does not need is read; a missing key is named") {
  const std::string trimmed = slurp("status-trimmed.json");
  REQUIRE(trimmed.find("\"communicators_count\"") == std::string::npos);
  RasReport r = read_ras_json(trimmed, "status-trimmed.json");
  CHECK(r.message == "");
  REQUIRE(r.status == RasReport::Status::ok);
  CHECK(described(judge_ras(r)) == described(judge_ras(read_ras_json(slurp("status.json"), "status.json"))));
  // What is said is what is wrong, never the keys that are there.
  RasReport bad = read_ras_json(R"({"nccl_version": "2.28.9", "communicators": {}})", "c.json");
  CHECK(bad.message == "c.json: not NCCL RAS JSON output (ncclras -f json): \"communicators\" is a JSON object, not an array");
  bad = read_ras_json(R"({"communicators": []})", "v.json");
  CHECK(bad.message == "v.json: not NCCL RAS JSON output (ncclras -f json): no \"nccl_version\" key");
  bad = read_ras_json("[1]", "a.json");
  CHECK(bad.message == "a.json: not NCCL RAS JSON output (ncclras -f json): the document is a JSON array, not an object");
}

// pdsh's host label, srun's task label, a millisecond clock and a time stamp before every line,
// blank lines included: line repair takes them off (a host name once it has stood before the
// report's first line), and the report reads as it does bare.
TEST_CASE("RAS text behind a host, task or time prefix: the JSON form's findings") {
  std::vector<std::string> from_json = described(judge_ras(read_ras_json(slurp("status.json"), "status.json")));
  std::string text = slurp("status.txt");
  for (const char* prefix : {"node01: ", "gpu-a07.cluster: ", "0: ", "1732900000123: ", "2026-12-02 04:10:11 ",
                             "2026-12-02T04:10:11.123456 "}) {
    INFO(prefix);
    std::string lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines += prefix + line + "\n";
    LogReader r = read(lines);
    CHECK(r.reported.empty());
    CHECK(r.unreadable.count == 0);
    CHECK(described(text_findings(r)) == from_json);
  }
}

TEST_CASE("RAS text from the sources: the job summary and the table are read") {
  std::string text = slurp("status.txt");
  // Cut after the table: the report so far names no trouble of any rank.
  std::string head = text.substr(0, text.find("Errors\n"));
  LogReader h = read(head);
  CHECK(h.ras_text.empty());
  CHECK(h.reported.empty());
  CHECK(h.records >= 8);
}

TEST_CASE("RAS text from the sources: 30 ranks behind, 2 ahead (unlisted group rebuilt from the table)") {
  std::string text =
      "NCCL version 2.26.2 compiled with CUDA 12.6\n"
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n"
      "    0         1         4         8        32        32   RUNNING  MISMATCH\n"
      "\n"
      "Warnings\n"
      "========\n"
      "\n"
      "#0-0 (0a1b2c3d4e5f6071) MISMATCH\n"
      "  Communicator ranks have different AllGather operation counts\n"
      "  30 ranks have launched up to operation 640\n"
      "  2 ranks have launched up to operation 641\n"
      "  Rank 20 -- GPU 4 managed by process 5120 on node 10.1.0.3\n"
      "  Rank 21 -- GPU 5 managed by process 5121 on node 10.1.0.3\n";
  LogReader r = read(text);
  REQUIRE(r.ras_text.size() == 1);
  const Finding& f = r.ras_text[0].finding;
  CHECK(f.code == FindingCode::collective_missing);
  CHECK(f.ranks.size() == 30);
  CHECK(std::find(f.ranks.begin(), f.ranks.end(), 20) == f.ranks.end());
  CHECK(std::find(f.ranks.begin(), f.ranks.end(), 21) == f.ranks.end());
  CHECK(f.comm == "0xa1b2c3d4e5f6071");
  // Without the table the size is unknown: the block is judged as RAS printed it.
  LogReader w = read(text.substr(text.find("Warnings")));
  CHECK(w.ras_text.empty());
  REQUIRE(w.reported.size() == 1);
  CHECK(w.reported[0].ranks == std::vector<int>{20, 21});
  CHECK(w.reported[0].majority_count == 640);
}

TEST_CASE("RAS text from the sources: INCOMPLETE without DEAD, NOCOMM status, errors of several ranks") {
  std::string text =
      "Errors\n======\n\n"
      "INCOMPLETE\n"
      "  Missing communicator data from 1 job process\n"
      "  Process 7005 on node 10.2.0.2 managing GPU 1\n\n"
      "#0-0 (00000000000c0ffe) INCOMPLETE\n"
      "  Missing communicator data from 1 rank\n"
      "  Rank 5 -- GPU 1 managed by process 7005 on node 10.2.0.2\n\n"
      "#0-0 (00000000000c0ffe) ERROR\n"
      "  Initialization errors on 2 ranks\n"
      "  2 ranks reported System error\n"
      "  Rank 1 -- GPU 1 managed by process 7001 on node 10.2.0.1\n"
      "  Rank 2 -- GPU 2 managed by process 7002 on node 10.2.0.1\n\n"
      "Warnings\n========\n\n"
      "#0-0 (00000000000c0ffe) MISMATCH\n"
      "  Communicator ranks have different status\n"
      "  6 ranks have status RUNNING\n"
      "  Rank 7 has status NOCOMM -- GPU 3 managed by process 7007 on node 10.2.0.2\n";
  LogReader r = read(text);
  std::vector<std::string> got = described(text_findings(r));
  REQUIRE(got.size() == 3);
  CHECK_THAT(got[0], Catch::Contains("collective-ranks-absent") && Catch::Contains("ranks [5,7]"));
  CHECK_THAT(got[1], Catch::Contains("ras-rank-error") && Catch::Contains("ranks [1]") && Catch::Contains("init_state 2"));
  CHECK_THAT(got[2], Catch::Contains("ras-rank-error") && Catch::Contains("ranks [2]"));
  CHECK(ras_error_code("Remote process error") == 6);
  CHECK(ras_error_code("Unexpected error") == -1);
}

TEST_CASE("RAS text from the sources: a dead process whose ranks RAS does not list") {
  LogReader r = read(
      "Errors\n======\n\n"
      "DEAD\n"
      "  1 job process is considered dead (unreachable via the RAS network)\n"
      "  Process 9003 on node 10.3.0.9 managing GPUs 0-7\n\n");
  REQUIRE(r.ras_text.size() == 1);
  const Finding& f = r.ras_text[0].finding;
  CHECK(f.code == FindingCode::ras_rank_dead);
  CHECK(f.ranks.empty());
  CHECK(f.hosts == std::vector<std::string>{"10.3.0.9"});
  CHECK_THAT(f.message, Catch::Contains("process 9003 on node 10.3.0.9"));
}

}  // namespace denpex::evidence

namespace denpex::evidence {

TEST_CASE("RAS text: a rank or a group past its range is refused and counted, never wrapped") {
  std::string text = slurp("status.txt");
  // Rank 6 as 4294967302 (2^32 + 6, which an int would wrap to 6), and a group past 2^64.
  const std::string dead = "  Rank 6 -- GPU 2 managed by process 4106 on node 10.0.0.2";
  REQUIRE(text.find(dead) != std::string::npos);
  text.replace(text.find(dead), dead.size(), "  Rank 4294967302 -- GPU 2 managed by process 4106 on node 10.0.0.2");
  const std::string header = "#0-0 (00ab12cd34ef5678) ERROR";
  text.replace(text.find(header), header.size(), "#99999999999999999999-0 (00ab12cd34ef5678) ERROR");
  LogReader r = read(text);
  CHECK(r.unreadable.count == 2);
  for (const RasTextFinding& x : r.ras_text)
    for (int rank : x.finding.ranks) CHECK(rank != 6);
}

}  // namespace denpex::evidence
