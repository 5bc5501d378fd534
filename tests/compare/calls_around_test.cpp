#include "compare/calls_around.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace denpex;

namespace {

CollectiveCall call(CollKind k, unsigned long long count, long long coll_seq = -1) {
  CollectiveCall c;
  c.kind = k;
  c.op_name = to_string(k);
  c.count = count;
  c.datatype = 7;
  c.redop = k == CollKind::all_reduce ? 0 : -1;
  c.coll_seq = coll_seq;
  return c;
}

// `n` ranks on hosts of 8, ten AllReduce calls; rank `odd` calls count 9 at position 5.
std::vector<CommSequence> job(int n, int odd) {
  std::vector<CommSequence> out;
  for (int r = 0; r < n; ++r) {
    CommSequence s;
    s.comm = "0xabc";
    s.rank = r;
    s.global_rank = r;
    s.nranks = n;
    s.host = "node" + std::to_string(r / 8 + 1);
    for (int p = 0; p < 10; ++p) {
      s.calls.push_back(call(CollKind::all_reduce, r == odd && p == 5 ? 9 : 1024));
      if (p == 2) s.calls.push_back(call(CollKind::send, 4));  // Send/Recv are not positions
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

TEST_CASE("calls_around: ranks that made the same calls share a row; the odd call is in its column") {
  CallsAround a = calls_around(job(1000, 999), "0xabc", 5);
  CHECK(a.first == 2);
  REQUIRE(a.rows.size() == 2);
  CHECK(a.rows[0].ranks.size() == 999);
  CHECK(a.rows[1].ranks == std::vector<int>{999});
  CHECK(a.rows[1].hosts == std::vector<std::string>{"node125"});
  REQUIRE(a.rows[1].calls.size() == 7);  // positions 2..8
  CHECK(a.rows[1].calls[3] == "AllReduce(count=9, float32, sum)");
  CHECK(a.rows[0].calls[3] == "AllReduce(count=1024, float32, sum)");
  CHECK(a.rows[1].calls[2] == a.rows[0].calls[2]);
  nlohmann::json j = calls_around_json(a);
  CHECK(j["seq"] == 5);
  CHECK(j["rows"][1]["calls"][3] == "AllReduce(count=9, float32, sum)");
}

TEST_CASE("calls_around: a sequence that ends early has no call there; an unknown communicator has no rows") {
  auto seqs = job(4, -1);
  seqs[2].calls.resize(6);  // positions 0..4 and the Send
  CallsAround a = calls_around(seqs, "0xabc", 5, 1);
  REQUIRE(a.rows.size() == 2);
  CHECK(a.rows[1].ranks == std::vector<int>{2});
  CHECK(a.rows[1].calls == std::vector<std::string>{"AllReduce(count=1024, float32, sum)", "", ""});
  CHECK(calls_around_json(a)["rows"][1]["calls"][1].is_null());
  CHECK(calls_around(seqs, "0xdef", 5).rows.empty());
  CHECK(calls_around(seqs, "0xabc", -1).rows.empty());
}

TEST_CASE("calls_around: recorder rings are aligned by collective number, as the analyser does") {
  auto seqs = job(2, -1);
  for (auto& s : seqs) {
    long long n = 0;
    for (auto& c : s.calls)
      if (c.kind != CollKind::send) c.coll_seq = 100 + n++;
  }
  seqs[1].calls.erase(seqs[1].calls.begin());  // its ring starts one call later
  CallsAround a = calls_around(seqs, "0xabc", 103, 1);
  CHECK(a.first == 102);
  REQUIRE(a.rows.size() == 1);
  CHECK(a.rows[0].ranks == std::vector<int>{0, 1});
}

TEST_CASE("attach_calls_around: only divergence findings get a grid") {
  nlohmann::json report = {{"findings", nlohmann::json::array({
                                            {{"code", "collective-args-mismatch"}, {"comm", "0xabc"}, {"seq", 5}},
                                            {{"code", "collective-ranks-absent"}, {"comm", "0xabc"}, {"seq", 0}},
                                        })}};
  attach_calls_around(job(16, 3), &report);
  CHECK(report["findings"][0].contains("calls_around"));
  CHECK_FALSE(report["findings"][1].contains("calls_around"));
}
