// The digest protocol over a fake transport (the plugin's C ABI, implemented here in memory):
// what a rank does when an MPI call fails, and how long a representative waits for rank 0.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <string>

#include "collect/mpi_job.h"
#include "probe/monotonic_clock.h"

using namespace denpex;

namespace {

struct Message {
  int from;
  int tag;
  std::string bytes;
  double visible_at;   // CLOCK_MONOTONIC seconds from which iprobe sees it
};

// One process's view of a fake world. Test code: a file-level instance stands for the MPI
// library's own global state.
struct FakeWorld {
  int rank = 0;
  int size = 1;
  int fail_code = 0;            // returned by the call named in fail_call
  std::string fail_call;        // "send", "iprobe", "recv"
  std::deque<Message> inbox;
  std::vector<Message> sent;    // `from` holds the destination
};
FakeWorld world;

int f_init(int*, char***, int* rank, int* size) {
  *rank = world.rank;
  *size = world.size;
  return 0;
}
void f_library(char* out, int n) { std::snprintf(out, static_cast<size_t>(n), "fake MPI"); }
int f_send(const void* buf, int len, int dest, int tag) {
  if (world.fail_call == "send") return world.fail_code;
  world.sent.push_back({dest, tag, std::string(static_cast<const char*>(buf), len), 0});
  return 0;
}
int f_iprobe(int source, int tag, int* found, int* from, int* len) {
  if (world.fail_call == "iprobe") return world.fail_code;
  *found = 0;
  for (const Message& m : world.inbox) {
    if (m.tag != tag || (source != DENPEX_MPI_ANY_SOURCE && m.from != source)) continue;
    if (monotonic_seconds() < m.visible_at) continue;
    *found = 1;
    *from = m.from;
    *len = static_cast<int>(m.bytes.size());
    return 0;
  }
  return 0;
}
int f_recv(void* buf, int len, int source, int tag) {
  if (world.fail_call == "recv") return world.fail_code;
  for (auto it = world.inbox.begin(); it != world.inbox.end(); ++it) {
    if (it->tag != tag || it->from != source) continue;
    std::memcpy(buf, it->bytes.data(), std::min<size_t>(static_cast<size_t>(len), it->bytes.size()));
    world.inbox.erase(it);
    return 0;
  }
  return 99;
}
int f_finalize() { return 0; }
int f_abort(int) { return 0; }
void f_error_string(int code, char* out, int n) {
  std::snprintf(out, static_cast<size_t>(n), "fake error %d: connection to peer lost", code);
}

const denpex_mpi_plugin kFake = {DENPEX_MPI_PLUGIN_ABI, "fake",   f_init,
                                 f_library,             f_send,   f_iprobe,
                                 f_recv,                f_finalize, f_error_string,
                                 f_abort};

MpiJob start_as(int rank, int size) {
  world = FakeWorld{};
  world.rank = rank;
  world.size = size;
  MpiJob job;
  std::string error;
  REQUIRE(MpiJob::start(&kFake, nullptr, nullptr, &job, &error));
  return job;
}

std::string bytes_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

std::string digest_from(const RankRecord& r, const std::string& host) {
  const unsigned long long d = configuration_digest(r);
  std::string m(8, '\0');
  std::memcpy(&m[0], &d, 8);
  return m + host;
}

// The step-4 byte rank 0 sent to `rank` (1 finalize, 0 do not), or -1 when it sent none.
int end_sent_to(int rank) {
  for (const Message& m : world.sent)
    if (m.tag == 7108 && m.from == rank) return m.bytes.size() == 1 ? m.bytes[0] : -2;
  return -1;
}

// The verdict message rank 0 sent to `rank`: {code, aborts}.
std::pair<int32_t, int32_t> verdict_sent_to(int rank) {
  for (const Message& m : world.sent) {
    if (m.tag != 7104 || m.from != rank) continue;
    REQUIRE(m.bytes.size() == 8);
    int32_t v[2];
    std::memcpy(v, m.bytes.data(), 8);
    return {v[0], v[1]};
  }
  FAIL("no verdict sent to rank " << rank);
  return {-1, -1};
}

}  // namespace

