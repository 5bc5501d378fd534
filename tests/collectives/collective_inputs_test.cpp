// evidence/collective_trace and evidence/collective_log (the room) on fixtures in real NCCL / PyTorch line formats
// (tests/fixtures/collectives), judged end to end by compare/collectives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "evidence/line_reader.h"
#include "evidence/collective_input.h"
#include "evidence/collective_trace.h"
#include "evidence/collective_log.h"

using namespace denpex;

namespace {

std::string fixture(const char* name) { return std::string(DENPEX_COLLECTIVES_FIXTURES) + "/" + name; }

const CommSequence* find_seq(const CollectiveInput& in, const std::string& comm, int rank) {
  for (const auto& s : in.sequences)
    if (s.comm == comm && s.rank == rank) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("NCCL 2.28 log with srun labels, a glued line, Send/Recv with (nil) and a cut line") {
  CollectiveInput in = evidence::read_collective_log(fixture("nccl_2_28_srun_label.log"));
  REQUIRE(in.status == CollectiveInput::Status::ok);
  CHECK(in.unreadable == 1);
  REQUIRE(in.unreadable_samples.size() == 1);
  CHECK(in.unreadable_samples[0].find("AllGather") != std::string::npos);
  CHECK(in.hosts == std::vector<std::string>{"gpu-a01", "gpu-a02"});
  REQUIRE(in.sequences.size() == 4);
  const CommSequence* r1 = find_seq(in, "0x8d1f4e2a77b3c019", 1);
  REQUIRE(r1 != nullptr);
  CHECK(r1->global_rank == 1);
  REQUIRE(r1->calls.size() == 4);  // AllReduce, Recv, Broadcast (from the glued line), AllReduce
  CHECK(r1->calls[1].kind == CollKind::recv);
  CHECK(r1->calls[1].peer == 0);
  CHECK(r1->calls[2].kind == CollKind::broadcast);

  auto f = analyse_sequences(in.sequences);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{3});
  CHECK(f[0].hosts == std::vector<std::string>{"gpu-a02"});
  CHECK(f[0].seq == 2);
  CHECK(f[0].found == "AllReduce(count=2000, float32, sum)");
  CHECK(f[0].expected == "AllReduce(count=2048, float32, sum)");
}

TEST_CASE("NCCL 2.18 log under torchrun with timestamps and a split communicator") {
  CollectiveInput in = evidence::read_collective_log(fixture("nccl_2_18_torchrun_split.log"));
  CHECK(in.unreadable == 0);
  CHECK(in.unattributed_calls == 0);
  REQUIRE(find_seq(in, "0x3c9ae6d3e2c4f0a1/split1/color0", 1) != nullptr);
  CHECK(find_seq(in, "0x3c9ae6d3e2c4f0a1/split1/color0", 1)->calls.size() == 1);
  auto f = analyse_sequences(in.sequences);
  sort_findings(&f);
  REQUIRE(f.size() == 2);  // 1 rank against 1: no majority, both named
  CHECK(f[0].code == FindingCode::collective_mismatch);
  CHECK(f[0].ranks == std::vector<int>{0});
  CHECK(f[0].found == "AllReduce(count=1, float32, sum)");
  CHECK(f[1].ranks == std::vector<int>{1});
  CHECK(f[1].found == "Broadcast(count=1, float32, root=0)");
  CHECK(f[0].comm == "0x3c9ae6d3e2c4f0a1");
  CHECK(f[0].seq == 1);
}

TEST_CASE("Ray prefixes and two glued records, one inside a hex pointer") {
  CollectiveInput in = evidence::read_collective_log(fixture("ray_glued.log"));
  CHECK(in.unreadable == 0);
  CHECK(in.hosts == std::vector<std::string>{"r24-worker-fqztx", "r24-worker-srrss"});
  REQUIRE(in.sequences.size() == 2);
  CHECK(in.sequences[0].calls.size() == 3);
  CHECK(in.sequences[1].calls.size() == 3);
  auto f = analyse_sequences(in.sequences);
  REQUIRE(f.size() == 2);
  CHECK(f[0].seq == 2);
}

TEST_CASE("PyTorch watchdog lines: glued, wrapped, with process group names") {
  CollectiveInput in = evidence::read_collective_log(fixture("torch_watchdog.log"));
  CHECK(in.unreadable == 0);  // the WorkNCCL record wrapped mid-word is joined with its rest
  REQUIRE(in.watchdog.size() == 4);
  for (const auto& w : in.watchdog) CHECK(w.group == "pg 1");
  auto f = analyse_watchdog(in.watchdog);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_mismatch);
  CHECK(f[0].ranks == std::vector<int>{2});
  CHECK(f[0].seq == 7753);
  CHECK(f[0].found.find("_ALLGATHER_BASE") != std::string::npos);
}

TEST_CASE("older PyTorch watchdog lines without launcher prefixes") {
  CollectiveInput in = evidence::read_collective_log(fixture("watchdog_enqueued_old.log"));
  CHECK(in.unreadable == 0);
  auto f = analyse_watchdog(in.watchdog);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_missing);
  CHECK(f[0].ranks == std::vector<int>{2});
  CHECK(f[0].seq == 117);
  CHECK(f[0].comm == "default");
}

