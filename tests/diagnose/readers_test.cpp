// evidence/log_reader: each record format it reads, from the text a user pastes.
#include <catch2/catch.hpp>

#include <algorithm>

#include "evidence/log_reader.h"
#include "tests/diagnose/diagnose_test_support.h"

using namespace denpex;
using namespace denpex::evidence;

namespace {

const Fact* fact(const LogReader& r, Fact::Kind k) {
  for (const auto& f : r.facts)
    if (f.kind == k) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("watchdog: new format with PG GUID, old without NumelIn, oldest without SeqNum") {
  LogReader r = denpex::diag::test::read_log(
      "[rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, NumelIn=1379328, NumelOut=1572864, Timeout(ms)=600000) ran for 600045 ms\n"
      "[rank13]:[E218 04:54:22.864535778 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID 119(tp) Rank 1] Exception (either an "
      "error or timeout) detected by watchdog at work: 216, last enqueued NCCL work: 220, last completed NCCL work: 215.\n"
      "[E ProcessGroupNCCL.cpp:821] [Rank 21] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5020, "
      "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1808397 milliseconds before timing out.\n"
      "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
      "Timeout(ms)=1800000) ran for 1800520 milliseconds before timing out.\n"
      "[rank2]:[E514 10:42:05.1 ProcessGroupNCCL.cpp:1664] [PG 1 (dp) Rank 0] Timeout at NCCL work: 151, last enqueued "
      "NCCL work: 152, last completed NCCL work: 150.\n");
  REQUIRE(r.watch.size() == 5);
  CHECK(r.watch[0].who.rank == 13);
  CHECK(r.watch[0].seq == 216);
  CHECK(r.watch[0].op == "ALLTOALL_BASE");
  CHECK(r.watch[0].numel_in == 1379328);
  CHECK(r.watch[0].numel_out == 1572864);
  CHECK(r.watch[1].group == "PG 119(tp)");
  CHECK(r.watch[1].group_rank == 1);
  CHECK(r.watch[1].last_enqueued == 220);
  CHECK(r.watch[1].last_completed == 215);
  CHECK(r.watch[1].seq == 216);
  CHECK(r.watch[2].who.rank == 21);  // old format: "[Rank 21]" of a one-group job
  CHECK(r.watch[2].numel_in == -1);
  CHECK(r.watch[3].seq == -1);
  CHECK(r.watch[3].op == "BROADCAST");
  CHECK(r.watch[4].group == "PG 1 (dp)");
  CHECK(r.watch[4].seq == 151);
  CHECK(r.watch[4].last_enqueued == 152);
  CHECK(std::count_if(r.failures.begin(), r.failures.end(), [](const Failure& f) { return f.kind == Failure::Kind::timeout; }) == 5);
}

TEST_CASE("DETAIL fingerprints: both sides, the old 'inconsistent collective' form, comma-less SequenceNumber") {
  LogReader r = denpex::diag::test::read_log(
      "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, "
      "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)), but Rank 0 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, "
      "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)).\n"
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4, 8], TensorDtypes=Float, TensorDeviceTypes=cuda)\n"
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE, TensorShape=[10], TensorDtypes=Float), but Rank 3 is running "
      "collective: CollectiveFingerPrint(SequenceNumber=0OpType=ALLREDUCE, TensorShape=[10], TensorDtypes=Float)\n");
  REQUIRE(r.watch.size() == 5);
  CHECK(r.watch[0].fingerprint);
  CHECK(r.watch[0].who.rank == 1);
  CHECK(r.watch[0].seq == 3104);
  CHECK(r.watch[0].numel_in == 195812480);
  CHECK(r.watch[1].who.rank == 0);
  CHECK(r.watch[1].numel_in == 51123456);
  CHECK(r.watch[2].who.rank == 0);
  CHECK(r.watch[2].op == "BROADCAST Float");
  CHECK(r.watch[2].numel_in == 32);
  CHECK(r.watch[3].seq == 0);
  CHECK(r.watch[3].op == "REDUCE Float");
  CHECK(r.watch[4].op == "ALLREDUCE Float");
  // Each side as printed, to the parenthesis that closes it (TensorOptions(...) nests).
  CHECK(r.watch[0].quote ==
        "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda))");
  CHECK(r.watch[1].quote.find("TensorShape=[51123456]") != std::string::npos);
  CHECK(r.watch[2].quote ==
        "CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4, 8], TensorDtypes=Float, TensorDeviceTypes=cuda)");
  CHECK(r.watch[3].quote == "CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE, TensorShape=[10], TensorDtypes=Float)");
}

