#include "collect/tcp_store_client.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "probe/monotonic_clock.h"

namespace denpex {

namespace {

// The query types both PyTorch servers number the same way (TCPStoreBackend.hpp's QueryType).
enum Query : uint8_t { kValidate = 0, kSet = 1, kGet = 3, kAdd = 4, kCheck = 5, kWait = 6 };
constexpr uint32_t kValidationMagic = 0x3C85F7CE;
constexpr uint8_t kCheckReady = 0, kCheckNotReady = 1, kWaitStop = 0;

template <typename T>
void put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_bytes(std::string* out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out->append(s);
}

std::string keys_query(uint8_t type, const std::vector<std::string>& keys) {
  std::string q(1, static_cast<char>(type));
  put<uint64_t>(&q, keys.size());
  for (const auto& k : keys) put_bytes(&q, k);
  return q;
}

int poll_ms(double deadline) {
  double left = deadline - monotonic_seconds();
  if (left <= 0) return 0;
  return static_cast<int>(std::min(std::ceil(left * 1000.0), 3600e3));
}

struct Resolution {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  addrinfo* list = nullptr;
  ~Resolution() {
    if (list) ::freeaddrinfo(list);
  }
};

// getaddrinfo has no timeout of its own: it runs in a detached thread that owns its half of
// the result, so a resolver that hangs costs the deadline and nothing more.
std::shared_ptr<Resolution> resolve(const std::string& host, int port, double deadline) {
  auto r = std::make_shared<Resolution>();
  std::thread([r, host, port] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
    std::lock_guard<std::mutex> lock(r->mu);
    r->rc = rc;
    r->list = list;
    r->done = true;
    r->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(r->mu);
  r->cv.wait_for(lock, std::chrono::milliseconds(poll_ms(deadline)), [&] { return r->done; });
  return r;
}

// One non-blocking connect attempt. Returns the socket, or -1 with *err (errno) set.
int connect_once(const addrinfo* a, double deadline, int* err) {
  int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
  if (fd < 0) {
    *err = errno;
    return -1;
  }
  if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
    *err = errno;
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int n = ::poll(&p, 1, poll_ms(deadline));
  int so = ETIMEDOUT;
  socklen_t len = sizeof so;
  if (n > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
  if (so != 0) {
    *err = so;
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

const char* store_status_name(StoreStatus s) {
  switch (s) {
    case StoreStatus::ok: return "ok";
    case StoreStatus::timed_out: return "timed out";
    case StoreStatus::unreachable: return "unreachable";
    case StoreStatus::closed: return "closed";
    case StoreStatus::protocol: return "protocol error";
  }
  return "?";
}

TcpStoreClient::~TcpStoreClient() { close(); }

void TcpStoreClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

StoreReply TcpStoreClient::fail(StoreStatus status, std::string error) {
  // A connection whose reply stream is out of step (a timed-out wait, a short read) can only
  // be dropped.
  close();
  return {status, std::move(error)};
}

StoreReply TcpStoreClient::connect(const std::string& host, int port,
                                   const std::string& check_key, double deadline) {
  close();
  peer_ = fmt::format("{}:{}", host, port);
  if (port <= 0 || port > 65535)
    return fail(StoreStatus::unreachable, fmt::format("{}: not a TCP port", peer_));
  auto r = resolve(host, port, deadline);
  {
    std::lock_guard<std::mutex> lock(r->mu);
    if (!r->done)
      return fail(StoreStatus::unreachable,
                  fmt::format("resolving {} did not finish before the deadline", host));
    if (r->rc != 0)
      return fail(StoreStatus::unreachable,
                  fmt::format("cannot resolve {}: {}", host, ::gai_strerror(r->rc)));
  }
  int err = 0;
  while (fd_ < 0) {
    for (const addrinfo* a = r->list; a && fd_ < 0; a = a->ai_next)
      fd_ = connect_once(a, deadline, &err);
    if (fd_ >= 0) break;
    // The agent starts its store before its workers: a refusal past a short retry means the
    // store is gone, not late.
    if (err != ECONNREFUSED || monotonic_seconds() + 0.05 >= deadline)
      return fail(StoreStatus::unreachable,
                  fmt::format("connect to {}: {}", peer_, std::strerror(err)));
    ::usleep(50 * 1000);
  }
  std::string hello(1, static_cast<char>(kValidate));
  put<uint32_t>(&hello, kValidationMagic);
  StoreReply s = send_all(hello, deadline);
  if (!s.ok()) return s;
  int64_t v = 0;
  s = add(check_key, 0, &v, deadline);
  if (s.status == StoreStatus::timed_out)
    return fail(StoreStatus::protocol,
                fmt::format("{} accepted the connection but did not answer a TCPStore query "
                            "after the validation handshake",
                            peer_));
  if (s.status == StoreStatus::closed)
    return fail(StoreStatus::protocol,
                fmt::format("{} closed the connection after the TCPStore validation handshake",
                            peer_));
  // Nothing but ADDs of 0 and 1 reach the check key: a negative count is not a TCPStore's.
  if (s.ok() && v < 0)
    return fail(StoreStatus::protocol,
                fmt::format("{} answered the TCPStore query after the validation handshake with "
                            "{}, which no TCPStore returns",
                            peer_, v));
  return s;
}

StoreReply TcpStoreClient::send_all(const std::string& bytes, double deadline) {
  if (fd_ < 0) return {StoreStatus::closed, fmt::format("{}: not connected", peer_)};
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return fail(StoreStatus::closed, fmt::format("send to {}: {}", peer_, std::strerror(errno)));
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(deadline)) == 0)
      return fail(StoreStatus::timed_out, fmt::format("send to {}: deadline passed", peer_));
  }
  return {};
}

StoreReply TcpStoreClient::recv_exact(char* out, size_t n, double deadline) {
  if (fd_ < 0) return {StoreStatus::closed, fmt::format("{}: not connected", peer_)};
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd_, out + got, n - got, 0);
    if (r > 0) {
      got += static_cast<size_t>(r);
      received_ += r;
      continue;
    }
    if (r == 0)
      return fail(StoreStatus::closed, fmt::format("{} closed the connection", peer_));
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      return fail(StoreStatus::closed,
                  fmt::format("receive from {}: {}", peer_, std::strerror(errno)));
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, poll_ms(deadline)) == 0)
      return fail(StoreStatus::timed_out, fmt::format("{}: no answer before the deadline", peer_));
  }
  return {};
}

