// NCCL RAS: the laggard/leader judgement of collective counts (compare/ras_counts.h) and the
// JSON output of `ncclras -f json`, written here in the layout NCCL's src/ras/client_support.cc
// prints ("from the sources" in the names: no NCCL job runs here to make real output).
#include "evidence/ras_json.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <algorithm>

#include "compare/ras_counts.h"

namespace denpex::evidence {
namespace {

std::vector<int> range(int a, int b) {
  std::vector<int> v;
  for (int i = a; i <= b; ++i) v.push_back(i);
  return v;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& code) {
  for (const Finding& f : fs)
    if (code_name(f.code) == code) return &f;
  return nullptr;
}

// A RAS JSON document of one 32-rank communicator, in client_support.cc's layout.
std::string ras_doc(const std::vector<unsigned long long>& allreduce, const std::string& missing = "") {
  std::string ranks;
  for (size_t r = 0; r < allreduce.size(); ++r) {
    ranks += fmt::format(R"({}{{"rank": {}, "host": "10.0.0.{}", "pid": {}, "cuda_dev": {}, "nvml_dev": {},
      "status": {{"init_state": 0, "async_error": {}, "finalize_called": false, "destroy_flag": false, "abort_flag": false}},
      "collective_counts": {{"Broadcast": 1, "Reduce": 0, "AllGather": 12, "ReduceScatter": 0, "AllReduce": {}, "SendRecv": 0}}}})",
                         r ? ",\n" : "", r, r / 8, 1000 + r, r % 8, r % 8, r == 9 && missing == "error" ? 6 : 0,
                         allreduce[r]);
  }
  std::string miss = missing == "dead" ? R"({"rank": 31, "host": "10.0.0.3", "pid": 1031, "cuda_dev": 7, "nvml_dev": 7,
      "status": {"unresponsive": true, "considered_dead": true}})" : "";
  return fmt::format(R"({{
  "nccl_version": "2.29.1",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2025-12-19 13:06:53",
  "communicators_count": 1,
  "communicators": [
    {{
      "hash": "0xae94423cfbb2ef4a",
      "secondary_hash": "0xb7e7187447156001:0xb8242ed28a71381e",
      "size": 32,
      "ranks_count": {},
      "missing_ranks_count": {},
      "ranks": [
{}
      ],
      "missing_ranks": [
{}
      ]
    }}
  ],
  "ras": {{
    "collection_time_sec": 0.012,
    "timeouts_count": 0
  }}
}}
)", allreduce.size(), miss.empty() ? 0 : 1, ranks, miss);
}

}  // namespace

TEST_CASE("RAS counts: 2 ranks at op 641 and 30 at 640: the 30 are behind, the 2 are not blamed") {
  std::vector<RasOpCount> counts;
  for (int r = 0; r < 32; ++r) counts.push_back(RasOpCount{r, r == 4 || r == 20 ? 641ull : 640ull, ""});
  RasCountVerdict v = judge_ras_counts(counts);
  CHECK_FALSE(v.agree);
  CHECK(v.leaders == std::vector<int>{4, 20});
  CHECK(v.leader_count == 641);
  CHECK(v.behind.size() == 30);
  CHECK(std::find(v.behind.begin(), v.behind.end(), 4) == v.behind.end());
  CHECK(v.furthest_behind == v.behind);
  Finding f;
  REQUIRE(ras_count_finding(v, "0xabc", "AllReduce", &f));
  CHECK(f.code == FindingCode::collective_missing);
  CHECK(f.ranks == v.behind);
  CHECK(f.message.find("ranks 0-3,5-19,21-31 of communicator 0xabc launched fewer AllReduce operations than ranks 4,20, which launched 641") == 0);
  CHECK(f.message.find("the 2 ranks ahead only wait for them") != std::string::npos);
}

