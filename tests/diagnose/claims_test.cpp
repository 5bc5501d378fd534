// No claim without support (diagnose/blame.h): sides of a disagreement are named, never "started
// by"; a launcher's summary, an abort after a timeout and DeepSpeed's exit line are claims to
// check; and the forms read for it (fixtures/families, the threads in SOURCES.md survey H).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "evidence/input_source.h"
#include "tests/diagnose/diagnose_test_support.h"

using namespace denpex;
using namespace denpex::diag;
using namespace denpex::evidence;
using denpex::diag::test::find;

namespace {

Diagnosis diagnose_family(const std::string& name, LogReader* r) {
  OpenedInput in = open_input(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/families/" + name);
  REQUIRE(in.status == OpenedInput::Status::ok);
  std::string error;
  REQUIRE(r->read(in.source.get(), name, &error));
  r->finish();
  return diagnose(*r);
}

std::string all_messages(const Diagnosis& d) {
  std::string all = d.inconclusive + "\n";
  for (const auto& x : d.findings) all += code_name(x.f.code) + std::string(": ") + x.f.message + "\n";
  return all;
}

}  // namespace

TEST_CASE("two ranks of one group one broadcast apart disagree; neither started it") {
  LogReader r;
  Diagnosis d = diagnose_family("watchdog_seq_apart.log", &r);
  CHECK(d.exit_code == 1);
  CHECK_FALSE(d.blame.found);
  REQUIRE(d.blame.disagreeing.size() == 1);
  CHECK(d.blame.disagreeing[0].ranks == std::vector<int>{0, 1});
  // The group comes from "failure detected by watchdog at work sequence id: N".
  std::string m = all_messages(d);
  CHECK(m.find("process group PG 9") != std::string::npos);
  nlohmann::json j = diagnosis_json(d, r);
  CHECK(j["diagnosis"]["initiating"].is_null());
  REQUIRE(j["diagnosis"]["disagreeing"].size() == 1);
  CHECK(render_diagnosis(d, r).find("Started by: not decided from this input: ranks 0-1 disagree") == 0);
  // Each process's own time of failure is kept with its role.
  std::set<std::string> timed;
  for (const auto& c : j["diagnosis"]["collateral"])
    if (c.contains("failed_at"))
      for (const auto& kv : c["failed_at"].items()) timed.insert(kv.key());
  CHECK(timed == std::set<std::string>{"rank 0", "rank 1"});
}

TEST_CASE("old fingerprints without SequenceNumber, both sides on one line: both named, neither blamed") {
  LogReader r;
  Diagnosis d = diagnose_family("fingerprint_old_two_sided.log", &r);
  const DxFinding* x = find(d, "collective-args-mismatch");
  REQUIRE(x != nullptr);
  std::vector<int> ranks = x->f.ranks;
  std::sort(ranks.begin(), ranks.end());
  CHECK(ranks == std::vector<int>{0, 1});
  CHECK(x->f.message.find("rank 1 runs ALLGATHER Float of 12 elements while rank 0 runs _ALLGATHER_BASE Float of 24") !=
        std::string::npos);
  CHECK_FALSE(d.blame.found);
}

TEST_CASE("'Rank R is running inconsistent collective' is R's own report: R is one side, not the culprit") {
  LogReader r;
  Diagnosis d = diagnose_family("fingerprint_one_sided.log", &r);
  const DxFinding* x = find(d, "collective-args-mismatch");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{3});
  CHECK(x->f.message.find("rank 3 reports that its collective") != std::string::npos);
  CHECK_FALSE(d.blame.found);
  CHECK(render_diagnosis(d, r).find("rank 3 differs from a rank the input does not name") != std::string::npos);
}

TEST_CASE("a rank that cannot get the ncclUniqueId from the store's rank only followed it") {
  LogReader r;
  Diagnosis d = diagnose_family("store_unique_id_reset.log", &r);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{0});
  bool three_follows = false;
  for (const auto& p : d.blame.collateral)
    if (std::find(p.ranks.begin(), p.ranks.end(), 3) != p.ranks.end()) three_follows = true;
  CHECK(three_follows);
}

