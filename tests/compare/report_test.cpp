#include "compare/report.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

ClusterReport report_for(const std::vector<RankRecord>& records, bool strict = false) {
  auto groups = group_records(records);
  auto findings = judge(groups, {}, {});
  return make_report(groups, {}, findings, static_cast<int>(records.size()), strict);
}

}  // namespace

TEST_CASE("report_json follows the contract") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[3].nccl.version = "2.27.3";
  ClusterReport report = report_for(records);
  nlohmann::json j = report_json(report);
  CHECK(j["schema"] == "denpex.report.v1");
  CHECK(j["verdict"] == "reject");
  CHECK(j["nranks"] == 4);
  CHECK(j["nhosts"] == 2);
  CHECK(j["errors"] == 1);
  CHECK(j["warnings"] == 0);
  REQUIRE(j["findings"].size() == 1);
  CHECK(j["findings"][0]["code"] == "nccl-version-mismatch");
  CHECK(j["findings"][0]["ranks"] == nlohmann::json::array({3}));
  CHECK(j["findings"][0]["hosts"] == nlohmann::json::array({"node2"}));
  REQUIRE(j["configurations"].size() == 2);
  CHECK(j["configurations"][0]["ranks"] == nlohmann::json::array({0, 1, 2}));
  CHECK(j["configurations"][0]["hosts"] == nlohmann::json::array({"node1", "node2"}));
  CHECK(j["configurations"][0]["record"]["nccl"]["version"] == "2.28.9");
  CHECK_FALSE(j.contains("ranks"));
  CHECK_FALSE(j.contains("bytes_at_root"));
  CHECK_FALSE(j.contains("mode"));

  report.ranks = records;
  report.bytes_at_root = 1234;
  report.mode = "mpi";
  j = report_json(report);
  CHECK(j["ranks"].size() == 4);
  CHECK(j["bytes_at_root"] == 1234);
  CHECK(j["mode"] == "mpi");
}

TEST_CASE("warnings pass unless strict") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[3].nccl_env["NCCL_DEBUG"] = "INFO";
  CHECK(report_for(records).verdict == "pass");
  CHECK(report_for(records, /*strict=*/true).verdict == "reject");
}

TEST_CASE("missing ranks count their hosts") {
  auto groups = group_records(ranks_of(load_record("rank_ok.json"), 0, 2, 2));
  std::vector<MissingRank> missing = {{2, "node9", "timeout"}, {3, "", "timeout"}};
  ClusterReport report = make_report(groups, missing, judge(groups, missing, {}), 4, false);
  CHECK(report.nhosts == 2);
  CHECK(report.verdict == "reject");
}

TEST_CASE("render_human: verdict line, findings with fix, configurations; colour on request") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[3].nccl.version = "2.27.3";
  ClusterReport report = report_for(records);
  std::string text = render_human(report, false);
  auto lines = lines_of(text);
  REQUIRE(!lines.empty());
  CHECK(lines[0] == "denpex-probe: REJECT  1 error, 0 warnings  (4 ranks on 2 hosts)");
  CHECK(text.find("rank 3 on node2 loads NCCL 2.27.3, 3 other ranks load 2.28.9") !=
        std::string::npos);
  CHECK(text.find("expected: 2.28.9   found: 2.27.3") != std::string::npos);
  CHECK(text.find("fix: ") != std::string::npos);
  CHECK(text.find("[1] 3 ranks, 2 hosts: ranks 0-2 on node[1-2]\n      NCCL 2.28.9+cuda13.0 "
                  "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9; torch 2.5.1+cu124; driver "
                  "580.65.06 (CUDA 13.0)\n") != std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(render_human(report, true).find("\x1b[") != std::string::npos);
}

TEST_CASE("render_human: a passing job is one verdict line and its configuration") {
  std::string text = render_human(report_for(ranks_of(load_record("rank_ok.json"), 0, 4, 2)), false);
  auto lines = lines_of(text);
  CHECK(lines[0] == "denpex-probe: PASS  0 errors, 0 warnings  (4 ranks on 2 hosts)");
  CHECK(lines.size() == 5);  // verdict, blank, "1 configuration:", the configuration (2 lines)
}

