// The store client against servers that misbehave, each a thread on a loopback socket in this
// test: what a real torch store does is tested under the real torchrun (tests/torchrun/); here,
// the bounds and deadlines a hostile or wrong peer must not get past.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "collect/tcp_store_client.h"
#include "probe/monotonic_clock.h"

using namespace denpex;

namespace {

// Listens on 127.0.0.1, accepts one connection and hands it to `serve`.
struct OneShotServer {
  int listener = -1;
  int port = 0;
  std::thread thread;
  explicit OneShotServer(std::function<void(int)> serve) {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    ::listen(listener, 4);
    thread = std::thread([this, serve] {
      int c = ::accept(listener, nullptr, nullptr);
      if (c >= 0) {
        serve(c);
        ::close(c);
      }
    });
  }
  ~OneShotServer() {
    ::shutdown(listener, SHUT_RDWR);
    thread.join();
    ::close(listener);
  }
};

// Reads the 5-byte handshake and one query of `n` bytes.
void read_bytes(int fd, size_t n) {
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, &buf[got], n - got, 0);
    if (r <= 0) return;
    got += static_cast<size_t>(r);
  }
}

// The ADD the client sends after the handshake: type, key length, key, delta.
size_t add_query_size(const std::string& key) { return 1 + 8 + key.size() + 8; }

void send_u64(int fd, uint64_t v) { ::send(fd, &v, sizeof v, MSG_NOSIGNAL); }

}  // namespace

TEST_CASE("a refused port is unreachable, quickly") {
  int port = 0;
  {
    OneShotServer s([](int) {});
    port = s.port;
    TcpStoreClient c;
    REQUIRE(c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5).ok() == false);
  }
  TcpStoreClient c;
  const double t0 = monotonic_seconds();
  StoreReply r = c.connect("127.0.0.1", port, "k", monotonic_seconds() + 0.5);
  CHECK(r.status == StoreStatus::unreachable);
  CHECK(r.error.find("127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(monotonic_seconds() - t0 < 2.0);
}

TEST_CASE("a server that closes after the handshake speaks another protocol") {
  OneShotServer s([](int fd) { read_bytes(fd, 5); });
  TcpStoreClient c;
  StoreReply r = c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5);
  CHECK(r.status == StoreStatus::protocol);
  CHECK(r.error.find("closed the connection after the TCPStore validation handshake") !=
        std::string::npos);
}

TEST_CASE("a server that answers the handshake's query with bytes no TCPStore sends speaks another protocol") {
  OneShotServer s([](int fd) {
    read_bytes(fd, 5 + add_query_size("k"));
    send_u64(fd, ~uint64_t{0});
  });
  TcpStoreClient c;
  StoreReply r = c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5);
  CHECK(r.status == StoreStatus::protocol);
  CHECK(r.error.find("which no TCPStore returns") != std::string::npos);
  CHECK_FALSE(c.connected());
}

TEST_CASE("a server that never answers costs the deadline, not more") {
  OneShotServer s([](int fd) {
    read_bytes(fd, 5 + add_query_size("k"));
    ::usleep(1500 * 1000);
  });
  TcpStoreClient c;
  const double t0 = monotonic_seconds();
  StoreReply r = c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 0.5);
  CHECK(r.status == StoreStatus::protocol);
  CHECK(monotonic_seconds() - t0 < 1.2);
  CHECK_FALSE(c.connected());
}

TEST_CASE("replies are bounded and checked") {
  SECTION("a value longer than the bound is refused before it is read") {
    OneShotServer s([](int fd) {
      read_bytes(fd, 5 + add_query_size("k"));
      send_u64(fd, 7);                        // the ADD's answer
      read_bytes(fd, 1 + 8 + 1);              // GET "v"
      send_u64(fd, 1ull << 40);               // a 1 TiB value
    });
    TcpStoreClient c;
    REQUIRE(c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5).ok());
    std::string v;
    StoreReply r = c.get("v", 64, &v, monotonic_seconds() + 5);
    CHECK(r.status == StoreStatus::protocol);
    CHECK(r.error.find("1099511627776 bytes") != std::string::npos);
    CHECK(v.empty());
  }
  SECTION("a CHECK answered with a byte no server sends") {
    OneShotServer s([](int fd) {
      read_bytes(fd, 5 + add_query_size("k"));
      send_u64(fd, 0);
      read_bytes(fd, 1 + 8 + 8 + 1);
      char b = 9;
      ::send(fd, &b, 1, MSG_NOSIGNAL);
    });
    TcpStoreClient c;
    REQUIRE(c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5).ok());
    bool ready = true;
    CHECK(c.check({"x"}, &ready, monotonic_seconds() + 5).status == StoreStatus::protocol);
  }
  SECTION("a WAIT that is never answered times out and drops the connection") {
    OneShotServer s([](int fd) {
      read_bytes(fd, 5 + add_query_size("k"));
      send_u64(fd, 0);
      ::usleep(800 * 1000);
    });
    TcpStoreClient c;
    REQUIRE(c.connect("127.0.0.1", s.port, "k", monotonic_seconds() + 5).ok());
    CHECK(c.wait({"never"}, monotonic_seconds() + 0.2).status == StoreStatus::timed_out);
    CHECK_FALSE(c.connected());
  }
}

TEST_CASE("the handshake is VALIDATE with torch's magic, then an ADD of 0") {
  std::string seen;
  {
    OneShotServer s([&seen](int fd) {
      std::string buf(5 + add_query_size("key"), '\0');
      size_t got = 0;
      while (got < buf.size()) {
        ssize_t r = ::recv(fd, &buf[got], buf.size() - got, 0);
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      seen = buf.substr(0, got);
      send_u64(fd, 0);
    });
    TcpStoreClient c;
    REQUIRE(c.connect("127.0.0.1", s.port, "key", monotonic_seconds() + 5).ok());
  }
  // 00 | ce f7 85 3c | 04 | 03 00.. | "key" | 00.. : what torch's own client sends first,
  // then the ADD query.
  const std::string want = std::string("\x00\xce\xf7\x85\x3c\x04", 6) +
                           std::string("\x03\0\0\0\0\0\0\0", 8) + "key" + std::string(8, '\0');
  CHECK(seen == want);
}