TEST_CASE("a logger's ERROR line naming the rank an exception was raised on, with its time") {
  LogReader r;
  Diagnosis d = diagnose_family("logged_rank_exception.log", &r);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{1});
  CHECK(d.blame.initiating.when.known());
}

TEST_CASE("torchrun's root cause with SIGABRT after every shown rank timed out is a claim, not the start") {
  LogReader r;
  Diagnosis d = diagnose_family("torchrun_abort_after_timeouts.log", &r);
  CHECK_FALSE(d.blame.found);
  CHECK(d.blame.have_claim);
  nlohmann::json j = diagnosis_json(d, r);
  CHECK(j["diagnosis"]["launcher_claim"]["correct"].is_null());
  CHECK(render_diagnosis(d, r).find("(a claim only: nothing in the input shows that process failing first)") !=
        std::string::npos);
  // Without the timeouts, the one worker the launcher saw abort is the one.
  LogReader alone;
  alone.read_text(
      "Root Cause (first observed failure):\n[0]:\n  time      : 2025-02-11_09:30:12\n  host      : box-17\n"
      "  rank      : 0 (local_rank: 0)\n  exitcode  : -6 (pid: 5120)\n  error_file: <N/A>\n"
      "  traceback : Signal 6 (SIGABRT) received by PID 5120\n",
      "alone.log");
  alone.finish();
  CHECK(diagnose(alone).blame.initiating.ranks == std::vector<int>{0});
}

TEST_CASE("DeepSpeed's 'exits with return code = -9' names no worker, and the SIGKILL is said") {
  LogReader r;
  Diagnosis d = diagnose_family("deepspeed_rc_minus9.log", &r);
  CHECK_FALSE(d.blame.found);
  CHECK(d.exit_code == 2);
  CHECK(d.inconclusive.find("killed with SIGKILL (exit -9)") != std::string::npos);
  CHECK(d.inconclusive.find("out-of-memory") != std::string::npos);
}

TEST_CASE("an image's NCCL_VERSION against torch.cuda.nccl.version() printed alone") {
  LogReader r;
  Diagnosis d = diagnose_family("env_image_nccl_vs_torch.log", &r);
  const DxFinding* x = find(d, "torch-nccl-mismatch");
  REQUIRE(x != nullptr);
  CHECK(x->f.message.find("PyTorch was built with NCCL 2.20.5") != std::string::npos);
  CHECK(x->f.message.find("the system's NCCL package is 2.18.1 (+cuda12.1)") != std::string::npos);
}

TEST_CASE("two NCCL libraries of different versions side by side, and an RPM repository's against the one installed") {
  LogReader r1, r2;
  Diagnosis libs = diagnose_family("env_two_nccl_side_by_side.log", &r1);
  const DxFinding* x = find(libs, "nccl-version-mismatch");
  REQUIRE(x != nullptr);
  CHECK(x->f.hosts == std::vector<std::string>{"bld-04"});
  CHECK(x->f.message.find("NCCL 2.21.5 (/usr/lib/x86_64-linux-gnu/libnccl.so.2)") != std::string::npos);
  CHECK(x->f.message.find("NCCL 2.26.2 (/home/user/src/nccl/build/lib/libnccl.so.2)") != std::string::npos);
  Diagnosis rpm = diagnose_family("env_rpm_nccl_packages.log", &r2);
  const DxFinding* y = find(rpm, "nccl-version-mismatch");
  REQUIRE(y != nullptr);
  CHECK(y->f.message.find("2.7.8") != std::string::npos);
  CHECK(y->f.message.find("2.11.4") != std::string::npos);
  CHECK_FALSE(rpm.blame.found);
}

TEST_CASE("every example of the entries added for these forms is read by its own entry") {
  denpex::diag::test::check_examples_read_by_own_entry({"torch.store_unique_id", "python.logged_rank_exception",
                                                        "install.torch_nccl_tuple", "install.nccl_package",
                                                        "env.nccl_package_file", "torch.watchdog"});
}

TEST_CASE("Open MPI's zero-padded pid in the handler's prefix is the process its end-of-job line names") {
  LogReader r;
  Diagnosis d = diagnose_family("ompi_padded_pid.log", &r);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{2});
  CHECK(d.blame.initiating.procs.empty());
  for (const auto& p : d.blame.collateral) CHECK(std::find(p.ranks.begin(), p.ranks.end(), 2) == p.ranks.end());
  CHECK(d.nranks == 1);
}

