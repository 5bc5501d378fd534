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

namespace {

Failure timed_out(int rank, const std::string& host, const std::string& ts, long long ran_ms) {
  Failure f = failure(Failure::Kind::timeout, rank, host, "watchdog timeout in ALLREDUCE (SeqNum 4410)", ts);
  f.seq = 4410;
  f.ran_ms = ran_ms;
  return f;
}

}  // namespace

TEST_CASE("clock skew: the same timed-out work's start on two hosts gives their clocks' offset") {
  std::vector<Failure> fs = {timed_out(0, "b01", "2024-12-03 10:00:10.118", 60009),
                             timed_out(2, "b02", "2024-12-03 10:00:03.087", 60004),
                             timed_out(3, "b02", "2024-12-03 10:00:03.091", 60006)};
  CHECK(clock_skew_us(fs) == 7026000);
  // One host only, or no "ran for": nothing to compare.
  CHECK(clock_skew_us({fs[1], fs[2]}) == 0);
  fs[0].ran_ms = -1;
  CHECK(clock_skew_us(fs) == 0);
}

TEST_CASE("clock skew: a rank that only waited loses to one that did not, within the skew the logs show") {
  // b01's clock runs 7 s ahead: rank 1's own error (10:00:07 on b01) came before rank 2's
  // (10:00:03 on b02), which followed its own timeout.
  std::vector<Failure> fs = {timed_out(0, "b01", "2024-12-03 10:00:10.118", 60009),
                             timed_out(2, "b02", "2024-12-03 10:00:03.087", 60004),
                             failure(Failure::Kind::own_error, 2, "b02", "NCCL error: unhandled system error", "2024-12-03 10:00:03.412"),
                             failure(Failure::Kind::own_error, 1, "b01", "CUDA error: an illegal memory access", "2024-12-03 10:00:07.204")};
  BlameResult b = assign_blame(fs, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.ranks == std::vector<int>{1});
  CHECK(b.skew_us == 7026000);
  CHECK(b.skew_note.find("7.0 s") != std::string::npos);
  // Without the timeouts nothing shows the skew: the stamps decide, and name rank 2.
  BlameResult naive = assign_blame({fs[2], fs[3]}, {}, {});
  CHECK(naive.initiating.ranks == std::vector<int>{2});
  // Stamps further apart than the skew still decide: rank 2's error 20 s earlier is first.
  fs[2] = failure(Failure::Kind::own_error, 2, "b02", "NCCL error: unhandled system error", "2024-12-03 09:59:47.000");
  CHECK(assign_blame(fs, {}, {}).initiating.ranks == std::vector<int>{2});
}

TEST_CASE("a fault of the fabric met alike on several hosts blames nobody; one host first by its stamps is blamed") {
  auto fault = [](int idx, const std::string& host, const std::string& ts) {
    Failure f = failure(Failure::Kind::nccl_warn, -1, host, "NCCL WARN NET/IB : Got completion from peer with error 4", ts);
    f.who.proc = host + ":" + std::to_string(100 + idx);
    f.shared_fault = true;
    f.evidence.signal = "nccl.warn.ib_completion";
    f.evidence.line = 10 + idx;
    return f;
  };
  std::vector<Failure> fs = {fault(0, "h2", ""), fault(1, "h1", ""), fault(2, "h5", "")};
  BlameResult b = assign_blame(fs, {}, {});
  CHECK_FALSE(b.found);
  REQUIRE(b.have_alike);
  CHECK(b.alike.hosts == std::vector<std::string>{"h1", "h2", "h5"});
  CHECK(b.alike.procs.size() == 3);
  // Two processes of one host alike: that host's fault.
  BlameResult one_host = assign_blame({fault(0, "h3", ""), fault(1, "h3", "")}, {}, {});
  REQUIRE(one_host.found);
  CHECK_FALSE(one_host.have_alike);
  CHECK(one_host.initiating.hosts == std::vector<std::string>{"h3"});
  std::vector<Failure> stamped = {fault(0, "h2", "2024-01-01 10:00:09"), fault(1, "h1", "2024-01-01 10:00:01")};
  BlameResult first = assign_blame(stamped, {}, {});
  REQUIRE(first.found);
  CHECK_FALSE(first.have_alike);
  CHECK(first.initiating.hosts == std::vector<std::string>{"h1"});
}

TEST_CASE("NCCL's own cause line stands for its process's general error") {
  Failure general = failure(Failure::Kind::own_error, -1, "", "DistBackendError: unhandled system error");
  general.who.proc = "file x.log";
  Failure cause = failure(Failure::Kind::nccl_warn, -1, "", "Error while creating shared memory segment /dev/shm/nccl-a (size 8)");
  cause.who.proc = "file x.log";
  cause.cause = true;
  BlameResult b = assign_blame({general, cause}, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.what.find("/dev/shm") != std::string::npos);
}