TEST_CASE("NCCL count printed with %zi and %zu parse alike; unknown collectives are kept by name") {
  std::string log(
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x10 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 1000 commId 0xab - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AlltoAll: opCount 0 sendbuff 0x1 recvbuff 0x2 count 18446744073709551615 datatype 4 op 0 root 0 comm 0x10 [nranks=1] stream 0x3\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 7 datatype 4 op 0 root 0 comm 0x99 [nranks=1] stream 0x3\n");
  auto src = evidence::memory_source(log);
  CollectiveInput in = evidence::read_collective_log(src.get(), "inline");
  REQUIRE(in.sequences.size() == 1);
  REQUIRE(in.sequences[0].calls.size() == 1);
  CHECK(in.sequences[0].calls[0].count == 18446744073709551615ULL);
  CHECK(describe(in.sequences[0].calls[0]) == "AlltoAll(count=18446744073709551615, int64)");
  CHECK(in.unattributed_calls == 1);
}

TEST_CASE("recorder traces") {
  CollectiveInput a = read_collective_trace(fixture("trace_rank0.jsonl"));
  CollectiveInput b = read_collective_trace(fixture("trace_rank1.jsonl"));
  REQUIRE(a.status == CollectiveInput::Status::ok);
  CHECK(a.unreadable == 1);  // the last line, cut by a kill
  CHECK(a.unattributed_calls == 1);
  REQUIRE(a.sequences.size() == 1);
  CHECK(a.sequences[0].global_rank == 0);
  CHECK(a.sequences[0].host == "nodeA");
  CHECK(a.sequences[0].calls.size() == 3);
  std::vector<CommSequence> all = a.sequences;
  all.insert(all.end(), b.sequences.begin(), b.sequences.end());
  auto f = analyse_sequences(all);
  sort_findings(&f);
  REQUIRE(f.size() == 2);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].seq == 1);
  CHECK(f[0].ranks == std::vector<int>{0});
  CHECK(f[0].found == "Reduce(count=8, float64, max, root=1)");
  CHECK(f[1].found == "Reduce(count=8, float64, max, root=0)");

  CHECK(read_collective_trace(fixture("not_a_trace.jsonl")).status == CollectiveInput::Status::malformed);
  CHECK(read_collective_trace(fixture("no_such_file")).status == CollectiveInput::Status::missing);
}

namespace {
// Hands out its bytes `step` at a time, so that a break can fall on a read's edge.
class Trickle : public evidence::ByteSource {
 public:
  Trickle(std::string bytes, size_t step) : bytes_(std::move(bytes)), step_(step) {}
  long read(char* buf, size_t cap, std::string*) override {
    size_t n = std::min({cap, step_, bytes_.size() - at_});
    std::copy_n(bytes_.data() + at_, n, buf);
    at_ += n;
    return static_cast<long>(n);
  }

 private:
  std::string bytes_;
  size_t step_, at_ = 0;
};

std::vector<std::string> all_lines(evidence::ByteSource* src, long long* numbered) {
  evidence::LineReader in(src);
  std::vector<std::string> out;
  std::string line;
  bool cut = false;
  while (in.next(&line, &cut)) out.push_back(line);
  *numbered = in.line_number();
  return out;
}
}  // namespace

TEST_CASE("LineReader: LF, CR and CRLF each end one line, wherever the reads are split") {
  const std::string bytes = "a\rb\r\nc\n\rd\r\r\ne\r";
  const std::vector<std::string> want{"a", "b", "c", "", "d", "", "e"};
  for (size_t step : {1, 2, 3, 5, 100}) {
    Trickle src(bytes, step);
    long long n = 0;
    CHECK(all_lines(&src, &n) == want);
    CHECK(n == 7);
  }
  // A progress bar redrawn with CR, then a line with a rank prefix: the prefix starts a line.
  auto bar = evidence::memory_source(" 10%|#   |\r 20%|##  |\r[rank3]: RuntimeError: boom\n");
  long long n = 0;
  auto got = all_lines(bar.get(), &n);
  REQUIRE(got.size() == 3);
  CHECK(got[2] == "[rank3]: RuntimeError: boom");
}

TEST_CASE("LineReader: lines up to the cap whole, longer ones cut and the rest skipped") {
  const std::string big(200000, 'x');  // longer than the reader's 64 KiB buffer too
  auto src = evidence::memory_source("short\n" + std::string(10, 'y') + "\n" + big + "\nafter\nlast");
  evidence::LineReader in(src.get(), 10);
  std::string line;
  bool cut = true;
  REQUIRE(in.next(&line, &cut));
  CHECK(line == "short");
  CHECK_FALSE(cut);
  REQUIRE(in.next(&line, &cut));
  CHECK(line == std::string(10, 'y'));  // exactly the cap: whole, not cut
  CHECK_FALSE(cut);
  REQUIRE(in.next(&line, &cut));
  CHECK(line == std::string(10, 'x'));
  CHECK(cut);
  REQUIRE(in.next(&line, &cut));
  CHECK(line == "after");  // the rest of the long line was skipped, not handed on
  CHECK_FALSE(cut);
  CHECK(in.line_number() == 4);
  REQUIRE(in.next(&line, &cut));
  CHECK(line == "last");  // no final newline
  CHECK_FALSE(in.next(&line, &cut));
  CHECK(in.error().empty());
}

TEST_CASE("note_unreadable counts every line and keeps the first few") {
  CollectiveInput in;
  in.path = "x.log";
  for (int i = 1; i <= 8; ++i) note_unreadable(&in, i, "bad " + std::to_string(i));
  CHECK(in.unreadable == 8);
  REQUIRE(in.unreadable_samples.size() == kMaxUnreadableSamples);
  CHECK(in.unreadable_samples.front() == "x.log:1: bad 1");
}
