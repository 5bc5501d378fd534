// compare/collectives: alignment by position, blame of the minority, p2p pairing, watchdog states.
#include <catch2/catch.hpp>

#include "compare/collectives.h"

using namespace denpex;

namespace {

CollectiveCall call(CollKind k, unsigned long long count, int dtype = 7, int redop = 0, int root = -1, int peer = -1) {
  CollectiveCall c;
  c.kind = k;
  c.op_name = to_string(k);
  c.count = count;
  c.datatype = dtype;
  c.redop = redop;
  c.root = root;
  c.peer = peer;
  return c;
}

// Four ranks on comm "w", each making `base`, with rank-specific edits applied by the caller.
std::vector<CommSequence> ranks4(const std::vector<CollectiveCall>& base) {
  std::vector<CommSequence> out;
  for (int r = 0; r < 4; ++r) {
    CommSequence s;
    s.comm = "w";
    s.rank = r;
    s.nranks = 4;
    s.global_rank = r;
    s.host = r < 2 ? "n1" : "n2";
    s.calls = base;
    out.push_back(s);
  }
  return out;
}

const std::vector<CollectiveCall> kBase = {call(CollKind::all_reduce, 1024), call(CollKind::broadcast, 8, 7, -1, 0),
                                           call(CollKind::all_gather, 16, 9, -1), call(CollKind::all_reduce, 4)};

}  // namespace

TEST_CASE("identical sequences give no findings") {
  CHECK(analyse_sequences(ranks4(kBase)).empty());
}

TEST_CASE("a different count on one rank is an args mismatch naming rank, step and both calls") {
  auto seqs = ranks4(kBase);
  seqs[2].calls[2].count = 17;
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{2});
  CHECK(f[0].hosts == std::vector<std::string>{"n2"});
  CHECK(f[0].comm == "w");
  CHECK(f[0].seq == 2);
  CHECK(f[0].found == "AllGather(count=17, bfloat16)");
  CHECK(f[0].expected == "AllGather(count=16, bfloat16)");
  CHECK(f[0].message.find("count 17 vs 16") != std::string::npos);
}

TEST_CASE("a different root is an args mismatch") {
  auto seqs = ranks4(kBase);
  seqs[1].calls[1].root = 3;
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{1});
  CHECK(f[0].found == "Broadcast(count=8, float32, root=3)");
}

TEST_CASE("a different collective is a mismatch") {
  auto seqs = ranks4(kBase);
  seqs[3].calls[0] = call(CollKind::reduce_scatter, 1024, 7, 2);
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_mismatch);
  CHECK(f[0].seq == 0);
  CHECK(f[0].found == "ReduceScatter(count=1024, float32, max)");
  CHECK(f[0].expected == "AllReduce(count=1024, float32, sum)");
}

TEST_CASE("a rank whose sequence ends early is missing") {
  auto seqs = ranks4(kBase);
  seqs[2].calls.resize(1);
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_missing);
  CHECK(f[0].ranks == std::vector<int>{2});
  CHECK(f[0].seq == 1);
  CHECK(f[0].found == "none");
}

TEST_CASE("a sequence whose input was cut ends where reading stopped: not blamed, still compared before") {
  auto seqs = ranks4(kBase);
  seqs[2].calls.resize(1);
  seqs[2].cut = true;
  CHECK(analyse_sequences(seqs).empty());
  // Up to the cut it is compared as any rank: a different call there is still found.
  seqs[2].calls[0].count = 999;
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].ranks == std::vector<int>{2});
  // Three of four cut short: the one read whole is not blamed for calls the others lost.
  seqs = ranks4(kBase);
  for (int r : {0, 1, 3}) {
    seqs[r].calls.resize(2);
    seqs[r].cut = true;
  }
  CHECK(analyse_sequences(seqs).empty());
}

TEST_CASE("a rank that skips one call is missing, not mismatched") {
  auto seqs = ranks4(kBase);
  seqs[0].calls.erase(seqs[0].calls.begin() + 1);
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_missing);
  CHECK(f[0].ranks == std::vector<int>{0});
  CHECK(f[0].seq == 1);
  CHECK(f[0].found.find("skipped") == 0);
}

