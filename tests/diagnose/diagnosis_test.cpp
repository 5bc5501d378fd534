// diagnose/diagnosis on the project's own multi-node fixtures (tests/diagnose/fixtures): the
// initiating rank on another node than torchrun's claim, version evidence spread over three
// nodes' files judged exactly as the live gate judges records, honest inconclusive verdicts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "compare/group.h"
#include "compare/judge.h"
#include "diagnose/diagnosis.h"
#include "diagnose/verify_lines.h"
#include "tests/diagnose/diagnose_test_support.h"
#include "evidence/input_source.h"

using namespace denpex;
using namespace denpex::diag;
using denpex::diag::test::find;
using namespace denpex::evidence;

namespace {

void read_dir(LogReader* r, const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/" + dir))
    files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    OpenedInput in = open_input(f);
    REQUIRE(in.status == OpenedInput::Status::ok);
    std::string error;
    REQUIRE(r->read(in.source.get(), f, &error));
  }
  r->finish();
}

void every_finding_has_fix_and_verify(const Diagnosis& d) {
  for (const auto& x : d.findings) {
    INFO(code_name(x.f.code));
    CHECK_FALSE(x.f.fix.empty());
    CHECK_FALSE(x.verify.text.empty());
  }
}

}  // namespace

TEST_CASE("OOM on node02 rank 6 initiates; torchrun on node01 blames rank 2, which only timed out") {
  LogReader r;
  read_dir(&r, "oom_two_nodes");
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{6});
  CHECK(d.blame.initiating.hosts == std::vector<std::string>{"node02"});
  CHECK(d.blame.initiating.kind == Failure::Kind::oom);
  REQUIRE(d.blame.collateral.size() == 2);
  CHECK(d.blame.collateral[0].ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(d.blame.collateral[0].what.find("ALLREDUCE (SeqNum 1201)") != std::string::npos);
  CHECK(d.blame.collateral[1].ranks == std::vector<int>{4, 5, 7});
  CHECK(d.blame.claim_wrong);
  CHECK(d.blame.claim.ranks == std::vector<int>{2, 6});
  const DxFinding* init = find(d, "initiating-failure");
  REQUIRE(init != nullptr);
  CHECK(init->f.ranks == std::vector<int>{6});
  // The fix names the allocator setting the message suggests; the verify is the signature's,
  // a command that works when pasted.
  CHECK(init->f.fix.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") != std::string::npos);
  CHECK(init->verify.text == "denpex-probe diagnose -");
  CHECK(init->verify.argv == std::vector<std::string>{"denpex-probe", "diagnose", "-"});
  REQUIRE_FALSE(init->evidence.empty());
  CHECK(init->evidence[0].file.find("node02.log") != std::string::npos);
  CHECK(init->evidence[0].line == 9);
  every_finding_has_fix_and_verify(d);
  nlohmann::json j = diagnosis_json(d, r);
  CHECK(j["diagnosis"]["initiating"]["ranks"] == nlohmann::json::array({6}));
  CHECK(j["diagnosis"]["launcher_claim"]["correct"] == false);
  CHECK(j["nranks"] == 8);
  CHECK(j["nhosts"] == 2);
  std::string text = render_diagnosis(d, r);
  CHECK(text.rfind("Started by: rank 6 on node02", 0) == 0);
}

TEST_CASE("NCCL versions over three nodes' files: the live gate's finding, same ranks and hosts") {
  LogReader r;
  read_dir(&r, "versions_three_nodes");
  Diagnosis d = diagnose(r);
  const DxFinding* v = find(d, "nccl-version-mismatch");
  REQUIRE(v != nullptr);
  CHECK(v->f.ranks == std::vector<int>{2, 3});
  CHECK(v->f.hosts == std::vector<std::string>{"node02"});
  CHECK(v->f.expected == "2.26.2");
  CHECK(v->f.found == "2.27.3");
  // The odd node with one that agreed: on the odd node alone the gate would compare nothing.
  CHECK(v->verify.text == "mpirun -np 2 -H node02,node01 --map-by ppr:1:node denpex-probe");
  CHECK(v->verify_or.text == "srun --mpi=pmix -w node02,node01 --ntasks-per-node=1 denpex-probe");

  // The live gate on the same six ranks.
  std::vector<RankRecord> live;
  for (int rank = 0; rank < 6; ++rank) {
    RankRecord rec;
    rec.rank = rank;
    rec.host = rank < 2 ? "node01" : rank < 4 ? "node02" : "node03";
    rec.nccl.status = NcclStatus::ok;
    rec.nccl.version = rank == 2 || rank == 3 ? "2.27.3" : "2.26.2";
    rec.nccl.cuda_build = "12.2";
    rec.cuda_driver.status = DriverStatus::ok;
    live.push_back(rec);
  }
  const Finding* gate = nullptr;
  auto found = judge(group_records(live), {}, JudgeOptions{});
  for (const auto& f : found)
    if (f.code == FindingCode::nccl_version_mismatch) gate = &f;
  REQUIRE(gate != nullptr);
  CHECK(gate->ranks == v->f.ranks);
  CHECK(gate->hosts == v->f.hosts);
  CHECK(gate->expected == v->f.expected);
  CHECK(gate->found == v->f.found);
  // The version difference is what started it: the NCCL errors on other ranks followed.
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{2, 3});
  every_finding_has_fix_and_verify(d);
}