TEST_CASE("a failing MPI call ends collect with an error naming the call, not a wait") {
  RankRecord mine;
  SECTION("rank 0: MPI_Iprobe fails while gathering") {
    MpiJob job = start_as(0, 3);
    world.fail_call = "iprobe";
    world.fail_code = 17;
    // The deadline is far away: returning at all shows the error was read, not waited out.
    CollectResult r = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    CHECK(r.error == "rank 0: MPI_Iprobe from rank -1 failed: fake error 17: connection to peer lost");
    CHECK(r.groups.empty());
  }
  SECTION("rank 2: MPI_Send of its digest fails") {
    MpiJob job = start_as(2, 3);
    world.fail_call = "send";
    world.fail_code = 5;
    CollectResult r = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    CHECK(r.error == "rank 2: MPI_Send to rank 0 failed: fake error 5: connection to peer lost");
  }
  SECTION("rank 1: MPI_Recv of the verdict fails: exit 2, not a verdict") {
    MpiJob job = start_as(1, 2);
    double left = 60;
    world.inbox.push_back({0, 7105, bytes_of(&left, sizeof left), 0});
    int verdict = 0;
    world.inbox.push_back({0, 7104, bytes_of(&verdict, sizeof verdict), 0});
    CollectResult r = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    REQUIRE(r.error.empty());
    world.fail_call = "recv";
    world.fail_code = 3;
    std::string note;
    CHECK(job.agree_exit_code(0, monotonic_seconds() + 3600, 1, &note) == 2);
    CHECK(note == "rank 1: MPI_Recv from rank 0 failed: fake error 3: connection to peer lost");
  }
}

TEST_CASE("a representative waits for rank 0's deadline, not its own") {
  // Rank 3's own deadline has already passed; rank 0 says it waits 2 s more and asks for the
  // record 0.2 s from now (it was waiting for a silent rank). A representative that stopped at
  // its own deadline would lose the record.
  MpiJob job = start_as(3, 4);
  RankRecord mine;
  mine.host = "node9";
  double left = 2.0;
  const double now = monotonic_seconds();
  world.inbox.push_back({0, 7105, bytes_of(&left, sizeof left), now});
  world.inbox.push_back({0, 7102, std::string(1, '\0'), now + 0.2});
  CollectResult r = job.collect(&mine, "node9", "", now - 1.0);
  REQUIRE(r.error.empty());
  REQUIRE(world.sent.size() == 2);
  CHECK(world.sent[0].tag == 7101);   // the digest
  CHECK(world.sent[1].tag == 7103);   // the record, after rank 0's request
  CHECK(world.sent[1].bytes.find("\"node9\"") != std::string::npos);
}

