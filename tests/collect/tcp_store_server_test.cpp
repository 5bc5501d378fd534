// The gate's TCPStore server (rank 0 serves it where no torchrun agent does) with the gate's
// client on the loopback; torch's own clients against it are tests/torchrun's interop test.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "collect/tcp_store_client.h"
#include "collect/tcp_store_server.h"
#include "probe/monotonic_clock.h"

using namespace denpex;

namespace {

int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

double in(double s) { return monotonic_seconds() + s; }

}  // namespace

TEST_CASE("the gate's server answers the gate's client") {
  TcpStoreServer server;
  std::string error;
  bool in_use = false;
  const int port = free_port();
  REQUIRE(server.start(port, &error, &in_use));
  TcpStoreClient a, b;
  REQUIRE(a.connect("127.0.0.1", port, "hello", in(5)).ok());
  REQUIRE(b.connect("127.0.0.1", port, "hello", in(5)).ok());
  REQUIRE(a.set("k", std::string("v\0w", 3), in(5)).ok());
  // A SET has no reply: a query that has one tells the server has taken it (as the gate's
  // protocol only reads keys it waited for).
  bool ready = false;
  REQUIRE(a.check({"k"}, &ready, in(5)).ok());
  CHECK(ready);
  std::string v;
  REQUIRE(b.get("k", 16, &v, in(5)).ok());
  CHECK(v == std::string("v\0w", 3));
  int64_t n = 0;
  REQUIRE(a.add("n", 2, &n, in(5)).ok());
  REQUIRE(b.add("n", 40, &n, in(5)).ok());
  CHECK(n == 42);
  REQUIRE(a.check({"k", "n"}, &ready, in(5)).ok());
  CHECK(ready);
  std::vector<bool> present;
  REQUIRE(a.check_each({"k", "absent", "n"}, &present, in(5)).ok());
  CHECK(present == std::vector<bool>{true, false, true});
  SECTION("a wait ends when another client sets the last key") {
    std::thread later([&] {
      ::usleep(100 * 1000);
      b.set("x", "1", in(5));
      ::usleep(100 * 1000);
      b.set("y", "2", in(5));
    });
    const double t0 = monotonic_seconds();
    CHECK(a.wait({"x", "y", "k"}, in(5)).ok());
    CHECK(monotonic_seconds() - t0 < 2.0);
    later.join();
  }
  SECTION("a wait for a key nobody sets times out, and the server goes on") {
    CHECK(a.wait({"never"}, in(0.2)).status == StoreStatus::timed_out);
    REQUIRE(a.connect("127.0.0.1", port, "hello", in(5)).ok());
    CHECK(a.get("k", 16, &v, in(5)).ok());
  }
  SECTION("a GET of a missing key drops that client only") {
    CHECK(a.get("absent", 16, &v, in(5)).status == StoreStatus::closed);
    CHECK(b.get("k", 16, &v, in(5)).ok());
  }
  SECTION("a key over the server's bound drops the client") {
    CHECK(a.set(std::string(5000, 'x'), "v", in(5)).ok());   // sent; the server closes
    CHECK(a.get("k", 16, &v, in(5)).status == StoreStatus::closed);
  }
}

TEST_CASE("the gate's server wants the validation handshake first") {
  TcpStoreServer server;
  std::string error;
  bool in_use = false;
  const int port = free_port();
  REQUIRE(server.start(port, &error, &in_use));
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const char get_first[] = {3, 1, 0, 0, 0, 0, 0, 0, 0, 'k'};
  ::send(s, get_first, sizeof get_first, MSG_NOSIGNAL);
  char b = 0;
  CHECK(::recv(s, &b, 1, 0) == 0);   // closed, nothing answered
  ::close(s);
  TcpStoreServer second;
  CHECK_FALSE(second.start(port, &error, &in_use));
  CHECK(in_use);
  CHECK(error.find("Address already in use") != std::string::npos);
}