TEST_CASE("one rank's lines never pass: exit 2 with what to add") {
  LogReader r;
  r.read_text(
      "us-gpu012:423:423 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 0 op 0 root 0 comm 0x16 [nranks=2] stream 0x1\n"
      "us-gpu012:423:423 [0] NCCL INFO Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 0 op 0 root 0 comm 0x16 [nranks=2] stream 0x1\n",
      "paste.log");
  r.finish();
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 2);
  CHECK(d.verdict == "inconclusive");
  REQUIRE(find(d, "diagnose-inconclusive") != nullptr);
  CHECK(d.inconclusive.find("holds process us-gpu012:423 only") != std::string::npos);
  CHECK(d.inconclusive.find("add the other ranks' logs") != std::string::npos);
}

TEST_CASE("nothing readable: exit 2 naming what to add") {
  LogReader r;
  r.read_text(std::string("\x7f" "ELF\x02\x01\x01\0\0\0garbage\n", 19), "a.out");
  r.finish();
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 2);
  CHECK(d.inconclusive.find("no NCCL, PyTorch or launcher records") == 0);
}

TEST_CASE("NCCL RAS's outlier behind the others is the rank that never launched the collective") {
  LogReader r;
  r.read_text(
      "#0-0 (9a41c2f7d3e8b510) MISMATCH\n"
      "  Communicator ranks have different AllReduce operation counts\n"
      "  7 ranks have launched up to operation 1201\n"
      "  Rank 5 has launched up to operation 1200 -- GPU 5 managed by process 3402 on node node02\n",
      "ras.txt");
  r.finish();
  Diagnosis d = diagnose(r);
  const DxFinding* f = find(d, "collective-missing");
  REQUIRE(f != nullptr);
  CHECK(f->f.ranks == std::vector<int>{5});
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{5});
}

TEST_CASE("an Init line whose process cannot be told is read without indexing a process (fuzz seed 750918002)") {
  // libFuzzer found that an Init COMPLETE record on a line that names no process (proc -1)
  // was kept for the end-of-input rank resolution, which then indexed processes[-1].
  LogReader r;
  r.read_text(std::string(
      "a:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0xab - Init COMPLETE\n"
      "b\x9f" ":2:2 [1] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 1 busId 2000 commId 0xab - Init COMPLETE\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x10 [nranks=2] stream 0x1b:2:2 [1] NCCL INFO A opCount 1 sendbuff 0x1 recvbuff 0x1 coun$\n"
      " 8 datatype 0 op 0 root 0 comm 0x10 [nranks=2] stream 0x1\n"),
      "fuzz.log");
  r.finish();
  for (const auto& p : r.processes) CHECK(p.rank < 2);
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code >= 1);
}

