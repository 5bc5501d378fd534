#include "compare/evidence_cut.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

using namespace denpex;

namespace {

// The ms-swift paste: one line quoting both ranks' fingerprints (the shape of a real one; the
// project's fixtures are its own, written in that format).
const std::string kFingerprint =
    "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
    "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, "
    "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
    "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running "
    "collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], "
    "TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided "
    "(default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives "
    "differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456";

const std::string kFoundA = "WorkNCCL(SeqNum=3104, OpType=ALLREDUCE BFloat16, NumelIn=51123456, NumelOut=51123456)";
const std::string kFoundB = "WorkNCCL(SeqNum=3104, OpType=ALLREDUCE BFloat16, NumelIn=195812480, NumelOut=195812480)";

std::string text(const Span& s, const std::string& line) { return line.substr(s.start, s.end - s.start); }

}  // namespace

TEST_CASE("difference_span: the differing part, widened to whole tokens") {
  std::string a = "NCCL version 2.14.3+cuda11.7", b = "NCCL version 2.19.3+cuda12.3";
  CHECK(text(difference_span(a, b), a) == "2.14.3+cuda11.7");
  CHECK(text(difference_span(b, a), b) == "2.19.3+cuda12.3");
  CHECK(difference_span(a, a).empty());
  std::string c = "node01:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin FastSocket (v4)";
  std::string d = "node02:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin FastSocket (v4)";
  CHECK(text(difference_span(c, d), c) == "node01");
}

TEST_CASE("value_spans: both sides found in one line that quotes both") {
  auto spans = value_spans(kFingerprint, kFoundA, kFoundB);
  // Each size once, where its fingerprint says it ("195812480vs" in the summary is glued anyway).
  REQUIRE(spans.size() == 2);
  CHECK(text(spans[0], kFingerprint) == "195812480");
  CHECK(text(spans[1], kFingerprint) == "51123456");
  CHECK(value_spans("nothing to see", kFoundA, kFoundB).empty());
  // A token glued to a longer number is not it.
  CHECK(value_spans("count 2.14.35", "2.14.3", "2.19.3").empty());
}

TEST_CASE("cut_around: never at a fixed width: the telling parts stay whole, with context") {
  std::string cut = cut_around(kFingerprint, value_spans(kFingerprint, kFoundA, kFoundB), 240);
  INFO(cut);
  CHECK(cut.size() < kFingerprint.size());
  CHECK(cut.find("TensorShape=[195812480]") != std::string::npos);
  CHECK(cut.find("TensorShape=[51123456]") != std::string::npos);
  CHECK(cut.find("OpType=ALLREDUCE, TensorShape=[195812480]") != std::string::npos);
  CHECK(cut.find("...") != std::string::npos);
  // Cut at word boundaries: every window starts after a space (or at the start of the line).
  std::size_t at = 0;
  while ((at = cut.find("... ", at)) != std::string::npos) {
    std::string rest = cut.substr(at + 4, 20);
    CHECK(kFingerprint.find(" " + rest) != std::string::npos);
    at += 4;
  }
  CHECK(cut_around("short line", {}, 200) == "short line");
  std::string head = cut_around(kFingerprint, {}, 60);
  CHECK(head.size() <= 64);
  CHECK(head.substr(head.size() - 4) == " ...");
  CHECK(kFingerprint.rfind(head.substr(0, head.size() - 4), 0) == 0);
}

TEST_CASE("cut_evidence: the same line once, cut around the difference") {
  std::vector<EvidenceLine> lines = {{"paste.log", 1, kFingerprint}, {"paste.log", 1, kFingerprint}};
  auto cut = cut_evidence(lines, kFoundA, kFoundB, 200);
  REQUIRE(cut.size() == 1);
  CHECK(cut[0].text.find("[195812480]") != std::string::npos);
  CHECK(cut[0].text.find("[51123456]") != std::string::npos);

  std::string long_a = "node01:4827:6900 [4] NCCL INFO " + std::string(200, 'x') + " NCCL version 2.14.3+cuda11.7 " +
                       std::string(200, 'y');
  std::string long_b = "node01:4827:6900 [4] NCCL INFO " + std::string(200, 'x') + " NCCL version 2.19.3+cuda12.3 " +
                       std::string(200, 'y');
  auto two = cut_evidence({{"a.log", 8, long_a}, {"a.log", 18, long_b}}, "", "", 120);
  REQUIRE(two.size() == 2);
  CHECK(two[0].text.find("2.14.3+cuda11.7") != std::string::npos);
  CHECK(two[1].text.find("2.19.3+cuda12.3") != std::string::npos);
  CHECK(two[0].text.size() < 200);
}

TEST_CASE("merge_mirror_images: a two-rank mismatch is one finding naming both ranks") {
  Finding a;
  a.code = FindingCode::collective_args_mismatch;
  a.ranks = {0};
  a.message = "TORCH_DISTRIBUTED_DEBUG=DETAIL caught ranks calling different collectives at SequenceNumber 3104: "
              "rank 0 reports " + kFoundA + "; no majority: the others report " + kFoundB;
  a.found = kFoundA;
  a.expected = kFoundB;
  a.fix = "make every rank issue the same collectives";
  Finding b = a;
  b.ranks = {1};
  b.message = "TORCH_DISTRIBUTED_DEBUG=DETAIL caught ranks calling different collectives at SequenceNumber 3104: "
              "rank 1 reports " + kFoundB + "; no majority: the others report " + kFoundA;
  b.found = kFoundB;
  b.expected = kFoundA;
  Finding other;
  other.code = FindingCode::nccl_version_mismatch;
  other.ranks = {3};
  other.found = "2.27.3";
  other.expected = "2.28.9";

  auto merged = merge_mirror_images({a, other, b});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].sources == std::vector<std::size_t>{0, 2});
  CHECK(merged[1].sources == std::vector<std::size_t>{1});
  const Finding& m = merged[0].finding;
  CHECK(m.ranks == std::vector<int>{0, 1});
  CHECK(m.expected.empty());
  CHECK(m.fix == a.fix);
  INFO(m.message);
  CHECK(m.message ==
        "TORCH_DISTRIBUTED_DEBUG=DETAIL caught ranks calling different collectives at SequenceNumber 3104: rank 0 has "
        "NumelIn=51123456, NumelOut=51123456, rank 1 has NumelIn=195812480, NumelOut=195812480 (no majority)");
  CHECK(m.found == "rank 0: " + kFoundA + "; rank 1: " + kFoundB);
  // A note both sides end with (an assumption of the comparison) stays on the merged finding.
  Finding na = a, nb = b;
  const std::string note = " (rank 1 printed no process group: taken to be in PG 0 (default_pg), the group the other ranks name)";
  na.message += note;
  nb.message += note;
  auto noted = merge_mirror_images({na, nb});
  REQUIRE(noted.size() == 1);
  CHECK(noted[0].finding.message == m.message + note);
  std::string sa, sb;
  REQUIRE(merged_sides(m.found, &sa, &sb));
  CHECK(sa == kFoundA);
  CHECK(sb == kFoundB);
  CHECK_FALSE(merged_sides(kFoundA, &sa, &sb));
  CHECK_FALSE(merged_sides("rank 3 on node2", &sa, &sb));

  // Not mirrors: the same value on both sides, or overlapping ranks.
  Finding c = b;
  c.ranks = {0};
  CHECK(merge_mirror_images({a, c}).size() == 2);
  Finding d = b;
  d.code = FindingCode::collective_mismatch;
  CHECK(merge_mirror_images({a, d}).size() == 2);
}