StoreReply TcpStoreClient::recv_value(size_t max_bytes, std::string* value, double deadline) {
  uint64_t len = 0;
  StoreReply s = recv_exact(reinterpret_cast<char*>(&len), sizeof len, deadline);
  if (!s.ok()) return s;
  if (len > max_bytes)
    return fail(StoreStatus::protocol,
                fmt::format("{} sent a value of {} bytes where at most {} belong", peer_, len,
                            max_bytes));
  value->assign(static_cast<size_t>(len), '\0');
  return len == 0 ? StoreReply{} : recv_exact(&(*value)[0], value->size(), deadline);
}

StoreReply TcpStoreClient::set(const std::string& key, const std::string& value,
                               double deadline) {
  std::string q(1, static_cast<char>(kSet));
  put_bytes(&q, key);
  put_bytes(&q, value);
  return send_all(q, deadline);
}

StoreReply TcpStoreClient::get(const std::string& key, size_t max_bytes, std::string* value,
                               double deadline) {
  std::string q(1, static_cast<char>(kGet));
  put_bytes(&q, key);
  StoreReply s = send_all(q, deadline);
  return s.ok() ? recv_value(max_bytes, value, deadline) : s;
}

StoreReply TcpStoreClient::add(const std::string& key, int64_t delta, int64_t* value,
                               double deadline) {
  std::string q(1, static_cast<char>(kAdd));
  put_bytes(&q, key);
  put<int64_t>(&q, delta);
  StoreReply s = send_all(q, deadline);
  if (!s.ok()) return s;
  return recv_exact(reinterpret_cast<char*>(value), sizeof *value, deadline);
}

StoreReply TcpStoreClient::check(const std::vector<std::string>& keys, bool* ready,
                                 double deadline) {
  StoreReply s = send_all(keys_query(kCheck, keys), deadline);
  if (!s.ok()) return s;
  char b = 0;
  s = recv_exact(&b, 1, deadline);
  if (!s.ok()) return s;
  if (b != kCheckReady && b != kCheckNotReady)
    return fail(StoreStatus::protocol,
                fmt::format("{} answered a CHECK with byte {}", peer_, static_cast<int>(b)));
  *ready = b == kCheckReady;
  return {};
}

StoreReply TcpStoreClient::wait(const std::vector<std::string>& keys, double deadline) {
  StoreReply s = send_all(keys_query(kWait, keys), deadline);
  if (!s.ok()) return s;
  char b = 0;
  s = recv_exact(&b, 1, deadline);
  if (!s.ok()) return s;
  if (b != kWaitStop)
    return fail(StoreStatus::protocol,
                fmt::format("{} answered a WAIT with byte {}", peer_, static_cast<int>(b)));
  return {};
}

// Queries go out in batches: with every reply unread, a long pipeline would fill both
// directions' socket buffers and stall until the deadline.
constexpr size_t kPipelineBatch = 256;

StoreReply TcpStoreClient::check_each(const std::vector<std::string>& keys,
                                      std::vector<bool>* present, double deadline) {
  present->assign(keys.size(), false);
  StoreReply s;
  for (size_t base = 0; s.ok() && base < keys.size(); base += kPipelineBatch) {
    const size_t end = std::min(keys.size(), base + kPipelineBatch);
    std::string q;
    for (size_t i = base; i < end; ++i) q += keys_query(kCheck, {keys[i]});
    s = send_all(q, deadline);
    for (size_t i = base; s.ok() && i < end; ++i) {
      char b = 0;
      s = recv_exact(&b, 1, deadline);
      if (!s.ok()) break;
      if (b != kCheckReady && b != kCheckNotReady)
        return fail(StoreStatus::protocol,
                    fmt::format("{} answered a CHECK with byte {}", peer_, static_cast<int>(b)));
      (*present)[i] = b == kCheckReady;
    }
  }
  return s;
}

StoreReply TcpStoreClient::get_each(const std::vector<std::string>& keys, size_t max_bytes,
                                    std::vector<std::string>* values, double deadline) {
  values->assign(keys.size(), std::string());
  StoreReply s;
  for (size_t base = 0; s.ok() && base < keys.size(); base += kPipelineBatch) {
    const size_t end = std::min(keys.size(), base + kPipelineBatch);
    std::string q;
    for (size_t i = base; i < end; ++i) {
      q += static_cast<char>(kGet);
      put_bytes(&q, keys[i]);
    }
    s = send_all(q, deadline);
    for (size_t i = base; s.ok() && i < end; ++i)
      s = recv_value(max_bytes, &(*values)[i], deadline);
  }
  return s;
}

}  // namespace denpex
