// NCCL DIAG lines (NCCL 2.31's diagnostics reports, evidence/read_diag.h) on the project's own
// fixtures (tests/diagnose/fixtures/diag_*), written in the format of NCCL 2.31.2's
// src/ras/diagnostics*.cc and src/diagnostics/p2p.cc with made-up values: what they report
// feeds the findings the other readers' lines give, bare and behind every launcher prefix.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "diagnose/diagnosis.h"
#include "tests/diagnose/diagnose_test_support.h"
#include "evidence/input_source.h"
#include "evidence/matcher.h"
#include "evidence/read_diag.h"

using namespace denpex;
using namespace denpex::diag;
using denpex::diag::test::find;
using namespace denpex::evidence;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Diagnosis diagnose_files(const std::vector<std::string>& names, LogReader* r) {
  for (const auto& n : names) r->read_text(fixture(n), n);
  r->finish();
  return diagnose(*r);
}

std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

// Every finding of a diagnosis as one line, to compare two inputs' diagnoses.
std::vector<std::string> described(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const auto& x : d.findings)
    out.push_back(fmt::format("{} sev {} comm {} ranks [{}] | {} | {}", code_name(x.f.code), static_cast<int>(x.f.severity), x.f.comm,
                              fmt::join(x.f.ranks, ","), x.f.message, x.f.found));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every example of the NCCL DIAG entries is read by its own entry") {
  denpex::diag::test::check_examples_read_by_own_entry({"nccl.diag.env_mismatch", "nccl.diag.env", "nccl.diag.version", "nccl.diag.ecc", "nccl.diag.xid",
                         "nccl.diag.incomplete", "nccl.diag.p2p", "nccl.diag.report"});
}

TEST_CASE("NCCL DIAG rank sets: listed ranks, truncated sets and who a mismatch blames") {
  std::vector<int> ranks;
  int listed = 0;
  REQUIRE(diag_rank_set("{12,13,14,15}", &ranks, &listed));
  CHECK(ranks == std::vector<int>{12, 13, 14, 15});
  CHECK(listed == 4);
  REQUIRE(diag_rank_set("{0,1,2,3,4,5,6,7,...} (N=15)", &ranks, &listed));
  CHECK(ranks.size() == 8);
  CHECK(listed == 15);
  CHECK_FALSE(diag_rank_set("12,13", &ranks, &listed));

  DiagItem x;
  x.nranks = 16;
  x.ref_rank = 0;
  x.ranks = {12, 13, 14, 15};
  x.listed = 4;
  CHECK(diag_odd_ranks(x) == std::vector<int>{12, 13, 14, 15});
  // Fifteen of sixteen ranks differ from rank 0: rank 0 is the odd one.
  x.ranks = {1, 2, 3, 4, 5, 6, 7, 8};
  x.listed = 15;
  CHECK(diag_odd_ranks(x) == std::vector<int>{0});
  // Half and half: both sides.
  x.ranks = {8, 9, 10, 11, 12, 13, 14, 15};
  x.listed = 8;
  CHECK(diag_odd_ranks(x) == std::vector<int>{0, 8, 9, 10, 11, 12, 13, 14, 15});
}

