// evidence/line_repair: every launcher, paste and terminal prefix it strips.
#include <catch2/catch.hpp>

#include "evidence/line_repair.h"

using namespace denpex::evidence;

namespace {
std::string rest(std::string line, LineLabel* lab, HostLabels* learned = nullptr) {
  std::string_view v = repair_line(&line, lab, learned);
  return std::string(v);
}
}  // namespace

TEST_CASE("torchrun [rankN]: and a paste tool's counter") {
  LineLabel lab;
  CHECK(rest("[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog", &lab) ==
        "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog");
  CHECK(lab.rank == 0);
  REQUIRE(lab.when.known());
  CHECK(lab.when.text() == "03-21 02:07:08");
}

TEST_CASE("srun --label task and Open MPI --tag-output") {
  LineLabel a;
  CHECK(rest("11: node01:1:2 [0] NCCL INFO x", &a) == "node01:1:2 [0] NCCL INFO x");
  CHECK(a.task == 11);
  CHECK(a.rank == -1);
  LineLabel b;
  CHECK(rest("[1,3]<stdout>:node02:9:9 [1] NCCL INFO y", &b) == "node02:9:9 [1] NCCL INFO y");
  CHECK(b.rank == 3);
  LineLabel c;
  CHECK(rest("[1,12]<stderr>:Traceback (most recent call last):", &c) == "Traceback (most recent call last):");
  CHECK(c.rank == 12);
}

TEST_CASE("Ray worker prefix with and without ANSI colour") {
  LineLabel a;
  CHECK(rest("(RayTrainWorker pid=615, ip=10.72.7.6) host:615:1 [2] NCCL INFO z", &a) == "host:615:1 [2] NCCL INFO z");
  CHECK(a.worker == "10.72.7.6:615");
  CHECK(a.host == "10.72.7.6");
  LineLabel b;
  CHECK(rest("\x1b[36m(RayTrainWorker pid=22754, ip=10.72.12.6)\x1b[0m [E ProcessGroupNCCL.cpp:821] [Rank 21] W", &b) ==
        "[E ProcessGroupNCCL.cpp:821] [Rank 21] W");
  CHECK(b.worker == "10.72.12.6:22754");
}

TEST_CASE("host [stderr], IP labels, host | timestamp |, [RANK N] ts [LEVEL]") {
  LineLabel a;
  CHECK(rest("node07 [stderr] RuntimeError: boom", &a) == "RuntimeError: boom");
  CHECK(a.host == "node07");
  LineLabel b;
  CHECK(rest("10.0.0.3: node03:1:1 [0] NCCL INFO q", &b) == "node03:1:1 [0] NCCL INFO q");
  CHECK(b.host == "10.0.0.3");
  LineLabel c;
  CHECK(rest("node03 | 2024-06-02 08:15:11 | text here", &c) == "text here");
  CHECK(c.host == "node03");
  CHECK(c.when.text() == "06-02 08:15:11");
  LineLabel d;
  CHECK(rest("[RANK 5] 2024-06-02 08:15:13 [ERROR] torch.distributed.DistBackendError: x", &d) ==
        "torch.distributed.DistBackendError: x");
  CHECK(d.rank == 5);
  LineLabel e;
  CHECK(rest("[gpu-b12:3]:torch.OutOfMemoryError: CUDA out of memory.", &e) == "torch.OutOfMemoryError: CUDA out of memory.");
  CHECK(e.host == "gpu-b12");
  CHECK(e.worker == "gpu-b12:3");
  CHECK(e.rank == -1);
  LineLabel f;
  CHECK(rest("[2024-05-14 10:12:05,123] x", &f) == "x");
  CHECK(f.host.empty());
}

TEST_CASE("timestamps with and without seconds order correctly") {
  LineLabel a, b;
  rest(" 2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 X] y", &a);
  CHECK(a.rank == 13);
  CHECK(a.when.precision == 60LL * 1000000);
  CHECK(a.when.text() == "02-18 12:54");
  CHECK(a.when.year == 2025);
  CHECK(a.when.iso() == "2025-02-18T12:54");
  When g;
  parse_timestamp("E0321 02:07:08.408271 x", &g);
  CHECK(g.year == 0);
  CHECK(g.iso() == "--03-21T02:07:08");
  rest("2025-02-18T12:54:30.5Z z", &b);
  CHECK(b.when.precision == 1);
  // 12:54 (minute precision) cannot be told apart from 12:54:30.
  CHECK(When::compare(a.when, b.when) == 0);
  LineLabel c;
  rest("2025-02-18 12:55:01 z", &c);
  CHECK(When::compare(a.when, c.when) < 0);
}

TEST_CASE("numbers past 64 bits and past any rank are labels, not ranks") {
  LineLabel a;
  CHECK(rest("1732900000123: node01:1:1 [0] NCCL INFO x", &a) == "node01:1:1 [0] NCCL INFO x");
  CHECK(a.task == -1);
  LineLabel b;
  CHECK(rest("99999999999999999999999999: RuntimeError: x", &b) == "RuntimeError: x");
  CHECK(b.task == -1);
  LineLabel c;
  CHECK(rest("[rank2147483648]: text", &c) == "text");
  CHECK(c.rank == -1);
  long long v = 0;
  size_t n = 0;
  CHECK_FALSE(parse_dec("99999999999999999999", &v, &n));
  CHECK(n == 20);
  unsigned long long u = 0;
  CHECK_FALSE(parse_hex("0x1ffffffffffffffff", &u, &n));
}

