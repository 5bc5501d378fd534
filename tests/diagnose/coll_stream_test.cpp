// evidence/coll_stream: settling agreeing positions, lost lines, late and stopped ranks.
#include <catch2/catch.hpp>

#include "evidence/coll_stream.h"

using namespace denpex;
using namespace denpex::evidence;

namespace {

CollCall call(long long pos, unsigned long long count, CollKind kind = CollKind::all_reduce) {
  CollCall c;
  c.pos = pos;
  c.count = count;
  c.kind = kind;
  c.datatype = 7;
  c.redop = 0;
  c.line = pos + 1;
  return c;
}

MemberIdentity id(int proc) {
  MemberIdentity m;
  m.global_rank = proc;
  m.host = "h";
  m.pid = proc;
  m.name = "p" + std::to_string(proc);
  return m;
}

}  // namespace

TEST_CASE("agreeing ranks are settled as they go: nothing is buffered, nothing reported") {
  CollStream s;
  int c = s.comm("x", 4);
  for (long long p = 0; p < 10000; ++p)
    for (int r = 0; r < 4; ++r) s.add(c, s.member(c, r, r), call(p, 100 + p % 3));
  CHECK(s.buffered() == 0);
  CollResult res = s.finish(id, {});
  REQUIRE(res.stats.size() == 1);
  CHECK(res.stats[0].settled == 10000);
  for (const auto& seq : res.sequences) CHECK(seq.calls.empty());
  CHECK(analyse_sequences(res.sequences).empty());
}

TEST_CASE("a divergence reaches the analyser at its opCount") {
  CollStream s;
  int c = s.comm("x", 3);
  for (long long p = 0; p < 500; ++p)
    for (int r = 0; r < 3; ++r) s.add(c, s.member(c, r, r), call(p, (r == 2 && p == 321) ? 7 : 8));
  CollResult res = s.finish(id, {});
  auto f = analyse_sequences(res.sequences);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{2});
  REQUIRE(res.positions["x"].size() > static_cast<size_t>(f[0].seq));
  CHECK(res.positions["x"][static_cast<size_t>(f[0].seq)] == 321);
}

TEST_CASE("an opCount gap is a lost line: counted, never blamed") {
  CollStream s;
  int c = s.comm("x", 3);
  for (long long p = 0; p < 100; ++p)
    for (int r = 0; r < 3; ++r) {
      if (r == 1 && (p == 40 || p == 41)) continue;  // two lines of rank 1 lost
      s.add(c, s.member(c, r, r), call(p, 8));
    }
  CollResult res = s.finish(id, {});
  CHECK(analyse_sequences(res.sequences).empty());
  REQUIRE(res.stats.size() == 1);
  CHECK(res.stats[0].lost.at("rank 1") == 2);
  CHECK(res.stats[0].lost_after.size() == 2);
}

TEST_CASE("a rank that stops while the others go on is handed to the analyser") {
  CollStream s;
  int c = s.comm("x", 3);
  for (long long p = 0; p < 6000; ++p)
    for (int r = 0; r < 3; ++r) {
      if (r == 0 && p >= 1200) continue;  // rank 0 never calls again
      s.add(c, s.member(c, r, r), call(p, 8));
    }
  // Memory stays bounded: the two that go on are settled without rank 0.
  CHECK(s.buffered() < 5000);
  CollResult res = s.finish(id, {});
  auto f = analyse_sequences(res.sequences);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_missing);
  CHECK(f[0].ranks == std::vector<int>{0});
  CHECK(res.positions["x"][static_cast<size_t>(f[0].seq)] == 1200);
}

TEST_CASE("a rank that shows up late is compared with the settled references") {
  CollStream s;
  int c = s.comm("x", 3);
  for (long long p = 0; p < 300; ++p)
    for (int r = 0; r < 2; ++r) s.add(c, s.member(c, r, r), call(p, 8));
  for (long long p = 0; p < 300; ++p) s.add(c, s.member(c, 2, 2), call(p, p == 250 ? 9 : 8));
  CollResult res = s.finish(id, {});
  auto f = analyse_sequences(res.sequences);
  REQUIRE(f.size() == 1);
  CHECK(f[0].ranks == std::vector<int>{2});
  CHECK(res.positions["x"][static_cast<size_t>(f[0].seq)] == 250);
}

TEST_CASE("a short excerpt that ends early is not taken for a rank that stopped") {
  CollStream s;
  int c = s.comm("x", 128);
  s.add(c, s.member(c, 0, -1), call(0x139d, 7382228));
  s.add(c, s.member(c, 1, -1), call(0x139d, 7382228));
  s.add(c, s.member(c, 1, -1), call(0x139e, 7066572));
  s.add(c, s.member(c, 2, -1), call(0x13a0, 554400));
  CollResult res = s.finish(id, {});
  for (const auto& f : analyse_sequences(res.sequences)) CHECK(f.severity != Severity::error);
  CHECK(res.stats[0].lost.empty());
}