TEST_CASE("rank 0 groups digests, names each host once per group, acknowledges every rank") {
  MpiJob job = start_as(0, 5);
  RankRecord mine;
  const unsigned long long d = configuration_digest(mine);
  for (int r = 1; r < 5; ++r) {
    std::string m(8, '\0');
    std::memcpy(&m[0], &d, 8);
    m += r < 3 ? "node1" : "node2";
    world.inbox.push_back({r, 7101, m, 0});
  }
  CollectResult res = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
  REQUIRE(res.error.empty());
  REQUIRE(res.groups.size() == 1);
  CHECK(res.groups[0].ranks == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(res.groups[0].hosts == std::vector<std::string>{"node1", "node2"});
  CHECK(res.missing.empty());
  CHECK(res.bytes_at_root == 4 * (8 + 5));
  // Every rank that reported got rank 0's acknowledgement (its time left).
  int acks = 0;
  for (const Message& m : world.sent) acks += m.tag == 7105;
  CHECK(acks == 4);
}

TEST_CASE("rank 0 tells every rank its deadline before their probes end") {
  SECTION("rank 0 sends each other rank the seconds it still waits") {
    MpiJob job = start_as(0, 4);
    std::string error;
    const double deadline = monotonic_seconds() + 10;
    CHECK(job.share_deadline(deadline, &error) == deadline);
    CHECK(error.empty());
    REQUIRE(world.sent.size() == 3);
    for (int r = 1; r < 4; ++r) {
      CHECK(world.sent[static_cast<size_t>(r - 1)].from == r);
      CHECK(world.sent[static_cast<size_t>(r - 1)].tag == 7106);
      double left = 0;
      std::memcpy(&left, world.sent[static_cast<size_t>(r - 1)].bytes.data(), sizeof left);
      CHECK(left > 9);
      CHECK(left <= 10);
    }
  }
  SECTION("a rank with a longer --timeout takes rank 0's, earlier, deadline") {
    MpiJob job = start_as(2, 4);
    double left = 3.0;
    world.inbox.push_back({0, 7106, bytes_of(&left, sizeof left), 0});
    std::string error;
    const double now = monotonic_seconds();
    const double got = job.share_deadline(now + 300, &error);
    CHECK(error.empty());
    CHECK(got >= now + 3.0);
    CHECK(got < now + 4.0);
  }
  SECTION("no word from rank 0: the rank keeps its own deadline, after waiting for it") {
    MpiJob job = start_as(1, 2);
    std::string error;
    const double own = monotonic_seconds() + 0.2;
    CHECK(job.share_deadline(own, &error) == own);
    CHECK(error.empty());
    CHECK(monotonic_seconds() >= own);
  }
  SECTION("a failed MPI call is an error, not a wait") {
    MpiJob job = start_as(1, 2);
    world.fail_call = "iprobe";
    world.fail_code = 4;
    std::string error;
    job.share_deadline(monotonic_seconds() + 3600, &error);
    CHECK(error == "rank 1: MPI_Iprobe from rank 0 failed: fake error 4: connection to peer lost");
  }
}

TEST_CASE("rank 0 aborts when a rank never answered, and says so in the verdict") {
  RankRecord mine;
  SECTION("a silent rank: gone, rank 0 aborts, the others wait for it") {
    MpiJob job = start_as(0, 3);
    world.inbox.push_back({1, 7101, digest_from(mine, "node1"), 0});
    CollectResult res = job.collect(&mine, "node1", "", monotonic_seconds() + 0.3);
    REQUIRE(res.error.empty());
    CHECK(res.gone == 1);
    REQUIRE(res.missing.size() == 1);
    CHECK(res.missing[0].rank == 2);
    std::string note;
    CHECK(job.agree_exit_code(1, 0, 0, &note) == 1);
    CHECK(job.end() == JobEnd::abort);
    CHECK(verdict_sent_to(1) == std::make_pair(1, 1));
  }
  SECTION("a rank whose probe failed answered: it is alive, every rank finalizes") {
    MpiJob job = start_as(0, 3);
    world.inbox.push_back({1, 7101, digest_from(mine, "node1"), 0});
    std::string failed(8, '\0');
    failed += "node2\nits probe did not return within 3.5 s (hung; the probe killed it)";
    world.inbox.push_back({2, 7101, failed, 0});
    CollectResult res = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    REQUIRE(res.error.empty());
    CHECK(res.gone == 0);
    REQUIRE(res.missing.size() == 1);
    CHECK(res.missing[0].reason == "its probe did not return within 3.5 s (hung; the probe killed it)");
    // Both confirm the verdict (step 4): every rank finalizes.
    world.inbox.push_back({1, 7107, std::string(1, '\1'), 0});
    world.inbox.push_back({2, 7107, std::string(1, '\1'), 0});
    std::string note;
    CHECK(job.agree_exit_code(1, 0, 0, &note) == 1);
    CHECK(note.empty());
    CHECK(job.end() == JobEnd::finalize);
    CHECK(verdict_sent_to(1) == std::make_pair(1, 0));
    CHECK(verdict_sent_to(2) == std::make_pair(1, 0));
    CHECK(end_sent_to(1) == 1);
    CHECK(end_sent_to(2) == 1);
  }
  SECTION("a rank frozen after it reported never confirms: rank 0 aborts, the other waits") {
    MpiJob job = start_as(0, 3);
    job.set_confirm_wait(0.2);
    world.inbox.push_back({1, 7101, digest_from(mine, "node1"), 0});
    world.inbox.push_back({2, 7101, digest_from(mine, "node1"), 0});
    CollectResult res = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    REQUIRE(res.error.empty());
    CHECK(res.gone == 0);
    world.inbox.push_back({1, 7107, std::string(1, '\1'), 0});
    std::string note;
    CHECK(job.agree_exit_code(0, 0, 0, &note) == 0);
    CHECK(job.end() == JobEnd::abort);
    CHECK(note == "rank 0: 1 of 2 ranks did not confirm the verdict within 0.2 s (stopped?); "
                  "ending the job with MPI_Abort(0)");
    CHECK(end_sent_to(1) == 0);
    CHECK(end_sent_to(2) == -1);
  }
  SECTION("a representative that never sends its record is gone too") {
    MpiJob job = start_as(0, 2);
    RankRecord other;
    other.host = "elsewhere";
    other.nccl.version = "2.27.3";
    world.inbox.push_back({1, 7101, digest_from(other, "node2"), 0});
    // The deadline has passed once the digest is in: rank 0 waits kRecordGrace for the record.
    CollectResult res = job.collect(&mine, "node1", "", monotonic_seconds() + 0.2);
    REQUIRE(res.error.empty());
    CHECK(res.gone == 1);
    std::string note;
    job.agree_exit_code(1, 0, 0, &note);
    CHECK(job.end() == JobEnd::abort);
  }
}

TEST_CASE("a rank leaves MPI the way rank 0's verdict says") {
  RankRecord mine;
  // verdict: {code, aborts}; end: rank 0's step-4 byte ("" for none).
  auto run_rank1 = [&](const std::string* verdict, const std::string& end) {
    MpiJob job = start_as(1, 2);
    job.set_confirm_wait(0.1);
    double left = 0.2;
    world.inbox.push_back({0, 7105, bytes_of(&left, sizeof left), 0});
    if (verdict) world.inbox.push_back({0, 7104, *verdict, 0});
    if (!end.empty()) world.inbox.push_back({0, 7108, end, 0});
    CollectResult r = job.collect(&mine, "node1", "", monotonic_seconds() + 3600);
    REQUIRE(r.error.empty());
    std::string note;
    int code = job.agree_exit_code(0, 0, 0.1, &note);
    return std::make_pair(code, job.end());
  };
  int32_t v[2] = {1, 1};
  const std::string aborts = bytes_of(v, sizeof v);
  v[1] = 0;
  const std::string plain = bytes_of(v, sizeof v);
  SECTION("rank 0 aborts: wait for the launcher, no MPI_Finalize, no confirmation") {
    CHECK(run_rank1(&aborts, "") == std::make_pair(1, JobEnd::await_abort));
    for (const Message& m : world.sent) CHECK(m.tag != 7107);
  }
  SECTION("confirmed, and rank 0 says finalize") {
    CHECK(run_rank1(&plain, std::string(1, '\1')) == std::make_pair(1, JobEnd::finalize));
    CHECK(world.sent.back().tag == 7107);
  }
  SECTION("confirmed, but another rank did not: rank 0 aborts") {
    CHECK(run_rank1(&plain, std::string(1, '\0')) == std::make_pair(1, JobEnd::await_abort));
  }
  SECTION("confirmed, and rank 0 never answered: this rank ends the job with the verdict") {
    CHECK(run_rank1(&plain, "") == std::make_pair(1, JobEnd::abort));
  }
  SECTION("no verdict by rank 0's deadline plus the judging time: exit 1 by MPI_Abort") {
    CHECK(run_rank1(nullptr, "") == std::make_pair(1, JobEnd::abort));
  }
}