namespace {

// One paste of fixtures/families, diagnosed alone.
Diagnosis diagnose_family(const std::string& name) {
  LogReader r;
  OpenedInput in = open_input(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/families/" + name);
  REQUIRE(in.status == OpenedInput::Status::ok);
  std::string error;
  REQUIRE(r.read(in.source.get(), name, &error));
  r.finish();
  return diagnose(r);
}

Diagnosis diagnose_paste(const std::string& text, LogReader* r) {
  r->read_text(text, "paste.log");
  r->finish();
  return diagnose(*r);
}

std::string messages_of(const Diagnosis& d, const std::string& code) {
  std::string all;
  for (const auto& x : d.findings)
    if (code_name(x.f.code) == code) all += x.f.message + "\n";
  return all;
}

}  // namespace

TEST_CASE("Horovod's one-line stall report: every tensor is read, and the rank the others wait for is the one absent from most lists") {
  Diagnosis d = diagnose_family("horovod_ready_lists_wrapped.log");
  const DxFinding* x = find(d, "collective-missing");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{4});
  CHECK(d.blame.initiating.ranks == std::vector<int>{4});
  CHECK(x->f.message.find("absent from 2 of the 3 ready lists") != std::string::npos);
  CHECK(x->f.message.find("alone submitted HorovodAllreduce_metrics_accuracy_0") != std::string::npos);
  CHECK(x->f.message.find("HorovodAllreduce_gradients_dense_1_MatMul_grad_MatMul_1_0") != std::string::npos);
  CHECK(x->f.message.find("every ready list") == std::string::npos);
  // A rank absent from every list; two tensors each missing another rank name both.
  LogReader r1, r2;
  Diagnosis every = diagnose_paste("Stalled ops: allreduce.w0 [ready ranks: 0, 3, 1], allreduce.w1 [ready ranks: 1, 0, 3]\n", &r1);
  REQUIRE(find(every, "collective-missing") != nullptr);
  CHECK(find(every, "collective-missing")->f.ranks == std::vector<int>{2});
  CHECK(find(every, "collective-missing")->f.message.find("absent from every ready list") != std::string::npos);
  Diagnosis two = diagnose_paste("Stalled ops: allreduce.w0 [ready ranks: 0, 1, 3], allreduce.w1 [ready ranks: 3, 2, 0]\n", &r2);
  REQUIRE(find(two, "collective-missing") != nullptr);
  CHECK(find(two, "collective-missing")->f.ranks == std::vector<int>{1, 2});
}

TEST_CASE("a rank whose watchdog lines name no process group is compared with the default group's ranks") {
  Diagnosis d = diagnose_family("watchdog_ungrouped_mismatch.log");
  CHECK(find(d, "diagnose-inconclusive") == nullptr);
  std::string m = messages_of(d, "collective-mismatch");
  CHECK(m.find("BROADCAST") != std::string::npos);
  CHECK(m.find("ALLREDUCE") != std::string::npos);
  CHECK(m.find("rank 1 printed no process group: taken to be in PG 0(default_pg)") != std::string::npos);
  std::set<int> named;
  for (const auto& x : d.findings)
    if (x.f.code == FindingCode::collective_mismatch) named.insert(x.f.ranks.begin(), x.f.ranks.end());
  CHECK(named == std::set<int>{1, 5});
  // Two ranks, no majority: they disagree, and neither started it.
  CHECK_FALSE(d.blame.found);
  REQUIRE(d.blame.disagreeing.size() == 1);
  CHECK(d.blame.disagreeing[0].ranks == std::vector<int>{1, 5});
}

TEST_CASE("a rank whose heartbeat monitor found its watchdog stuck is the suspect; stuck after its own timeout, it only follows") {
  Diagnosis d = diagnose_family("heartbeat_stuck_rank.log");
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{6});
  CHECK(d.blame.initiating.what.find("watchdog got stuck for 600 seconds") != std::string::npos);
  bool rank0_follows = false;
  for (const auto& p : d.blame.collateral)
    if (std::find(p.ranks.begin(), p.ranks.end(), 0) != p.ranks.end()) rank0_follows = true;
  CHECK(rank0_follows);
  LogReader r;
  r.read_text(
      "[rank3]:[E0402 13:40:55.1 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600071 milliseconds before timing out.\n"
      "[rank3]:[E0402 13:48:55.1 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL's watchdog got "
      "stuck for 480 seconds without making progress in monitoring enqueued collectives.\n",
      "paste.log");
  r.finish();
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[1].kind == Failure::Kind::aborted);
}