TEST_CASE("DETAIL fingerprints: a side cut off by the end of the line is quoted to there") {
  LogReader r = denpex::diag::test::read_log(
      "Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE, TensorShape=[8], "
      "TensorDeviceTypes=TensorOptions(dtype=float (default)), but Rank 0 is running collective: "
      "CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE, TensorShape=[9], TensorDevic\n");
  REQUIRE(r.watch.size() == 2);
  CHECK(r.watch[0].quote.find("TensorShape=[8]") != std::string::npos);
  CHECK(r.watch[0].quote.find("but Rank") == std::string::npos);
  CHECK(r.watch[1].quote == "CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE, TensorShape=[9], TensorDevic");
}

TEST_CASE("desync debug report names who never joined") {
  LogReader r = denpex::diag::test::read_log(
      "[rank0]:[E ProcessGroupNCCL.cpp:1123] [Rank 0] Desync report:\n"
      "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
      "\t   - [3] finished collective #10, but didn't join collective #11 (count from 1)\n"
      "\t - Snapshot of ranks' latest states:\n"
      "\t - To our best knowledge, ranks [5, 6] are the lagging ranks that caused this timeout. They never joined any collectives\n");
  std::vector<int> ranks;
  for (const auto& f : r.failures)
    if (f.kind == Failure::Kind::never_joined) ranks.push_back(f.who.rank);
  std::sort(ranks.begin(), ranks.end());
  CHECK(ranks == std::vector<int>{3, 5, 6});
}

TEST_CASE("fr_trace: errors with culprit lines, missing ranks") {
  LogReader r = denpex::diag::test::read_log(
      "Collective sequence number: 12 has errors\n"
      "group info: 0:default_pg\n"
      "collective: nccl:all_reduce\n"
      "input sizes: [[1025]]\n"
      "world size: 4\n"
      "Culprit rank 3; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match found input sizes: '[[262144]]'\n"
      "\n"
      "Not all ranks joining collective: sequence number: 31117\n"
      "group info: 0:default_pg\n"
      "collective: nccl:all_reduce\n"
      "missing ranks: {3, 4, 5, 6, 7}\n"
      "world size: 8\n");
  REQUIRE(r.reported.size() == 2);
  CHECK(r.reported[0].kind == Reported::Kind::fr_errors);
  CHECK(r.reported[0].seq == 12);
  CHECK(r.reported[0].ranks == std::vector<int>{3});
  CHECK(r.reported[0].detail.find("SIZE_OR_SYNTAX_MISMATCH") == 0);
  CHECK(r.reported[1].kind == Reported::Kind::fr_missing_ranks);
  CHECK(r.reported[1].seq == 31117);
  CHECK(r.reported[1].ranks == std::vector<int>{3, 4, 5, 6, 7});
  CHECK(r.reported[1].world == 8);
  CHECK(r.reported[1].group == "0:default_pg");
}