TEST_CASE("RAS counts: one rank behind is the one named; levels of lag; agreement") {
  std::vector<RasOpCount> one;
  for (int r = 0; r < 8; ++r) one.push_back(RasOpCount{r, r == 6 ? 99ull : 100ull, r == 6 ? "node2" : "node1"});
  RasCountVerdict v = judge_ras_counts(one);
  CHECK(v.behind == std::vector<int>{6});
  CHECK(v.behind_hosts == std::vector<std::string>{"node2"});
  std::vector<RasOpCount> levels{{0, 10, ""}, {1, 8, ""}, {2, 9, ""}, {3, 10, ""}};
  RasCountVerdict l = judge_ras_counts(levels);
  CHECK(l.behind == std::vector<int>{1, 2});
  CHECK(l.furthest_behind == std::vector<int>{1});
  Finding f;
  REQUIRE(ras_count_finding(l, "c", "AllGather", &f));
  CHECK(f.message.find("(furthest behind: rank 1 at 8)") != std::string::npos);
  CHECK(judge_ras_counts({{0, 5, ""}, {1, 5, ""}}).agree);
  CHECK(judge_ras_counts({}).agree);
  CHECK_FALSE(ras_count_finding(judge_ras_counts({{0, 5, ""}}), "c", "AllReduce", &f));
}

TEST_CASE("RAS JSON from the sources: counts judged per operation, the ranks ahead never blamed") {
  std::vector<unsigned long long> counts(32, 640);
  counts[4] = counts[20] = 641;
  std::string doc = ras_doc(counts);
  CHECK(looks_like_ras_json(doc));
  RasReport r = read_ras_json(doc, "ras.json");
  INFO(r.message);
  REQUIRE(r.status == RasReport::Status::ok);
  CHECK(r.nccl_version == "2.29.1");
  REQUIRE(r.communicators.size() == 1);
  CHECK(r.communicators[0].ranks.size() == 32);
  unsigned long long n = 0;
  REQUIRE(ras_count(r, r.communicators[0].ranks[5], "AllReduce", &n));
  CHECK(n == 640);
  std::vector<Finding> fs = judge_ras(r);
  REQUIRE(fs.size() == 1);  // Broadcast and AllGather agree
  CHECK(fs[0].code == FindingCode::collective_missing);
  CHECK(fs[0].comm == "0xae94423cfbb2ef4a");
  CHECK(fs[0].ranks.size() == 30);
  CHECK(fs[0].hosts == std::vector<std::string>{"10.0.0.0", "10.0.0.1", "10.0.0.2", "10.0.0.3"});
}

TEST_CASE("RAS JSON from the sources: a dead rank, an async error, and what is not RAS") {
  std::vector<unsigned long long> counts(31, 77);
  RasReport r = read_ras_json(ras_doc(counts, "dead"), "ras.json");
  REQUIRE(r.status == RasReport::Status::ok);
  std::vector<Finding> fs = judge_ras(r);
  const Finding* dead = find(fs, "ras-rank-dead");
  REQUIRE(dead);
  CHECK(dead->ranks == std::vector<int>{31});
  CHECK(dead->hosts == std::vector<std::string>{"10.0.0.3"});
  CHECK(find(fs, "collective-missing") == nullptr);
  RasReport e = read_ras_json(ras_doc(std::vector<unsigned long long>(32, 5), "error"), "ras.json");
  std::vector<Finding> efs = judge_ras(e);  // find() points into it: it must outlive err
  const Finding* err = find(efs, "ras-rank-error");
  REQUIRE(err);
  CHECK(err->ranks == std::vector<int>{9});
  CHECK(err->message.find("async error 6") != std::string::npos);
  CHECK_FALSE(looks_like_ras_json("{\"version\": \"2.4\"}"));
  RasReport bad = read_ras_json("{\"x\": 1}", "other.json");
  CHECK(bad.status == RasReport::Status::malformed);
  CHECK(bad.message.find("other.json: not NCCL RAS JSON output") == 0);
  (void)range;
}

}  // namespace denpex::evidence