TEST_CASE("Horovod's 'Stalled ranks:' list, alone and behind a replica prefix with glued mpirun tags") {
  LogReader r1, r2;
  Diagnosis shortform = diagnose_family("horovod_stalled_ranks_short.log", &r1);
  const DxFinding* x = find(shortform, "collective-missing");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{2});
  CHECK(x->f.message.find("broadcast.noname.7") != std::string::npos);
  Diagnosis glued = diagnose_family("horovod_stalled_glued_prefix.log", &r2);
  const DxFinding* y = find(glued, "collective-missing");
  REQUIRE(y != nullptr);
  CHECK(y->f.ranks == std::vector<int>{1});
  CHECK(y->f.message.find("HorovodAllreduce_grads_0") != std::string::npos);
}

TEST_CASE("Horovod's 'has been shut down' is a rank meeting another's failure, not its own") {
  LogReader r;
  Diagnosis d = diagnose_family("horovod_shut_down.log", &r);
  CHECK_FALSE(d.blame.found);
  bool both_follow = false;
  for (const auto& p : d.blame.collateral) both_follow |= p.ranks == std::vector<int>{0, 1};
  CHECK(both_follow);
}

TEST_CASE("torchrun's exit code 1 for a rank whose own lines show it timing out is no proof it started it") {
  LogReader r;
  Diagnosis d = diagnose_family("torchrun_exit1_after_timeout.log", &r);
  CHECK_FALSE(d.blame.found);
  REQUIRE(d.blame.disagreeing.size() == 1);
  CHECK(d.blame.disagreeing[0].ranks == std::vector<int>{0, 1});
  CHECK(d.blame.have_claim);
}

TEST_CASE("a short host name and its FQDN in one input are one host, in the blame and the counts") {
  LogReader r;
  for (const char* name : {"launcher-a17.log", "node-a17.log"}) {
    std::string path = std::string(DENPEX_DIAGNOSE_FIXTURES) + "/fqdn_two_files/" + name;
    OpenedInput in = open_input(path);
    REQUIRE(in.status == OpenedInput::Status::ok);
    std::string error;
    REQUIRE(r.read(in.source.get(), path, &error));
  }
  r.finish();
  Diagnosis d = diagnose(r);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{5});
  CHECK(d.blame.initiating.hosts == std::vector<std::string>{"gpu-a17"});
  CHECK(d.nhosts == 1);
  for (const auto& p : r.processes) CHECK(p.host.find(".cluster.local") == std::string::npos);
}