TEST_CASE("NCCL WARN lines: mismatch, version mismatch, truncated message, NET/IB mismatch") {
  LogReader r = denpex::diag::test::read_log(
      "node-1:39719:39719 [3] init.cu:1197 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 11. You can use ...\n"
      "node01:21733:21790 [0] init.cc:1463 NCCL WARN Mismatched NCCL version detected : rank 0 version 22602 rank 2 version 22703\n"
      "1: host-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4\n"
      "host-3:11:12 [0] NCCL WARN NET/IB : collective mismatch error, local size 4096 remote size 8192\n"
      "host-4:21:22 [1] NCCL WARN NET/IB : collective mismatch error local size 65536 remote 0 addr 7f2b1c400000 rkey 9a100 seq 2/2\n");
  REQUIRE(r.reported.size() == 5);
  CHECK(r.reported[4].kind == Reported::Kind::net_mismatch);  // NCCL 2.8's wording
  CHECK(r.failures.empty());
  CHECK(r.reported[0].kind == Reported::Kind::nccl_mismatch);
  CHECK(r.reported[0].ranks == std::vector<int>{11});
  CHECK(r.reported[1].kind == Reported::Kind::nccl_version);
  CHECK(r.reported[2].kind == Reported::Kind::truncated);
  CHECK(r.reported[2].who.host == "host-2");
  CHECK(r.reported[3].kind == Reported::Kind::net_mismatch);
  // NCCL's own version comparison gives a version fact for each rank it names.
  int versions = 0;
  for (const auto& f : r.facts)
    if (f.kind == Fact::Kind::nccl_version && (f.a == "2.26.2" || f.a == "2.27.3")) ++versions;
  CHECK(versions == 2);
}

TEST_CASE("version, driver, plugin and settings lines") {
  LogReader r = denpex::diag::test::read_log(
      "NCCL version 2.20.5+cuda12.4\n"
      "node01:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
      "node01:1:1 [0] NCCL INFO cudaDriverVersion 12040\n"
      "node01:1:9 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v8)\n"
      "HGX-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n"
      "node01:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n"
      "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error, NCCL version 2.14.3\n");
  int versions = 0;
  for (const auto& f : r.facts)
    if (f.kind == Fact::Kind::nccl_version) ++versions;
  CHECK(versions == 3);
  REQUIRE(fact(r, Fact::Kind::driver_cuda) != nullptr);
  CHECK(fact(r, Fact::Kind::driver_cuda)->a == "12.4");
  REQUIRE(fact(r, Fact::Kind::plugin_loaded) != nullptr);
  CHECK(fact(r, Fact::Kind::plugin_loaded)->b == "ncclNetPlugin_v8");
  REQUIRE(fact(r, Fact::Kind::plugin_missing) != nullptr);
  CHECK(fact(r, Fact::Kind::plugin_missing)->who.host == "HGX-11");
  REQUIRE(fact(r, Fact::Kind::nccl_env) != nullptr);
  CHECK(fact(r, Fact::Kind::nccl_env)->a == "NCCL_PROTO");
  CHECK(fact(r, Fact::Kind::nccl_env)->b == "Simple");
}

