// A client of PyTorch's c10d TCPStore, the key-value store torchrun's elastic agent hosts for
// its workers on MASTER_ADDR:MASTER_PORT, speaking its wire protocol with no Python.
//
// The protocol, as PyTorch 2.x servers read it (the classic TCPStoreBackend, and the libuv
// server that is the default from 2.4): a connection's first query must be VALIDATE (query
// byte 0, then the 32-bit magic 0x3C85F7CE); the server answers nothing to it. Every query is
// one type byte followed by its arguments; a key or value is a 64-bit length then its bytes;
// integers are the host's byte order (little-endian on every platform torch ships). Replies:
// GET a length-prefixed value, ADD the new 64-bit value, CHECK one byte (0 ready, 1 not),
// WAIT one byte (0) once every key exists. A server that does not accept the handshake either
// closes the connection or ignores what follows it; both are caught by the first ADD, which
// must answer with exactly 8 bytes before the deadline.
//
// Every call takes a deadline on probe/monotonic_clock.h's clock and never blocks past it: the
// socket is non-blocking and every read and write waits in poll(). Every reply is bounded (a
// value longer than the caller's bound is a protocol error, never an allocation).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace denpex {

enum class StoreStatus {
  ok,
  timed_out,     // the deadline passed first (the connection is closed: a reply may still come)
  unreachable,   // name resolution or connect failed, before the handshake
  closed,        // the server closed the connection or reset it
  protocol,      // the reply is not what a TCPStore this client knows sends
};

struct StoreReply {
  StoreStatus status = StoreStatus::ok;
  std::string error;   // one clause, e.g. "connect to 10.0.0.1:29500: connection refused"
  bool ok() const { return status == StoreStatus::ok; }
};

class TcpStoreClient {
 public:
  TcpStoreClient() = default;
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  // Resolves `host` (in a thread, so a slow resolver is bounded too), connects, retrying a
  // refused connection every 50 ms until `deadline` (the agent may be a moment late), sends
  // VALIDATE and checks that the server answers an ADD of 0 on `check_key` with 8 bytes.
  // Returns unreachable (never connected), closed or protocol (connected, but the server
  // dropped or ignored the handshake), timed_out.
  StoreReply connect(const std::string& host, int port, const std::string& check_key,
                     double deadline);

  // Closes the connection (connect may be called again).
  void close();

  StoreReply set(const std::string& key, const std::string& value, double deadline);
  // The key's value. REQUIRES: the key exists (the classic server drops the connection on a
  // GET of a missing key): wait for it or check it first. A value longer than max_bytes is a
  // protocol error.
  StoreReply get(const std::string& key, size_t max_bytes, std::string* value, double deadline);
  StoreReply add(const std::string& key, int64_t delta, int64_t* value, double deadline);
  // Whether every key exists.
  StoreReply check(const std::vector<std::string>& keys, bool* ready, double deadline);
  // Returns ok once every key exists, timed_out at the deadline (and closes the connection,
  // since the server still holds the wait and would answer it later).
  StoreReply wait(const std::vector<std::string>& keys, double deadline);

  // Pipelined: every query is sent, then every reply read, so N keys cost one round trip.
  // present[i] says whether keys[i] exists.
  StoreReply check_each(const std::vector<std::string>& keys, std::vector<bool>* present,
                        double deadline);
  // values[i] = the value of keys[i]; each bounded by max_bytes. REQUIRES: every key exists.
  StoreReply get_each(const std::vector<std::string>& keys, size_t max_bytes,
                      std::vector<std::string>* values, double deadline);

  // Payload bytes read from the server since construction (replies, length fields included).
  long long bytes_received() const { return received_; }
  bool connected() const { return fd_ >= 0; }

 private:
  StoreReply send_all(const std::string& bytes, double deadline);
  StoreReply recv_exact(char* out, size_t n, double deadline);
  StoreReply recv_value(size_t max_bytes, std::string* value, double deadline);
  StoreReply fail(StoreStatus status, std::string error);

  int fd_ = -1;
  std::string peer_;   // "host:port" for messages
  long long received_ = 0;
};

// "timed out", "unreachable", ... for messages.
const char* store_status_name(StoreStatus s);

}  // namespace denpex