TEST_CASE("two processes with different NCCL versions and no majority disagree; neither started it") {
  LogReader r;
  r.read_text("node-a:1101:1101 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "a.log");
  r.read_text("node-b:2202:2202 [0] NCCL INFO NCCL version 2.20.3+cuda12.4\n", "b.log");
  r.finish();
  Diagnosis d = diagnose(r);
  REQUIRE(find(d, "nccl-version-mismatch") != nullptr);
  CHECK_FALSE(d.blame.found);
  REQUIRE(d.blame.disagreeing.size() == 1);
  CHECK(d.blame.disagreeing[0].procs.size() == 2);
  // With a third process agreeing with one of them, the odd one is the start.
  LogReader r3;
  r3.read_text("node-a:1101:1101 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "a.log");
  r3.read_text("node-b:2202:2202 [0] NCCL INFO NCCL version 2.20.3+cuda12.4\n", "b.log");
  r3.read_text("node-c:3303:3303 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", "c.log");
  r3.finish();
  Diagnosis d3 = diagnose(r3);
  REQUIRE(d3.blame.found);
  CHECK(d3.blame.initiating.hosts == std::vector<std::string>{"node-b"});
}

TEST_CASE("a NET/IB retry that ran out (error 12, the old wording without a peer) blames no process") {
  LogReader r;
  Diagnosis d = diagnose_family("ib_retry_no_peer.log", &r);
  CHECK(d.exit_code == 1);
  CHECK_FALSE(d.blame.found);
  REQUIRE(d.blame.have_alike);
  CHECK(d.blame.alike.ranks.empty());
  const DxFinding* x = find(d, "initiating-failure");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks.empty());
  CHECK(x->f.fix.find("NCCL_IB_GID_INDEX") != std::string::npos);
  CHECK(x->f.fix.find("NCCL_IB_TIMEOUT") != std::string::npos);
  CHECK(x->f.message.find("no rank is blamed") != std::string::npos);
  CHECK(diagnosis_json(d, r)["diagnosis"]["initiating"].is_null());
}

TEST_CASE("two ranks on one GPU are named together, the verbs library's absence is no failure") {
  LogReader r;
  Diagnosis d = diagnose_family("duplicate_gpu_ibverbs.log", &r);
  CHECK(d.exit_code == 1);
  CHECK_FALSE(d.blame.found);
  int shared = 0;
  for (const auto& x : d.findings)
    if (code_name(x.f.code) == std::string("gpu-shared-by-ranks")) {
      ++shared;
      CHECK(x.f.ranks == std::vector<int>{0, 1});
      CHECK(x.f.fix.find("torch.cuda.set_device(local_rank)") != std::string::npos);
    }
  CHECK(shared == 1);
  std::string m = all_messages(d);
  CHECK(m.find("libibverbs") == std::string::npos);
  for (const auto& p : d.blame.collateral) CHECK(p.what.find("libibverbs") == std::string::npos);
}

TEST_CASE("one process's general NCCL error with no WARN asserts no starter and says what to add") {
  LogReader r;
  Diagnosis d = diagnose_family("invalid_usage_lone.log", &r);
  CHECK(d.exit_code == 2);
  CHECK_FALSE(d.blame.found);
  CHECK(d.inconclusive.find("NCCL_DEBUG=WARN") != std::string::npos);
  CHECK(d.inconclusive.find("every rank") != std::string::npos);
}

TEST_CASE("torchrun's Root Cause block cut after its rank line still names its worker and time") {
  LogReader r;
  Diagnosis d = diagnose_family("torchrun_root_cause_cut.log", &r);
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{2});
  // The worker that ended with its own code at the same second is not called stopped.
  bool rank0_own = false;
  for (const auto& p : d.blame.collateral)
    if (std::find(p.ranks.begin(), p.ranks.end(), 0) != p.ranks.end()) rank0_own = p.what.find("exit code 1") != std::string::npos;
  CHECK(rank0_own);
}

TEST_CASE("NCCL lines pasted without their host:pid:tid header are NCCL records") {
  LogReader r;
  Diagnosis d = diagnose_family("nccl_bare_nvls.log", &r);
  CHECK(d.exit_code == 1);
  const DxFinding* x = find(d, "initiating-failure");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks.empty());
  CHECK(x->f.fix.find("fabricmanager") != std::string::npos);
}

TEST_CASE("horovodrun's [N]<stderr>: tag before Horovod's older 'Missing ranks:' report") {
  LogReader r;
  Diagnosis d = diagnose_family("horovodrun_missing_ranks.log", &r);
  const DxFinding* x = find(d, "collective-missing");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{0, 1});
}

TEST_CASE("mpirun --timestamp-output names the rank of a CUDA error") {
  LogReader r;
  Diagnosis d = diagnose_family("mpirun_timestamp_output.log", &r);
  const DxFinding* x = find(d, "cuda-driver-too-old");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{6});
}

TEST_CASE("NCCL's version behind a full-width colon, and its refusal of graph capture read as the build's") {
  LogReader r;
  Diagnosis d = diagnose_family("nccl_version_fullwidth_graph.log", &r);
  bool version = false;
  for (const auto& f : r.facts) version |= f.kind == Fact::Kind::nccl_version && f.a == "2.19.3" && f.b == "11.0";
  CHECK(version);
  CHECK(find(d, "cuda-driver-too-old") == nullptr);
  // Every process loading that build meets it: the one printing it did not start anything.
  CHECK_FALSE(d.blame.found);
  const DxFinding* x = find(d, "initiating-failure");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks.empty());
  CHECK(x->f.fix.find("CUDA 11.3 or later") != std::string::npos);
}