TEST_CASE("Python tracebacks: ABI, driver, stub, NVML, OOM, rank code") {
  LogReader r = denpex::diag::test::read_log(
      "[rank0]: ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister\n"
      "[rank1]: RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n"
      "[rank2]: RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
      "[rank3]: RuntimeError: CUDA error: CUDA_ERROR_STUB_LIBRARY (34) loading /usr/local/cuda/lib64/stubs/libcuda.so\n"
      "[rank4]: Failed to initialize NVML: Driver/library version mismatch\n"
      "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n"
      "[rank6]: ValueError: batch has no images\n"
      "[rank7]: RuntimeError: NCCL communicator was aborted on rank 7.\n");
  REQUIRE(fact(r, Fact::Kind::undefined_symbol) != nullptr);
  CHECK(fact(r, Fact::Kind::undefined_symbol)->a == "ncclCommRegister");
  CHECK(fact(r, Fact::Kind::undefined_symbol)->b.find("libtorch_cuda.so") != std::string::npos);
  CHECK(fact(r, Fact::Kind::driver_too_old) != nullptr);
  REQUIRE(fact(r, Fact::Kind::driver_stub) != nullptr);
  CHECK(fact(r, Fact::Kind::driver_stub)->a == "/usr/local/cuda/lib64/stubs/libcuda.so");
  CHECK(fact(r, Fact::Kind::nvml_mismatch) != nullptr);
  const Failure* oom = nullptr;
  const Failure* value = nullptr;
  const Failure* aborted = nullptr;
  for (const auto& f : r.failures) {
    if (f.kind == Failure::Kind::oom) oom = &f;
    if (f.what.find("ValueError") == 0) value = &f;
    if (f.who.rank == 7) aborted = &f;
  }
  REQUIRE(oom != nullptr);
  CHECK(oom->who.rank == 5);
  CHECK(oom->hint == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  REQUIRE(value != nullptr);
  CHECK(value->kind == Failure::Kind::own_error);
  REQUIRE(aborted != nullptr);
  CHECK(aborted->kind == Failure::Kind::aborted);
}

TEST_CASE("torchrun ChildFailedError summary") {
  LogReader r = denpex::diag::test::read_log(
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
      "============================================================\n"
      "train.py FAILED\n"
      "------------------------------------------------------------\n"
      "Failures:\n"
      "[1]:\n"
      "  time      : 2024-05-14_10:42:06\n"
      "  host      : node01\n"
      "  rank      : 0 (local_rank: 0)\n"
      "  exitcode  : -15 (pid: 2344)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 15 (SIGTERM) received by PID 2344\n"
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  time      : 2024-05-14_10:42:06\n"
      "  host      : node01\n"
      "  rank      : 2 (local_rank: 2)\n"
      "  exitcode  : -6 (pid: 2346)\n"
      "  error_file: <N/A>\n"
      "  traceback : Signal 6 (SIGABRT) received by PID 2346\n"
      "============================================================\n");
  REQUIRE(r.launcher.size() == 2);
  CHECK(r.launcher[0].rank == 0);
  CHECK_FALSE(r.launcher[0].root_cause);
  CHECK(r.launcher[0].signal == "SIGTERM");
  CHECK(r.launcher[1].rank == 2);
  CHECK(r.launcher[1].root_cause);
  CHECK(r.launcher[1].host == "node01");
  CHECK(r.launcher[1].exitcode == "-6");
  CHECK(r.launcher[1].when.text() == "05-14 10:42:06");
}

TEST_CASE("COLL: NCCL 2.4 Init without busId/commId, glued records, a wrapped record, a body on a later line") {
  std::string text =
      "a:1:1 [0] NCCL INFO comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 - Init COMPLETE\n"
      "b:2:2 [1] NCCL INFO comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 - Init COMPLETE\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1024 datatype 7 op 0 root 0 comm 0x10 [nranks=2] stream 0x5"
      "b:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1024 datatype 7 op 0 root 0 comm 0x20 [nranks=2] stream 0x5\n"
      "a:1:1 [0] NCCL INFO Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1 coun$\n"
      " 8 datatype 0 op 0 root 0 comm 0x10 [nranks=2] stream 0x5\n"
      "b:2:2 [1] NCCL INFO Broadcast: opCount 1 sendbuff 0x1 recvbuff 0x1\n"
      "some other output\n"
      "count 8 datatype 0 op 0 root 0 comm 0x20 [nranks=2] stream 0x5\n";
  LogReader r = denpex::diag::test::read_log(text);
  CHECK(r.coll_calls == 4);
  CHECK(r.unreadable.count == 0);
  REQUIRE(r.coll.sequences.size() == 2);
  for (const auto& s : r.coll.sequences) {
    CHECK(s.comm == "nranks=2");
    CHECK(s.nranks == 2);
  }
}

TEST_CASE("lines that look like records but cannot be read are counted and sampled") {
  LogReader r = denpex::diag::test::read_log(
      "a:1:1 [0] NCCL INFO AllReduce: opCount zz sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x10 [nranks=2] stream 0x5\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 root 0 comm 0x10 [nranks=2147483648] stream 0x5\n"
      "a:1:1 [0] NCCL INFO comm 0x10 rank 5 nranks 2147483648 cudaDev 0 - Init COMPLETE\n");
  CHECK(r.unreadable.count == 3);
  REQUIRE(r.unreadable.samples.size() == 3);
  CHECK(r.unreadable.samples[1].line == 2);
  CHECK(r.coll_calls == 0);
}

TEST_CASE("binary data and a 1 MB line: bounded, counted, no crash") {
  std::string bin;
  for (int i = 0; i < 200000; ++i) bin.push_back(static_cast<char>((i * 131) % 256));
  std::string longline(1 << 20, 'x');
  longline += " NCCL INFO AllReduce: opCount 0\n";
  LogReader r = denpex::diag::test::read_log(bin + "\n" + longline + "ok line\n");
  CHECK(r.lines >= 3);
  CHECK(r.unreadable.count >= 1);
  for (const auto& s : r.unreadable.samples) CHECK(s.text.size() <= kEvidenceChars);
}

TEST_CASE("NCCL RAS: different operation counts, the outlier ranks and their counts") {
  LogReader r = denpex::diag::test::read_log(
      "Warnings\n"
      "========\n"
      "\n"
      "#0-0 (9a41c2f7d3e8b510) MISMATCH\n"
      "  Communicator ranks have different AllReduce operation counts\n"
      "  7 ranks have launched up to operation 1201\n"
      "  Rank 5 has launched up to operation 1200 -- GPU 5 managed by process 3402 on node node02\n"
      "\n");
  REQUIRE(r.reported.size() == 1);
  const Reported& x = r.reported[0];
  CHECK(x.kind == Reported::Kind::ras_counts);
  CHECK(x.op == "AllReduce");
  CHECK(x.ranks == std::vector<int>{5});
  CHECK(x.counts == std::vector<long long>{1200});
  CHECK(x.majority_ranks == 7);
  CHECK(x.majority_count == 1201);
}

TEST_CASE("records cut right after their tags do not throw (fuzzer finds)") {
  LogReader r = denpex::diag::test::read_log(
      "[rank0]:[E321 02:07:08.4 ProcessGroupNCCL.cpp:607] [PG WorkNCCL(SeqNum=1, OpType=ALLREDUCE\n"
      "[rank0]: lagging ranks that caused this timeout - [5\n"
      "[E ProcessGroupNCCL.cpp:1] [PG 3 Rank 1] last enqueued NCCL work: 9\n");
  CHECK(r.watch.size() == 2);
  CHECK(r.failures.size() >= 3);
}

TEST_CASE("srun names the task the cgroup OOM handler killed: that task's own failure, with its host") {
  LogReader r = denpex::diag::test::read_log(
      "slurmstepd: error: Detected 1 oom_kill event in StepId=4411.0. Some of the step tasks have been OOM Killed.\n"
      "srun: error: gpu-n07: task 3: Out Of Memory\n"
      "srun: error: gpu-n07: task 2: Killed\n");
  const Failure* task = nullptr;
  for (const auto& f : r.failures)
    if (f.kind == Failure::Kind::oom && f.who.rank >= 0) task = &f;
  REQUIRE(task != nullptr);
  CHECK(task->who.rank == 3);
  CHECK(task->who.host == "gpu-n07");
  CHECK(task->evidence.signal == "slurm.task_oom");
}

// Formats of pytorch/pytorch#75512, NJU-PCALab/STAR#44, deepspeedai/DeepSpeed#4488,
// NVIDIA/nccl#1928 and InternLM/lmdeploy#3258 (tests/diagnose/SOURCES.md), with our own values.
TEST_CASE("DDP's param check names both ranks; a traceback frame of it is no mismatch") {
  LogReader r = denpex::diag::test::read_log(
      "[rank1]:     return dist._verify_params_across_processes(process_group, tensors, logger)\n"
      "[rank1]: RuntimeError: DDP expects same model across all ranks, but Rank 1 has 96 params, while rank 0 has "
      "inconsistent 0 params.\n");
  REQUIRE(r.reported.size() == 1);
  CHECK(r.reported[0].kind == Reported::Kind::pair_mismatch);
  CHECK(r.reported[0].ranks == std::vector<int>{1, 0});
}

TEST_CASE("a rank that passed monitoredBarrier names the rank it got errors from") {
  LogReader r = denpex::diag::test::read_log(
      "[E ProcessGroupGloo.cpp:138] Rank 5 successfully reached monitoredBarrier, but received errors while waiting "
      "for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n");
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].kind == Failure::Kind::pointed_to);
  CHECK(r.failures[0].who.rank == 0);
  // The process that printed it waited on rank 0: it only followed.
  CHECK(r.failures[1].kind == Failure::Kind::aborted);
  CHECK(r.failures[1].who.rank != 0);
}