TEST_CASE("RAS diagnostics: an NCCL_* variable and a driver that differ, judged as the other readers' lines are") {
  LogReader r;
  Diagnosis d = diagnose_files({"diag_ras/rank0.out"}, &r);
  CHECK(r.unreadable.count == 0);
  // NCCL_PROTO unset on rank 11 of the 16-rank communicator: the protocol differs, an error.
  const DxFinding* env = find(d, "nccl-env-mismatch");
  REQUIRE(env != nullptr);
  CHECK(env->f.severity == Severity::error);
  CHECK(env->f.ranks == std::vector<int>{11});
  CHECK_THAT(env->f.message, Catch::Contains("NCCL_PROTO"));
  // NCCL_ALGO differs only inside the 8-rank communicator, whose ranks are not job ranks.
  CHECK_THAT(env->f.message, !Catch::Contains("NCCL_ALGO"));
  for (const auto& x : d.findings) CHECK_THAT(x.f.message, !Catch::Contains("NCCL_ALGO"));
  // Both driver lines: ranks 12-15 differ from rank 0, one finding per check.
  int drivers = 0;
  for (const auto& x : d.findings) {
    if (x.f.code != FindingCode::cuda_driver_version_mismatch) continue;
    ++drivers;
    CHECK(x.f.ranks == std::vector<int>{12, 13, 14, 15});
    CHECK(x.f.comm == "0x3c9d0e51a7b26f48");
    CHECK(x.f.severity == Severity::warning);
    REQUIRE_FALSE(x.evidence.empty());
    CHECK_THAT(x.evidence.front().text, Catch::Contains("differ from rank 0"));
  }
  CHECK(drivers == 2);
  // The 8-rank communicator's incomplete gather: a warning naming its communicator and count.
  const DxFinding* absent = find(d, "collective-ranks-absent");
  REQUIRE(absent != nullptr);
  CHECK(absent->f.comm == "0x81f2a6c40d3e9b75");
  CHECK_THAT(absent->f.message, Catch::Contains("gathered 7 of the 8 ranks") && Catch::Contains("1 rank did not answer"));
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{11});
}

TEST_CASE("NCCL DIAG lines behind launcher prefixes give the bare lines' diagnosis") {
  std::string bare = fixture("diag_ras/rank0.out");
  LogReader r0;
  r0.read_text(bare, "rank0.out");
  r0.finish();
  std::vector<std::string> want = described(diagnose(r0));
  REQUIRE(want.size() >= 4);
  for (const char* prefix : {"[rank0]:", "[default0]:", "node01: ", "1732900000123: ", "0: ", "2026-12-02 04:10:11 "}) {
    INFO(prefix);
    LogReader r;
    r.read_text(prefixed(bare, prefix), "rank0.out");
    r.finish();
    CHECK(r.unreadable.count == 0);
    CHECK(described(diagnose(r)) == want);
  }
}

TEST_CASE("RAS diagnostics: uncorrected ECC errors start it; the Xid host and the timeouts follow") {
  LogReader r;
  Diagnosis d = diagnose_files({"diag_ecc_xid/node01.log", "diag_ecc_xid/node02.log"}, &r);
  CHECK(r.unreadable.count == 0);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{5});
  CHECK_THAT(d.blame.initiating.what, Catch::Contains("uncorrected volatile ECC errors"));
  const DxFinding* first = find(d, "initiating-failure");
  REQUIRE(first != nullptr);
  CHECK(first->f.ranks == std::vector<int>{5});
  // The Xid that needs action is a failure of its host; the one that needs none ([OK]) is not.
  bool xid48 = false, xid63 = false;
  for (const auto& f : r.failures) {
    xid48 = xid48 || (f.what.find("Xid 48") != std::string::npos && f.who.host == "node02");
    xid63 = xid63 || f.what.find("Xid 63") != std::string::npos;
  }
  CHECK(xid48);
  CHECK_FALSE(xid63);
  CHECK(d.exit_code == 1);
}

TEST_CASE("active diagnostics behind pdsh: the GPU pair whose P2P check failed") {
  LogReader r;
  Diagnosis d = diagnose_files({"diag_p2p/pdsh.out"}, &r);
  CHECK(r.unreadable.count == 0);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{1, 3});
  CHECK_THAT(d.blame.initiating.what, Catch::Contains("P2P check failed from rank 1 to rank 3 (path NVL)"));
  CHECK(d.exit_code == 1);
}

TEST_CASE("an [OK] report alone decides nothing") {
  LogReader r;
  r.read_text(
      "node042:12345 NCCL DIAG === RAS Diagnostics ===\n"
      "node042:12345 NCCL DIAG [OK]   ECC: no uncorrected volatile errors across 8 ranks in comm 0x1234\n"
      "node042:12345 NCCL DIAG [OK]   NCCL environment: NCCL_* env vars consistent across 8 ranks in comm 0x1234\n"
      "node042:12345 NCCL DIAG RAS diagnostics completed in 12.3 ms across 8 RAS peers\n",
      "ok.txt");
  r.finish();
  CHECK(r.records == 4);
  CHECK(r.failures.empty());
  CHECK(r.facts.empty());
  CHECK(r.ras_text.empty());
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 2);
}