TEST_CASE("a terminal's wrap marker is removed and noted") {
  LineLabel a;
  CHECK(rest("us-gpu012:423:423 [0] NCCL INFO Broadcast: opCount 0 coun$", &a) ==
        "us-gpu012:423:423 [0] NCCL INFO Broadcast: opCount 0 coun");
  CHECK(a.wrapped);
}

TEST_CASE("pdsh's host: labels, learned where they stand before a known prefix") {
  HostLabels learned;
  LineLabel a;
  // A program's own "name: " is left alone until the name has been seen as a label.
  CHECK(rest("gpu-a01: Traceback (most recent call last):", &a, &learned) == "gpu-a01: Traceback (most recent call last):");
  CHECK(a.host.empty());
  LineLabel b;
  CHECK(rest("gpu-a01: [rank3]: RuntimeError: boom", &b, &learned) == "RuntimeError: boom");
  CHECK(b.host == "gpu-a01");
  CHECK(b.rank == 3);
  LineLabel c;
  CHECK(rest("gpu-a01: Traceback (most recent call last):", &c, &learned) == "Traceback (most recent call last):");
  CHECK(c.host == "gpu-a01");
  LineLabel d;
  CHECK(rest("node12: node12:4242:4242 [1] NCCL INFO x", &d, &learned) == "node12:4242:4242 [1] NCCL INFO x");
  CHECK(d.host == "node12");
  LineLabel e;
  CHECK(rest("worker-1: 2024-06-02 08:15:11 text", &e, &learned) == "text");
  CHECK(e.host == "worker-1");
  // Words without a digit or a hyphen, program names before their message, and rank labels.
  for (const char* line : {"RuntimeError: [rank3] x", "python3: error while loading shared libraries: libnccl.so.2",
                           "rank3: [E321 02:07:08.408271 ProcessGroupNCCL.cpp:607] x", "torch.distributed.DistBackendError: [1] x"}) {
    LineLabel f;
    CHECK(rest(line, &f, &learned) == line);
    CHECK(f.host.empty());
  }
  LineLabel g;  // without learned names a first sighting still counts before a known prefix
  CHECK(rest("gpu-a02: [rank4]: x", &g) == "x");
  CHECK(g.host == "gpu-a02");
}

TEST_CASE("torchrun's [default0]: and launchers' [trainer3]: name a process only with a host") {
  LineLabel a;
  CHECK(rest("[default0]:node1:12:12 [0] NCCL INFO x", &a) == "node1:12:12 [0] NCCL INFO x");
  CHECK(a.worker.empty());
  CHECK(a.rank == -1);
  LineLabel b;
  CHECK(rest("[trainer0|0]:ncclInternalError: Internal check failed.", &b) == "ncclInternalError: Internal check failed.");
  LineLabel c;
  CHECK(rest("10.0.0.3: [default2]:Traceback (most recent call last):", &c) == "Traceback (most recent call last):");
  CHECK(c.worker == "10.0.0.3 default2");
  CHECK(c.host == "10.0.0.3");
  LineLabel d;  // "[rank3]:" stays a rank; a bracket without digits is no label
  CHECK(rest("[rank3]:x", &d) == "x");
  CHECK(d.rank == 3);
  LineLabel e;
  CHECK(rest("[default]: x", &e) == "[default]: x");
  LineLabel f;  // torchrun's summary numbers its entries "[0]:": not a label
  CHECK(rest("[0]:", &f) == "[0]:");
}

TEST_CASE("mpirun --timestamp-output's ctime before the tag, and horovodrun's own [N]<stderr>: tag") {
  LineLabel a;
  CHECK(rest("Wed Mar  6 09:12:44 2019[1,6]<stdout>:F0306 09:12:44.102934 22107 gpu_info.cc:88] Check failed", &a) ==
        "F0306 09:12:44.102934 22107 gpu_info.cc:88] Check failed");
  CHECK(a.rank == 6);
  CHECK(a.when.year == 2019);
  CHECK(a.when.text() == "03-06 09:12:44");
  LineLabel b;
  CHECK(rest("Tue Nov 27 13:49:06 2018[1,10]<stderr>:x", &b) == "x");
  CHECK(b.rank == 10);
  // A sentence that starts with a day's name is not a stamp.
  LineLabel c;
  CHECK(rest("Wed Mar  6 the job was started", &c) == "Wed Mar  6 the job was started");
  CHECK_FALSE(c.when.known());
  LineLabel d;
  CHECK(rest("[0]<stderr>:Missing ranks:", &d) == "Missing ranks:");
  CHECK(d.rank == 0);
  // A paste tool's counter before NCCL's device is not horovodrun's tag.
  LineLabel e;
  CHECK(rest("[3] NCCL INFO x", &e) == "[3] NCCL INFO x");
  CHECK(e.rank == -1);
}