TEST_CASE("a network error's own 'Error: N' is no exception; terminate's announcement is not the failure") {
  LogReader r = denpex::diag::test::read_log(
      "terminate called after throwing an instance of 'c10::DistBackendError'\n"
      "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 4] Process group watchdog thread terminated with exception: CUDA "
      "error: an illegal memory access was encountered\n"
      "[rank6]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3100, remote process exited or "
      "there was a network error, NCCL version 2.26.2\n"
      "[rank6]: NET/OFI Request 0x7f00aa000000 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0\n");
  int own = 0, aborted = 0;
  for (const auto& f : r.failures) {
    if (f.kind == Failure::Kind::own_error) {
      ++own;
      CHECK(f.what.find("illegal memory access") != std::string::npos);
      CHECK(f.who.rank == 4);
    }
    if (f.kind == Failure::Kind::aborted) ++aborted;
  }
  CHECK(own == 1);
  CHECK(aborted == 1);
}

// The forms of NVIDIA/nccl#795, deepspeedai/DeepSpeed#6875 and OpenRLHF/OpenRLHF#621
// (tests/diagnose/SOURCES.md); our own values.
TEST_CASE("a line that says the peer went away names it: NCCL's socket errors and a flushed IB receive") {
  LogReader r = denpex::diag::test::read_log(
      "gpu-q2:6100:6188 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.9.0.44<51200> failed : Broken pipe\n"
      "gpu-q2:6100:6150 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer gpu-q9.rack4<39012>\n"
      "gpu-q3:711:790 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.9.0.61<4410> with error 5, "
      "opcode 0, len 0, vendor err 249 (Recv)\n"
      "gpu-q3:711:790 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.9.0.61<4410> with error 12, "
      "opcode 0, len 0, vendor err 129\n");
  REQUIRE(r.failures.size() == 4);
  CHECK(r.failures[0].kind == Failure::Kind::aborted);
  CHECK(r.failures[0].peer == "10.9.0.44");
  CHECK(r.failures[1].peer == "gpu-q9.rack4");
  CHECK(r.failures[2].kind == Failure::Kind::aborted);
  CHECK(r.failures[2].peer == "10.9.0.61");
  CHECK(r.failures[2].evidence.signal == "nccl.warn.ib_flush");
  // A retry that ran out is the fabric's fault, no flush: the peer is not named by it.
  CHECK(r.failures[3].kind == Failure::Kind::nccl_warn);
  CHECK(r.failures[3].shared_fault);
  CHECK(r.failures[3].peer.empty());
}