TEST_CASE("without a majority every group is named") {
  auto seqs = ranks4(kBase);
  seqs[2].calls[3].count = 5;
  seqs[3].calls[3].count = 5;
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 2);
  sort_findings(&f);
  CHECK(f[0].ranks == std::vector<int>{0, 1});
  CHECK(f[1].ranks == std::vector<int>{2, 3});
  CHECK(f[0].seq == 3);
  CHECK(f[0].message.find("no majority") != std::string::npos);
}

TEST_CASE("only the first divergence of a communicator is reported") {
  auto seqs = ranks4(kBase);
  seqs[2].calls[1].count = 9;
  seqs[2].calls[3].count = 9;
  CHECK(analyse_sequences(seqs).size() == 1);
}

TEST_CASE("point-to-point calls are paired, not aligned by position") {
  auto seqs = ranks4(kBase);
  // A pipeline: 0 -> 1 -> 2; ranks make different numbers of p2p calls, which is legitimate.
  seqs[0].calls.insert(seqs[0].calls.begin() + 1, call(CollKind::send, 64, 7, -1, -1, 1));
  seqs[1].calls.insert(seqs[1].calls.begin() + 1, call(CollKind::recv, 64, 7, -1, -1, 0));
  seqs[1].calls.insert(seqs[1].calls.begin() + 2, call(CollKind::send, 64, 7, -1, -1, 2));
  seqs[2].calls.insert(seqs[2].calls.begin() + 3, call(CollKind::recv, 64, 7, -1, -1, 1));
  CHECK(analyse_sequences(seqs).empty());

  SECTION("a receive of a different size") {
    seqs[2].calls[3].count = 32;
    auto f = analyse_sequences(seqs);
    REQUIRE(f.size() == 1);
    CHECK(f[0].code == FindingCode::collective_args_mismatch);
    CHECK(f[0].ranks == std::vector<int>{1, 2});
  }
  SECTION("a send never received") {
    seqs[2].calls.erase(seqs[2].calls.begin() + 3);
    auto f = analyse_sequences(seqs);
    REQUIRE(f.size() == 1);
    CHECK(f[0].code == FindingCode::collective_missing);
    CHECK(f[0].ranks == std::vector<int>{2});
  }
}

TEST_CASE("ranks of a communicator absent from the input are a warning") {
  auto seqs = ranks4(kBase);
  seqs.pop_back();
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_ranks_absent);
  CHECK(f[0].severity == Severity::warning);
  CHECK(f[0].ranks == std::vector<int>{3});
}

TEST_CASE("a long rank list in a message is ranged and abbreviated; the finding keeps every rank") {
  // A 300-rank communicator of which the input holds only the odd ranks.
  std::vector<CommSequence> seqs;
  for (int r = 1; r < 300; r += 2) {
    CommSequence s;
    s.comm = "w";
    s.rank = r;
    s.nranks = 300;
    s.calls = kBase;
    seqs.push_back(s);
  }
  auto f = analyse_sequences(seqs);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_ranks_absent);
  CHECK(f[0].ranks.size() == 150);
  CHECK(f[0].message.find("no calls of ranks 0,2,4,") != std::string::npos);
  CHECK(f[0].message.find(",... (rank in the communicator)") != std::string::npos);
  CHECK(f[0].message.find(",298") == std::string::npos);
  CHECK(f[0].message.size() < 250);
}

TEST_CASE("watchdog: the rank at another work is named") {
  std::vector<WatchdogState> st;
  for (int r = 0; r < 4; ++r) {
    WatchdogState s;
    s.group = "pg 0";
    s.rank = r;
    s.seq = r == 1 ? 51 : 52;
    s.op_type = "ALLREDUCE";
    s.numel_in = s.numel_out = 11;
    st.push_back(s);
  }
  auto f = analyse_watchdog(st);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_missing);
  CHECK(f[0].ranks == std::vector<int>{1});
  CHECK(f[0].seq == 51);
  CHECK(f[0].comm == "pg 0");
  st[1].seq = 52;
  st[1].op_type = "BROADCAST";
  f = analyse_watchdog(st);
  REQUIRE(f.size() == 1);
  CHECK(f[0].code == FindingCode::collective_mismatch);
  st[1].op_type = "ALLREDUCE";
  CHECK(analyse_watchdog(st).empty());
}

