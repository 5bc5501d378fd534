// The rules about the probe itself: what it could not check, and where
// its loader emulation and the real loader disagree, become warnings; never a verdict on the
// libraries, never silence.
#include <catch2/catch.hpp>

#include "compare/judge.h"
#include "test_records.h"

using namespace denpex;
using namespace denpex::test;

namespace {

std::vector<Finding> judge_one(const RankRecord& r) { return judge(group_records({r}), {}, {}); }

}  // namespace

TEST_CASE("a loader disagreement is a warning naming both paths") {
  RankRecord r = at(load_record("rank_ok.json"), 0, "node1");
  r.loader_checks.push_back({"libnccl.so.2", "/opt/a/libnccl.so.2",
                             "/opt/a/glibc-hwcaps/x86-64-v3/libnccl.so.2", ""});
  auto findings = with_code(judge_one(r), "probe-loader-disagreement");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == Severity::warning);
  CHECK(findings[0].message.find("/opt/a/libnccl.so.2") != std::string::npos);
  CHECK(findings[0].message.find("/opt/a/glibc-hwcaps/x86-64-v3/libnccl.so.2") !=
        std::string::npos);
  CHECK(findings[0].ranks == std::vector<int>{0});

  // Agreement says nothing.
  r.loader_checks[0].loaded = r.loader_checks[0].emulated;
  CHECK(with_code(judge_one(r), "probe-loader-disagreement").empty());

  // The loader finding nothing where the emulation found a file is a disagreement too.
  r.loader_checks[0].loaded = "";
  r.loader_checks[0].error = "libnccl.so.2: cannot open shared object file";
  auto none = with_code(judge_one(r), "probe-loader-disagreement");
  REQUIRE(none.size() == 1);
  CHECK(none[0].message.find("cannot open shared object file") != std::string::npos);
}

TEST_CASE("an ABI check without symbol tables is a warning, not nccl-abi-mismatch") {
  RankRecord r = at(load_record("rank_ok.json"), 0, "node1");
  AbiCheck a;
  a.consumer = "/site/torch/lib/libtorch_cuda.so";
  a.library = "/site/nvidia/nccl/lib/libnccl.so.2";
  a.error = "cannot read the dynamic symbols of /site/nvidia/nccl/lib/libnccl.so.2: it has no "
            "section headers";
  r.abi.push_back(a);
  auto findings = judge_one(r);
  CHECK(with_code(findings, "nccl-abi-mismatch").empty());
  auto unchecked = with_code(findings, "nccl-abi-unchecked");
  REQUIRE(unchecked.size() == 1);
  CHECK(unchecked[0].severity == Severity::warning);
  CHECK(unchecked[0].message.find("no section headers") != std::string::npos);
}

TEST_CASE("probe errors are reported, not dropped") {
  RankRecord r = at(load_record("rank_ok.json"), 0, "node1");
  r.probe_errors.push_back("/etc/ld.so.cache: is a FIFO (named pipe), not a regular file");
  auto findings = with_code(judge_one(r), "probe-error");
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == Severity::warning);
  CHECK(findings[0].message.find("/etc/ld.so.cache: is a FIFO") != std::string::npos);
}

TEST_CASE("loader checks and ABI errors survive the record's JSON round trip") {
  RankRecord r = at(load_record("rank_ok.json"), 0, "node1");
  r.loader_checks.push_back({"libnccl.so.2", "/a", "/b", ""});
  r.abi.push_back({"/c", "/l", {}, {}, "unreadable"});
  RankRecord back;
  std::string error;
  REQUIRE(record_from_json(nlohmann::json(r), &back, &error));
  REQUIRE(back.loader_checks.size() == 1);
  CHECK(back.loader_checks[0].loaded == "/b");
  REQUIRE(back.abi.size() == r.abi.size());
  CHECK(back.abi.back().error == "unreadable");
}