TEST_CASE("a rank's 'Last error:' quoting a WARN of an NCCL header ties that header's process to the rank") {
  std::string warn = "NET/IB: Got completion from peer 10.2.0.8<3001> with status=5 opcode=0 len=0 vendor err 249 (Recv) hca mlx5_0";
  LogReader r = denpex::diag::test::read_log("c0ntainer9:4410:4499 [1] ib_plugin.c:1673 NCCL WARN " + warn + "\n" +
                     "[rank5]:[E0101 01:02:03.000000001 ProcessGroupNCCL.cpp:541] [Rank 5] found async exception when checking "
                     "for NCCL errors: NCCL error: remote process exited or there was a network error, NCCL version 2.22.3\n"
                     "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n"
                     "Last error:\n" + warn + "\n");
  REQUIRE(r.failures.size() >= 2);
  for (const auto& f : r.failures) {
    INFO(f.what);
    CHECK(f.who.rank == 5);
    CHECK(f.who.host == "c0ntainer9");
    CHECK(f.kind == Failure::Kind::aborted);
  }
  // The device in the header ([1]) is not the rank; without the quote nothing ties them.
  LogReader apart = denpex::diag::test::read_log("c0ntainer9:4410:4499 [1] ib_plugin.c:1673 NCCL WARN " + warn + "\n" +
                         "[rank5]:[E0101 01:02:03.000000001 ProcessGroupNCCL.cpp:541] [Rank 5] found async exception when "
                         "checking for NCCL errors: NCCL error: remote process exited or there was a network error\n");
  REQUIRE(apart.failures.size() == 2);
  CHECK(apart.failures[0].who.rank == -1);
  CHECK(apart.failures[0].who.proc == "c0ntainer9:4410");
}

