#include "collect/tcp_store_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace denpex {

namespace {

// PING (13, torch >= 2.5: a 32-bit nonce echoed back) is served too, so torch's own clients
// can use this server.
enum Query : uint8_t {
  kValidate = 0, kSet = 1, kGet = 3, kAdd = 4, kCheck = 5, kWait = 6, kPing = 13
};
constexpr uint32_t kValidationMagic = 0x3C85F7CE;
constexpr uint64_t kMaxKey = 4096;
constexpr uint64_t kMaxValue = 16u << 20;
constexpr uint64_t kMaxKeys = 1u << 20;
constexpr size_t kMaxStoreBytes = 256u << 20;
constexpr size_t kMaxPending = 32u << 20;   // bytes of one client's unfinished query

struct Client {
  int fd = -1;
  std::string in, out;
  bool validated = false;
  size_t awaited = 0;   // keys of its pending WAIT not yet set
};

// Reads a query's fields from a client's buffer; `short_` when the bytes are not all there yet.
struct Reader {
  const std::string& buf;
  size_t pos = 0;
  bool short_ = false;
  bool bad = false;
  template <typename T>
  T value() {
    T v{};
    if (pos + sizeof v > buf.size()) { short_ = true; return v; }
    std::memcpy(&v, buf.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string bytes(uint64_t max) {
    uint64_t n = value<uint64_t>();
    if (short_) return {};
    if (n > max) { bad = true; return {}; }
    if (pos + n > buf.size()) { short_ = true; return {}; }
    std::string s = buf.substr(pos, static_cast<size_t>(n));
    pos += static_cast<size_t>(n);
    return s;
  }
};

template <typename T>
void put(std::string* out, T v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }

class Store {
 public:
  // Handles every complete query in c's buffer. False: close the client.
  bool serve(Client* c);
  void forget(Client* c);   // a closed client no longer waits
  std::unordered_map<int, std::unique_ptr<Client>> clients;

 private:
  bool one(Client* c, Reader* r, uint8_t type);
  bool set(const std::string& key, std::string value);
  std::unordered_map<std::string, std::string> kv_;
  std::map<std::string, std::set<int>> waiting_;   // key -> fds waiting for it
  size_t bytes_ = 0;
};

bool Store::set(const std::string& key, std::string value) {
  auto it = kv_.find(key);
  size_t old = it == kv_.end() ? 0 : key.size() + it->second.size();
  if (bytes_ - old + key.size() + value.size() > kMaxStoreBytes) return false;
  bytes_ = bytes_ - old + key.size() + value.size();
  kv_[key] = std::move(value);
  auto w = waiting_.find(key);
  if (w == waiting_.end()) return true;
  for (int fd : w->second) {
    auto c = clients.find(fd);
    if (c != clients.end() && c->second->awaited > 0 && --c->second->awaited == 0)
      c->second->out += '\0';   // STOP_WAITING
  }
  waiting_.erase(w);
  return true;
}

void Store::forget(Client* c) {
  for (auto& [key, fds] : waiting_) fds.erase(c->fd);
}

bool Store::one(Client* c, Reader* r, uint8_t type) {
  if (type == kSet) {
    std::string key = r->bytes(kMaxKey), value = r->bytes(kMaxValue);
    return r->short_ || r->bad || set(key, std::move(value));
  }
  if (type == kGet) {
    std::string key = r->bytes(kMaxKey);
    if (r->short_ || r->bad) return true;
    auto it = kv_.find(key);
    if (it == kv_.end()) return false;   // as the classic server: a GET of a missing key
    put<uint64_t>(&c->out, it->second.size());
    c->out += it->second;
    return true;
  }
  if (type == kAdd) {
    std::string key = r->bytes(kMaxKey);
    int64_t delta = r->value<int64_t>();
    if (r->short_ || r->bad) return true;
    auto it = kv_.find(key);
    int64_t v = delta;
    if (it != kv_.end()) {
      char* end = nullptr;
      v += std::strtoll(it->second.c_str(), &end, 10);
    }
    put<int64_t>(&c->out, v);
    return set(key, std::to_string(v));
  }
  // CHECK and WAIT: a count, then the keys.
  uint64_t n = r->value<uint64_t>();
  if (r->short_) return true;
  if (n > kMaxKeys) return false;
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < n && !r->short_ && !r->bad; ++i) keys.push_back(r->bytes(kMaxKey));
  if (r->short_ || r->bad) return true;
  size_t missing = 0;
  for (const auto& k : keys) missing += kv_.count(k) == 0;
  if (type == kCheck) {
    c->out += missing == 0 ? '\0' : '\1';
    return true;
  }
  if (missing == 0) {
    c->out += '\0';
    return true;
  }
  c->awaited = missing;
  for (const auto& k : keys)
    if (kv_.count(k) == 0) waiting_[k].insert(c->fd);
  return true;
}

bool Store::serve(Client* c) {
  while (!c->in.empty()) {
    Reader r{c->in};
    const uint8_t type = r.value<uint8_t>();
    bool ok = true;
    if (!c->validated) {
      uint32_t magic = r.value<uint32_t>();
      if (!r.short_ && (type != kValidate || magic != kValidationMagic)) return false;
      c->validated = !r.short_;
    } else if (type == kPing) {
      uint32_t nonce = r.value<uint32_t>();
      if (!r.short_) put<uint32_t>(&c->out, nonce);
    } else if (type == kSet || type == kGet || type == kAdd || type == kCheck || type == kWait) {
      ok = one(c, &r, type);
    } else {
      return false;
    }
    if (!ok || r.bad) return false;
    if (r.short_) return c->in.size() <= kMaxPending;   // the rest has not arrived yet
    c->in.erase(0, r.pos);
  }
  return true;
}

}  // namespace

TcpStoreServer::~TcpStoreServer() { stop(); }

bool TcpStoreServer::start(int port, std::string* error, bool* in_use) {
  *in_use = false;
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listener_, 4096) != 0 || ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    *in_use = errno == EADDRINUSE;
    *error = fmt::format("listen on 0.0.0.0:{}: {}", port, std::strerror(errno));
    stop();
    return false;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

void TcpStoreServer::stop() {
  if (thread_.joinable()) {
    char b = 0;
    if (::write(wake_[1], &b, 1) < 0) {}
    thread_.join();
  }
  for (int* fd : {&listener_, &wake_[0], &wake_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void TcpStoreServer::run() {
  Store store;
  std::vector<pollfd> fds;
  char buf[65536];
  for (;;) {
    fds.assign({{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}});
    for (auto& [fd, c] : store.clients)
      fds.push_back({fd, static_cast<short>(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) break;
    if (fds[0].revents & POLLIN) {
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        store.clients[fd] = std::make_unique<Client>();
        store.clients[fd]->fd = fd;
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      Client* c = store.clients[fds[i].fd].get();
      bool keep = true;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
        if (n > 0) c->in.append(buf, static_cast<size_t>(n));
        keep = (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) && store.serve(c);
      }
      if (keep && !c->out.empty()) {
        ssize_t n = ::send(c->fd, c->out.data(), c->out.size(), MSG_NOSIGNAL);
        if (n > 0) c->out.erase(0, static_cast<size_t>(n));
        else if (n < 0 && errno != EAGAIN && errno != EINTR) keep = false;
      }
      if (!keep) {
        store.forget(c);
        ::close(c->fd);
        store.clients.erase(fds[i].fd);
      }
    }
  }
  for (auto& [fd, c] : store.clients) ::close(fd);
}

}  // namespace denpex