TEST_CASE("clock skew: ranks of unknown host keep their file's clock") {
  std::vector<Failure> fs = {timed_out(0, "", "2024-12-03 10:00:10.118", 60009),
                             timed_out(2, "", "2024-12-03 10:00:03.087", 60004)};
  fs[0].evidence.file = "node-a.log";
  fs[1].evidence.file = "node-b.log";
  CHECK(clock_skew_us(fs) == 7026000);
  fs[1].evidence.file = "node-a.log";  // one file: one clock
  CHECK(clock_skew_us(fs) == 0);
}

// The form of NVIDIA/nccl#795 (tests/diagnose/SOURCES.md); our own values.
TEST_CASE("a process whose peer went away only followed, its later errors too; the peer is named") {
  auto line = [](Failure::Kind kind, const std::string& what, long long at, const std::string& peer) {
    Failure f = failure(kind, -1, "gpu-q17", what);
    f.who.proc = "gpu-q17:77120";
    f.evidence.line = at;
    f.peer = peer;
    return f;
  };
  std::vector<Failure> fs = {
      line(Failure::Kind::aborted, "NCCL WARN Net : Call to recv from 10.31.5.88<41022> failed : Broken pipe", 1, "10.31.5.88"),
      line(Failure::Kind::nccl_warn, "NCCL WARN [Proxy Service 11] Failed to execute operation Connect from rank 11", 7, ""),
      line(Failure::Kind::aborted, "NCCL WARN Net : Connection closed by remote peer gpu-q17.pool<39917>", 8, "gpu-q17.pool")};
  BlameResult b = assign_blame(fs, {}, {});
  REQUIRE(b.found);
  CHECK(b.initiating.peer);
  CHECK(b.initiating.procs == std::vector<std::string>{"10.31.5.88"});
  CHECK(party_subject(b.initiating) == "the peer at 10.31.5.88");
  CHECK(b.initiating.what.find("process gpu-q17:77120 lost its connection to it first") == 0);
  REQUIRE(b.collateral.size() == 3);
  for (const auto& g : b.collateral) {
    CHECK(g.procs == std::vector<std::string>{"gpu-q17:77120"});
    CHECK(g.kind == Failure::Kind::aborted);
  }
  // An error of that process before its peer went away is its own.
  fs[1].evidence.line = 0;
  BlameResult own = assign_blame(fs, {}, {});
  REQUIRE(own.found);
  CHECK_FALSE(own.initiating.peer);
  CHECK(own.initiating.procs == std::vector<std::string>{"gpu-q17:77120"});
  // Another process's own error, later in the input, still started it: the peer was that process.
  fs[1].evidence.line = 7;
  Failure other = failure(Failure::Kind::own_error, -1, "gpu-q21", "Test NCCL failure common.cu:961 'internal error'");
  other.who.proc = "gpu-q21:901";
  other.evidence.line = 20;
  fs.push_back(other);
  BlameResult b2 = assign_blame(fs, {}, {});
  REQUIRE(b2.found);
  CHECK(b2.initiating.procs == std::vector<std::string>{"gpu-q21:901"});
  // Only a connection to its own host: that is named, for want of another.
  BlameResult near = assign_blame({fs[2]}, {}, {});
  REQUIRE(near.found);
  CHECK(near.initiating.procs == std::vector<std::string>{"gpu-q17.pool"});
}

// The form of horovod/horovod#1651 (tests/diagnose/SOURCES.md); our own values.
TEST_CASE("a file's error and srun's tasks ending alike with their own exit code blame nobody, stop nobody") {
  Failure f = failure(Failure::Kind::own_error, -1, "", "UnknownError:  ncclCommInitRank failed: unhandled system error");
  f.who.proc = "file s.log";
  f.evidence.file = "s.log";
  std::vector<LauncherEntry> l;
  for (int task : {1, 0}) {
    LauncherEntry e = entry(task, task == 0 ? "hpc-g027" : "hpc-g031", false, "", "");
    e.exitcode = "1";
    e.evidence = Evidence{"s.log", 20 + task, "srun: error: task Exited with exit code 1"};
    l.push_back(e);
  }
  BlameResult b = assign_blame({f}, l, {});
  CHECK_FALSE(b.found);
  REQUIRE(b.have_alike);
  CHECK(b.alike.ranks == std::vector<int>{0, 1});
  CHECK(b.alike.hosts == std::vector<std::string>{"hpc-g027", "hpc-g031"});
  CHECK(b.alike.what == f.what);
  CHECK(b.collateral.empty());
  // Different exit codes: the file's process is judged as before, and a task that exited with
  // its own code is not one the launcher stopped.
  l[0].exitcode = "2";
  BlameResult c = assign_blame({f}, l, {});
  REQUIRE(c.found);
  CHECK(c.initiating.procs == std::vector<std::string>{"file s.log"});
  REQUIRE(c.collateral.size() == 1);
  CHECK(c.collateral[0].ranks == std::vector<int>{0, 1});
  CHECK(c.collateral[0].what.find("exited with an error code of its own (exit code 1, 2)") == 0);
}