TEST_CASE("watchdog: without a majority every state is named against the others") {
  std::vector<WatchdogState> st;
  for (int r = 0; r < 4; ++r) {
    WatchdogState s;
    s.group = "pg 0";
    s.rank = r;
    s.seq = r < 2 ? 51 : 52;
    s.op_type = "ALLREDUCE";
    s.numel_in = s.numel_out = 11;
    st.push_back(s);
  }
  auto f = analyse_watchdog(st);
  REQUIRE(f.size() == 2);
  sort_findings(&f);
  CHECK(f[0].ranks == std::vector<int>{0, 1});
  CHECK(f[1].ranks == std::vector<int>{2, 3});
  for (const auto& x : f) {
    CHECK(x.code == FindingCode::collective_missing);
    CHECK(x.message.find("no majority: the others report") != std::string::npos);
  }
  CHECK(f[0].expected == "WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11)");
  CHECK(f[1].expected == "WorkNCCL(SeqNum=51, OpType=ALLREDUCE, NumelIn=11, NumelOut=11)");
  // Three at 52, one at 51: a majority, and only the one is named.
  st[1].seq = 52;
  f = analyse_watchdog(st);
  REQUIRE(f.size() == 1);
  CHECK(f[0].ranks == std::vector<int>{0});
  CHECK(f[0].message.find("no majority") == std::string::npos);
}

TEST_CASE("watchdog: states with the user's text are shown in it, cut around what differs") {
  const std::string opts =
      ", TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided "
      "(default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))";
  std::vector<WatchdogState> st;
  for (int r = 0; r < 2; ++r) {
    WatchdogState s;
    s.group = "TORCH_DISTRIBUTED_DEBUG=DETAIL SequenceNumber 3104";
    s.rank = r;
    s.seq = 3104;
    s.op_type = "ALLREDUCE BFloat16";
    s.numel_in = s.numel_out = r == 0 ? 51123456 : 195812480;
    s.text = "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[" +
             std::to_string(s.numel_in) + "]" + opts;
    st.push_back(s);
  }
  auto f = analyse_watchdog(st);
  REQUIRE(f.size() == 2);
  sort_findings(&f);
  CHECK(f[0].code == FindingCode::collective_args_mismatch);
  CHECK(f[0].found.find("OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16") != std::string::npos);
  CHECK(f[0].expected.find("TensorShape=[195812480]") != std::string::npos);
  // Cut around the sizes, not kept whole: the tail that both share is left out.
  CHECK(f[0].found.find("pinned_memory") == std::string::npos);
  CHECK(f[0].found.size() < st[0].text.size());
  CHECK(f[0].found.find("WorkNCCL") == std::string::npos);
  // Mirror images: one's found is the other's expected.
  CHECK(f[0].found == f[1].expected);
  CHECK(f[1].found == f[0].expected);
  CHECK(f[0].message.find(f[0].found) != std::string::npos);
  // Without the text on every side the fields read are shown.
  st[1].text.clear();
  f = analyse_watchdog(st);
  REQUIRE(f.size() == 2);
  for (const auto& x : f) CHECK(x.found.rfind("WorkNCCL(SeqNum=3104", 0) == 0);
}

TEST_CASE("names of datatypes and ops") {
  CHECK(datatype_name(9) == "bfloat16");
  CHECK(datatype_name(42) == "datatype 42");
  CHECK(redop_name(4) == "avg");
  CHECK(parse_coll_kind("ReduceScatter") == CollKind::reduce_scatter);
  CHECK(parse_coll_kind("AlltoAll") == CollKind::all_to_all);  // NCCL 2.28's, recorded since trace v2
  CHECK(parse_coll_kind("Scatter") == CollKind::scatter);
  CHECK(parse_coll_kind("AllToAllv") == CollKind::unknown);
  CollectiveCall g;
  g.kind = CollKind::gather;
  g.count = 4;
  g.datatype = 7;
  g.root = 2;
  CHECK(describe(g) == "Gather(count=4, float32, root=2)");
}