TEST_CASE("NCCL 2.8's NET/IB mismatch wording gives the net mismatch finding, not a rank's failure") {
  Diagnosis d = diagnose_family("netib_mismatch_old.log");
  CHECK(find(d, "nccl-net-mismatch") != nullptr);
  CHECK(find(d, "initiating-failure") == nullptr);
}

TEST_CASE("invalid root on a communicator that never initialised follows an init failure; a root out of a real range is the rank's own") {
  Diagnosis d = diagnose_family("invalid_root_uninit_comm.log");
  CHECK_FALSE((d.blame.found && d.blame.initiating.what.find("invalid root") != std::string::npos));
  CHECK(messages_of(d, "initiating-failure").find("invalid root") == std::string::npos);
  LogReader r;
  Diagnosis real = diagnose_paste(
      "gpu-c07:51233:51301 [2] misc/argcheck.cc:39 NCCL WARN Broadcast : invalid root 9 (root should be in the 0..8 range)\n", &r);
  REQUIRE(real.blame.found);
  CHECK(real.blame.initiating.what.find("invalid root 9") != std::string::npos);
}

TEST_CASE("every example of the heartbeat and Horovod ready-list entries is read by its own entry") {
  denpex::diag::test::check_examples_read_by_own_entry({"torch.watchdog.stuck", "horovod.stall.ready"});
}

TEST_CASE("a gate verify line runs the odd hosts with one that agreed, else the whole allocation") {
  GateVerify g = gate_verify({"gpu-a17"}, {"gpu-a17.cluster.local", "gpu-a17", "gpu-b02"});
  // The FQDN of the odd host is the odd host: the one that agreed is gpu-b02.
  CHECK(g.verify.argv == std::vector<std::string>{"mpirun", "-np", "2", "-H", "gpu-a17,gpu-b02", "--map-by", "ppr:1:node",
                                                  "denpex-probe"});
  g = gate_verify({"node1"}, {"node1"});
  CHECK(g.verify.text == "srun --mpi=pmix --ntasks-per-node=1 denpex-probe");
  CHECK(g.verify_or.text == "mpirun --map-by ppr:1:node denpex-probe");
  g = gate_verify({}, {"node1", "node2"});
  CHECK(g.verify.text == "srun --mpi=pmix --ntasks-per-node=1 denpex-probe");
}

TEST_CASE("verify lines name the inputs given, never standard input") {
  Diagnosis d;
  DxFinding x;
  x.f.code = FindingCode::initiating_failure;
  x.verify = command_or({"denpex-probe", "diagnose", "-"}, "");
  d.findings.push_back(x);
  x.f.code = FindingCode::nccl_wheel_conflict;
  x.verify = command_or({"srun", "denpex-probe"}, "");
  x.evidence = {Evidence{"env.txt", 3, "torch 2.5.1 /home/a/venv/lib/python3.11/site-packages/torch/__init__.py"}};
  d.findings.push_back(x);
  settle_verify_lines(&d, {"rank0.log", "-", "-odd.log"});
  CHECK(d.findings[0].verify.argv ==
        std::vector<std::string>{"denpex-probe", "diagnose", "rank0.log", kSavedStdin, "./-odd.log"});
  CHECK(d.findings[0].verify_note.find("rerun") != std::string::npos);
  CHECK(d.findings[0].verify_note.find(std::string("save it as ") + kSavedStdin) != std::string::npos);
  CHECK(d.findings[1].verify.argv ==
        std::vector<std::string>{"denpex-probe", "--site-packages", "/home/a/venv/lib/python3.11/site-packages"});
  CHECK(site_packages_in("at /x/lib/python3.10/site-packages/torch/lib/a.so: undefined") == "/x/lib/python3.10/site-packages");
  CHECK(site_packages_in("no path here") == "");
}