TEST_CASE("Ray's raylet names the worker that died; a collective's async NCCL error is no timeout") {
  LogReader r = denpex::diag::test::read_log(
      "(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker ID: 0a1b Node ID: "
      "2c3d Worker IP address: 10.1.7.3 Worker port: 10002 Worker PID: 4321 Worker exit type: SYSTEM_ERROR Worker exit "
      "detail: Worker unexpectedly exits with a connection error code 2. End of file.\n"
      "(RayWorkerWrapper pid=4400, ip=10.1.7.3) [rank0]:[E0101 01:02:03.000000001 ProcessGroupNCCL.cpp:542] [Rank 2] "
      "Collective WorkNCCL(SeqNum=9, OpType=BROADCAST, NumelIn=64, NumelOut=64, Timeout(ms)=600000) raised the following "
      "async exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n"
      "(raylet) A worker died or was killed while executing a task by an unexpected system error. Worker IP address: "
      "10.1.7.9 Worker port: 10002 Worker PID: 77 Worker exit type: SYSTEM_ERROR\n");
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].kind == Failure::Kind::own_error);
  CHECK(r.failures[0].who.proc == "10.1.7.3:4321");
  CHECK(r.failures[0].who.host == "10.1.7.3");
  CHECK(r.failures[1].kind == Failure::Kind::aborted);
  CHECK(r.failures[1].who.rank == 0);
  CHECK(r.failures[1].seq == 9);
  CHECK(r.failures[1].what.find("NCCL error in BROADCAST (SeqNum 9)") == 0);
  REQUIRE(r.watch.size() == 1);
  CHECK(r.watch[0].op == "BROADCAST");
  // After a labelled rank's line, an unlabelled raylet line is still about the worker it names.
  CHECK(r.failures[2].who.proc == "10.1.7.9:77");
  CHECK(r.failures[2].who.rank == -1);
}

TEST_CASE("srun's exit code of a task is read as its exit code") {
  LogReader r = denpex::diag::test::read_log("srun: error: hpc-a4: task 3: Exited with exit code 2\n");
  REQUIRE(r.launcher.size() == 1);
  CHECK(r.launcher[0].rank == 3);
  CHECK(r.launcher[0].exitcode == "2");
}

TEST_CASE("an argument check on a communicator that never initialised is a follow-on, not the rank's own error") {
  LogReader r = denpex::diag::test::read_log(
      "gpu-c07:51233:51301 [2] misc/argcheck.cc:39 NCCL WARN Reduce : invalid root 1 (root should be in the 0..-1 range)\n"
      "gpu-c07:51233:51301 [2] misc/argcheck.cc:39 NCCL WARN Broadcast : invalid root 0 (root should be in the 0..0 range)\n"
      "gpu-c07:51233:51301 [2] misc/argcheck.cc:39 NCCL WARN Broadcast : invalid root 4 (root should be in the 0..4 range)\n");
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].kind == Failure::Kind::aborted);
  CHECK(r.failures[0].evidence.signal == "nccl.warn.uninitialised_comm");
  CHECK(r.failures[1].kind == Failure::Kind::aborted);
  CHECK(r.failures[2].kind == Failure::Kind::nccl_warn);  // a root really outside a 4-rank communicator
}
