#include "report/lead.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report_fixtures.h"

using namespace denpex;
using nlohmann::json;

TEST_CASE("lead_of: a diagnosis leads with who started it, who followed, and the launcher's claim") {
  Lead lead = lead_of(test::oom_diagnosis());
  CHECK(lead.verdict == "reject");
  CHECK(lead.verdict_line == "denpex-probe diagnose: REJECT (1 error, 0 warnings; 8 ranks, 2 hosts)");
  REQUIRE(lead.lines.size() == 3);
  CHECK(lead.lines[0] == "Started by: rank 6 on node02 at 05-14 10:12:05: torch.OutOfMemoryError: CUDA out of memory.");
  CHECK(lead.lines[1] == "Followed:   ranks 0-3 on node01 (watchdog timeout in ALLREDUCE)");
  CHECK(lead.lines[2] == "Launcher:   torchrun 'Root Cause': rank 2 on node01 -- WRONG: rank 6 failed first");
}

TEST_CASE("lead_of: an undecided diagnosis says so and what to add") {
  json r = test::oom_diagnosis();
  r["verdict"] = "inconclusive";
  r["diagnosis"]["initiating"] = nullptr;
  r["diagnosis"]["collateral"] = json::array();
  r["diagnosis"]["launcher_claim"] = nullptr;
  r["diagnosis"]["inconclusive"] = "add the logs of the other ranks";
  Lead lead = lead_of(r);
  CHECK(lead.verdict_line.rfind("denpex-probe diagnose: INCONCLUSIVE", 0) == 0);
  REQUIRE(lead.lines.size() == 2);
  CHECK(lead.lines[0] == "Started by: not decided from this input");
  CHECK(lead.lines[1] == "could not decide: add the logs of the other ranks");
}

TEST_CASE("lead_of: the gate and collectives lead with their first findings") {
  json findings = json::array();
  for (int i = 0; i < 5; ++i)
    findings.push_back({{"code", "nccl-env-mismatch"}, {"severity", i == 0 ? "error" : "warning"},
                        {"message", "m" + std::to_string(i)}});
  json gate = {{"schema", "denpex.report.v1"}, {"verdict", "reject"}, {"nranks", 4}, {"nhosts", 2}, {"errors", 1},
               {"warnings", 4}, {"findings", findings}, {"configurations", json::array()}};
  Lead lead = lead_of(gate);
  CHECK(report_kind(gate) == ReportKind::gate);
  CHECK(lead.verdict_line == "denpex-probe: REJECT  1 error, 4 warnings  (4 ranks on 2 hosts)");
  REQUIRE(lead.lines.size() == kMaxLeadFindings + 1);
  CHECK(lead.lines[0] == "error nccl-env-mismatch: m0");
  CHECK(lead.lines.back() == "... and 2 more findings");
  CHECK(brief_text(gate) == lead.verdict_line + "\n" + lead.lines[0] + "\n" + lead.lines[1] + "\n" + lead.lines[2] +
                                "\n" + lead.lines[3] + "\n");

  json coll = {{"verdict", "pass"}, {"nranks", 2}, {"nhosts", 1}, {"communicators", 1}, {"findings", json::array()}};
  CHECK(report_kind(coll) == ReportKind::collectives);
  CHECK(brief_text(coll) == "denpex-probe collectives: PASS (0 findings; 2 ranks, 1 host, 1 communicator)\n");
}

TEST_CASE("lead_of: anything but a report is read as an empty one, never a throw") {
  CHECK(lead_of(json()).verdict_line == "denpex-probe: UNKNOWN  0 errors, 0 warnings  (0 ranks on 0 hosts)");
  CHECK_NOTHROW(lead_of(json{{"diagnosis", {{"initiating", 3}, {"collateral", "x"}}}, {"findings", 7}}));
  CHECK(party_subject_of(json{{"processes", {"node01:12", "node01:13"}}}) == "processes node01:12, node01:13");
  CHECK(party_subject_of(json{{"hosts", {"node01", "node02"}}}) == "a rank on node[01-02]");
  CHECK(party_subject_of(json::object()) == "an unknown rank");
}
