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
void f_error_string(int code, char* out, int n) {
  std::snprintf(out, static_cast<size_t>(n), "fake error %d: connection to peer lost", code);
}

const denpex_mpi_plugin kFake = {DENPEX_MPI_PLUGIN_ABI, "fake", f_init, f_library, f_send,
                                 f_iprobe, f_recv, f_finalize, f_error_string};

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
