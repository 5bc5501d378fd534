#include "report/timeline.h"

#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report_fixtures.h"

using namespace denpex;
using nlohmann::json;

TEST_CASE("parse_report_time: the readers' formats on one clock") {
  double a = 0, b = 0;
  REQUIRE(parse_report_time("05-14 10:12:05", &a));
  REQUIRE(parse_report_time("2024-05-14T10:42:05.500", &b));
  CHECK(b - a == Approx(1800.5));
  REQUIRE(parse_report_time("05-14 10:12", &b));
  CHECK(a - b == Approx(5));
  REQUIRE(parse_report_time("10:12:05", &b));
  CHECK(b == Approx(10 * 3600 + 12 * 60 + 5));
  // The day of the year as diagnose counts it: 1 January is day 0.
  REQUIRE(parse_report_time("01-01 00:00:01", &b));
  CHECK(b == Approx(1));
  for (const char* bad : {"", "yesterday", "13-01 10:00:00", "05-14 25:00:00", "10.12.05"}) {
    INFO(bad);
    CHECK_FALSE(parse_report_time(bad, &b));
  }
}

TEST_CASE("timeline_of: parties of the diagnosis, one row per host, the claim marked") {
  Timeline tl = timeline_of(test::oom_diagnosis());
  REQUIRE(tl.rows.size() == 2);
  CHECK(tl.rows[0].label == "node01");
  CHECK(tl.rows[1].label == "node02");
  CHECK_FALSE(tl.per_rank);
  CHECK(tl.all_time);
  REQUIRE(tl.rows[1].marks.size() == 1);
  CHECK(tl.rows[1].marks[0].role == TimelineRole::initiating);
  CHECK(tl.rows[1].marks[0].ranks == std::vector<int>{6});
  CHECK(tl.rows[0].marks[0].role == TimelineRole::collateral);
  CHECK(tl.rows[0].claimed);   // torchrun blamed rank 2, on node01
  CHECK_FALSE(tl.rows[1].claimed);
  CHECK_FALSE(tl.claim.correct);
  CHECK(tl.t1 - tl.t0 == Approx(1801));  // to the claim's own time
}

TEST_CASE("timeline_of: processes without ranks are placed on their host") {
  json r = test::oom_diagnosis();
  r["diagnosis"]["initiating"] = {{"ranks", json::array()}, {"hosts", {"ng30903"}}, {"processes", {"ng30903:3063025"}},
                                  {"what", "NCCL WARN Socket recv failed"}};
  r["diagnosis"]["collateral"] = {{{"ranks", json::array()}, {"hosts", {"ng30903"}}, {"processes", {"ng30903:3063028"}},
                                   {"what", "also failed, later"}}};
  r["diagnosis"]["launcher_claim"] = nullptr;
  Timeline tl = timeline_of(r);
  REQUIRE(tl.rows.size() == 1);
  CHECK(tl.rows[0].label == "ng30903");
  CHECK_FALSE(tl.any_time);
  REQUIRE(tl.rows[0].marks.size() == 2);
  CHECK(tl.rows[0].marks[0].procs == std::vector<std::string>{"ng30903:3063025"});
  CHECK_FALSE(tl.claim.present);
}

TEST_CASE("timeline_of: 1,000 ranks on 125 hosts fold to a few rows, never more than one per host") {
  Timeline tl = timeline_of(test::large_diagnosis(1000, 8, 461));
  CHECK(tl.per_rank);
  CHECK(tl.hosts == 125);
  CHECK(tl.rows.size() <= 32);
  std::size_t hosts = 0, ranks = 0;
  for (const auto& row : tl.rows) {
    hosts += row.hosts.size();
    ranks += row.ranks.size();
  }
  CHECK(hosts == 125);
  CHECK(ranks == 1000);
  // The earliest mark is the initiating rank's, on its own host's row.
  const TimelineMark* first = nullptr;
  const TimelineRow* first_row = nullptr;
  for (const auto& row : tl.rows)
    for (const auto& m : row.marks)
      if (first == nullptr || m.t < first->t) {
        first = &m;
        first_row = &row;
      }
  REQUIRE(first != nullptr);
  CHECK(first->role == TimelineRole::initiating);
  CHECK(first->ranks == std::vector<int>{461});
  CHECK(std::find(first_row->hosts.begin(), first_row->hosts.end(), "gpu-node058") != first_row->hosts.end());
  // A small job keeps one row per host.
  CHECK(timeline_of(test::large_diagnosis(16, 8, 3)).rows.size() == 2);
}

TEST_CASE("timeline_of and timeline_svg: not a diagnosis, nothing to draw") {
  CHECK(timeline_of(json::array()).rows.empty());
  CHECK(timeline_of(json{{"diagnosis", {{"initiating", nullptr}, {"collateral", json::array()}}}}).rows.empty());
  CHECK(timeline_svg(Timeline{}).empty());
}

TEST_CASE("timeline_svg: marks carry role, time and ranks; text is escaped") {
  json r = test::oom_diagnosis();
  r["diagnosis"]["initiating"]["hosts"] = {"<b>node02</b>"};
  std::string svg = timeline_svg(timeline_of(r));
  CHECK(svg.find("<svg class=\"timeline\"") == 0);
  CHECK(svg.find("data-role=\"initiating\"") != std::string::npos);
  CHECK(svg.find("data-ranks=\"6\"") != std::string::npos);
  CHECK(svg.find("class=\"claim wrong\"") != std::string::npos);
  CHECK(svg.find("<b>") == std::string::npos);
  CHECK(svg.find("&lt;b&gt;node02&lt;/b&gt;") != std::string::npos);
}
