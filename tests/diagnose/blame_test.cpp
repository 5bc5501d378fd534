// diagnose/blame: initiating versus collateral, and the launcher's claim.
#include <catch2/catch.hpp>

#include "diagnose/blame.h"

using namespace denpex::diag;
using namespace denpex::evidence;

namespace {

Failure failure(Failure::Kind kind, int rank, const std::string& host, const std::string& what, const std::string& ts = "") {
  Failure f;
  f.kind = kind;
  f.who.rank = rank;
  f.who.host = host;
  f.who.proc = "rank " + std::to_string(rank);
  f.what = what;
  if (!ts.empty()) parse_timestamp(ts, &f.when);
  f.evidence = Evidence{"f.log", rank + 1, what};
  return f;
}

LauncherEntry entry(int rank, const std::string& host, bool root, const std::string& ts, const std::string& signal) {
  LauncherEntry e;
  e.rank = rank;
  e.host = host;
  e.root_cause = root;
  parse_timestamp(ts, &e.when);
  e.signal = signal;
  return e;
}

}  // namespace

TEST_CASE("an OOM on node02 initiates; node01's timeouts and torchrun's claim only followed") {
  std::vector<Failure> fs;
  for (int r = 0; r < 4; ++r)
    fs.push_back(failure(Failure::Kind::timeout, r, "node01", "watchdog timeout in ALLREDUCE (SeqNum 1201)", "2024-05-14 10:42:05"));
  fs.push_back(failure(Failure::Kind::oom, 6, "node02", "torch.OutOfMemoryError: CUDA out of memory."));
  std::vector<LauncherEntry> l = {entry(2, "node01", true, "2024-05-14_10:42:06", "SIGABRT"),
                                  entry(6, "node02", true, "2024-05-14_10:12:05", ""),
                                  entry(4, "node02", false, "2024-05-14_10:12:06", "SIGTERM"),
                                  entry(5, "node02", false, "2024-05-14_10:12:06", "SIGTERM")};
  BlameResult b = assign_blame(fs, l, {});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{6});
  CHECK(b.initiating.hosts == std::vector<std::string>{"node02"});
  CHECK(b.initiating.when.text() == "05-14 10:12:05");  // from the launcher, the OOM line has no time
  REQUIRE(b.collateral.size() == 2);
  CHECK(b.collateral[0].ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(b.collateral[1].ranks == std::vector<int>{4, 5});
  CHECK(b.collateral[1].what.find("stopped by the launcher after rank 6") == 0);
  CHECK(b.have_claim);
  CHECK(b.claim_wrong);
  CHECK(b.claim_note.find("names rank 2") != std::string::npos);
}

TEST_CASE("the earliest own error wins; a later one is collateral") {
  std::vector<Failure> fs = {
      failure(Failure::Kind::own_error, 3, "n1", "RuntimeError: later", "2024-01-01 10:00:09"),
      failure(Failure::Kind::own_error, 1, "n1", "ValueError: first", "2024-01-01 10:00:01"),
  };
  BlameResult b = assign_blame(fs, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{1});
  REQUIRE(b.collateral.size() == 1);
  CHECK(b.collateral[0].ranks == std::vector<int>{3});
}

TEST_CASE("without own errors, who never joined initiates; timeouts alone decide nothing") {
  std::vector<Failure> timeouts = {failure(Failure::Kind::timeout, 0, "n", "watchdog timeout"),
                                   failure(Failure::Kind::timeout, 1, "n", "watchdog timeout")};
  CHECK_FALSE(assign_blame(timeouts, {}, {}).found);
  auto with_desync = timeouts;
  with_desync.push_back(failure(Failure::Kind::never_joined, 3, "", "never joined"));
  BlameResult b = assign_blame(with_desync, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{3});
  Divergence d{{7}, {"n2"}, {}, "rank 7 called Broadcast", {}};
  BlameResult c = assign_blame(timeouts, {}, {d});
  REQUIRE(c.found);
  CHECK(c.initiating.ranks == std::vector<int>{7});
}

TEST_CASE("an installation finding initiates before the NCCL errors it causes") {
  std::vector<Failure> fs = {failure(Failure::Kind::own_error, 5, "node03", "DistBackendError: NCCL error", "2024-06-02 08:15:13")};
  Divergence env{{2, 3}, {"node02"}, {}, "ranks 2-3 on node02 load NCCL 2.27.3", {}};
  BlameResult b = assign_blame(fs, {}, {}, {env});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{2, 3});
  REQUIRE(b.collateral.size() == 1);
  CHECK(b.collateral[0].ranks == std::vector<int>{5});
}

// thu-coai/EVA#43's form (tests/diagnose/SOURCES.md): one unlabelled OOM traceback, then the
// agent's "failed (exitcode: 1) local_rank: 0"; our own values.
TEST_CASE("a file's one unlabelled process is the one worker its launcher saw fail; a local rank is no job rank") {
  Failure f = failure(Failure::Kind::oom, -1, "", "torch.OutOfMemoryError: CUDA out of memory.");
  f.who.proc = "file w.log";
  f.evidence.file = "w.log";
  LauncherEntry failed = entry(3, "", false, "2024-05-14_10:42:06", "");
  failed.local = true;
  failed.exitcode = "1";
  failed.pid = 4711;
  failed.evidence = Evidence{"w.log", 9, "failed (exitcode: 1) local_rank: 3 (pid: 4711)"};
  LauncherEntry stopped = entry(1, "", false, "2024-05-14_10:42:06", "SIGTERM");
  stopped.local = true;
  stopped.exitcode = "-15";
  stopped.pid = 4709;
  BlameResult b = assign_blame({f}, {failed, stopped}, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.procs == std::vector<std::string>{"local rank 3"});
  CHECK(b.initiating.ranks.empty());
  for (const auto& g : b.collateral) CHECK(g.ranks.empty());
  // In another file the launcher's worker is not this process.
  failed.evidence.file = "other.log";
  BlameResult c = assign_blame({f}, {failed}, {}, {});
  CHECK(c.initiating.procs == std::vector<std::string>{"file w.log"});
}

// The form of deepspeedai/DeepSpeed#4488 and NVIDIA/nccl#849 (tests/diagnose/SOURCES.md).
TEST_CASE("the coordinator's report of who missed the barrier outranks another rank's pointer to the coordinator") {
  std::vector<Failure> fs = {failure(Failure::Kind::pointed_to, 0, "", "Rank 3 successfully reached monitoredBarrier"),
                             failure(Failure::Kind::never_joined, 2, "", "Rank 2 failed to pass monitoredBarrier")};
  BlameResult b = assign_blame(fs, {}, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{2});
  for (const auto& g : b.collateral) CHECK(g.ranks != std::vector<int>{0});
  BlameResult c = assign_blame({fs[0]}, {}, {}, {});
  CHECK(c.initiating.ranks == std::vector<int>{0});
}