TEST_CASE("4,096 ranks on 512 hosts with two configurations stay on one screen") {
  RankRecord base = load_record("rank_ok.json");
  std::vector<RankRecord> records;
  for (int r = 0; r < 4096; ++r) {
    records.push_back(at(base, r, fmt::format("node{:03}", r / 8 + 1)));
  }
  // The last 64 hosts got another NCCL and an NCCL_PROTO setting.
  for (int r = 3584; r < 4096; ++r) {
    records[static_cast<std::size_t>(r)].nccl.version = "2.27.3";
    records[static_cast<std::size_t>(r)].nccl_env["NCCL_PROTO"] = "LL128";
  }
  ClusterReport report = report_for(records);
  REQUIRE(report.configurations.size() == 2);
  CHECK(report.nhosts == 512);
  std::string text = render_human(report, false);
  auto lines = lines_of(text);
  INFO(text);
  CHECK(lines.size() < 40);
  for (const auto& line : lines) CHECK(line.size() < 400);
  CHECK(text.find("ranks 3584-4095 on node[449-512] loads") == std::string::npos);
  CHECK(text.find("ranks 3584-4095 on node[449-512] load NCCL 2.27.3, 3584 other ranks load "
                  "2.28.9") != std::string::npos);
  CHECK(lines[0] == "denpex-probe: REJECT  2 errors, 0 warnings  (4096 ranks on 512 hosts)");
}

TEST_CASE("scattered minorities are abbreviated, not listed in full") {
  RankRecord base = load_record("rank_ok.json");
  std::vector<RankRecord> records;
  for (int r = 0; r < 4096; ++r) {
    RankRecord rec = at(base, r, fmt::format("node{:03}", r / 8 + 1));
    if (r % 16 == 0) rec.nccl.version = "2.27.3";  // one rank on every other host
    records.push_back(rec);
  }
  std::string text = render_human(report_for(records), false);
  INFO(text);
  auto lines = lines_of(text);
  CHECK(lines.size() < 40);
  for (const auto& line : lines) CHECK(line.size() < 400);
  CHECK(text.find(",...") != std::string::npos);
}

TEST_CASE("render_human: a CPU-only PyTorch says it uses no NCCL") {
  RankRecord r = load_record("rank_ok.json");
  r.torch.version = "1.13.0a0";
  r.torch.cuda.clear();
  r.torch.build = "cpu";
  r.torch.libtorch_cuda.clear();
  r.torch.nccl = TorchNccl{};
  r.abi.clear();
  auto lines = lines_of(render_human(report_for({r}), false));
  REQUIRE(lines.size() == 5);
  CHECK(lines[4] == "      NCCL 2.28.9+cuda13.0 /usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9 (not "
                    "used by PyTorch); PyTorch 1.13.0a0, CPU build: uses no NCCL; driver "
                    "580.65.06 (CUDA 13.0)");
  // The record says so too.
  CHECK(nlohmann::json(r)["torch"]["build"] == "cpu");
}

TEST_CASE("render_human: configurations that only differ in a setting say which, on each line") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[3].nccl_env["NCCL_PROTO"] = "Simple";
  std::string text = render_human(report_for(records), false);
  INFO(text);
  auto lines = lines_of(text);
  auto at_line = [&](const std::string& start) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i].rfind(start, 0) == 0) return i;
    return lines.size();
  };
  std::size_t one = at_line("  [1] "), two = at_line("  [2] ");
  REQUIRE(two + 2 < lines.size());
  // Both summary lines read the same; the third line tells them apart.
  CHECK(lines[one + 1] == lines[two + 1]);
  CHECK(lines[one + 2] == "      unlike [2]: NCCL_PROTO unset");
  CHECK(lines[two + 2] == "      unlike [1]: NCCL_PROTO=Simple");
}

TEST_CASE("render_human: a different NCCL names where it came from") {
  auto records = ranks_of(load_record("rank_ok.json"), 0, 4, 2);
  records[3].nccl.version = "2.21.5";
  records[3].nccl.path = "/opt/nccl/lib/libnccl.so.2.21.5";
  records[3].nccl.origin = "LD_LIBRARY_PATH";
  std::string text = render_human(report_for(records), false);
  INFO(text);
  CHECK(text.find("      unlike [1]: NCCL 2.21.5+cuda13.0 via LD_LIBRARY_PATH=/opt/nccl/lib\n") != std::string::npos);
  CHECK(text.find("      unlike [2]: NCCL 2.28.9+cuda13.0 /usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9 from ld.so.cache\n") !=
        std::string::npos);
}

TEST_CASE("an image's settings that name devices are said, to be checked on the nodes") {
  RankRecord image = load_record("rank_ok.json");
  image.mode = "static";
  image.host = std::string(kImageHostPrefix) + "/srv/img.tar";
  image.devices.settings = {{"NCCL_SOCKET_IFNAME", "eth0", "environment", SettingStatus::unknown,
                             "the host's interfaces could not be read", {}}};
  std::string text = render_human(make_report(group_records({image}), {}, {}, 1, false), false);
  CHECK(text.find("sets NCCL_SOCKET_IFNAME=eth0 (checked against each node's devices when the "
                  "gate runs there)") != std::string::npos);
}
