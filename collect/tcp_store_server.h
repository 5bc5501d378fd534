// A small server of the c10d TCPStore wire protocol (collect/tcp_store_client.h describes it),
// for the worlds where nobody serves MASTER_ADDR:MASTER_PORT: torchrun of torch 2.3 and older
// with the c10d rendezvous (TORCHELASTIC_USE_AGENT_STORE=False), and launchers that set the
// env:// variables without torchrun (Kubeflow's PyTorchJob running a command directly,
// DeepSpeed's launcher). There the training script's rank 0 would host the store in
// init_process_group; the gate's rank 0 does the same, for the gate's own keys.
//
// It serves what the gate's client sends: VALIDATE (required first), SET, GET, ADD, CHECK and
// WAIT, and PING (which torch's own clients send after VALIDATE since 2.5). Any other query, a malformed one, a GET of a missing key, a key over 4 KiB, a value
// over 16 MiB or a store past 256 MiB closes that client's connection; the server goes on.
#pragma once

#include <atomic>
#include <string>
#include <thread>

namespace denpex {

class TcpStoreServer {
 public:
  TcpStoreServer() = default;
  ~TcpStoreServer();   // stops the server
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  // Listens on every IPv4 address, `port`, and serves in a background thread. Returns false
  // with *error ("bind 0.0.0.0:29500: Address already in use") when it cannot listen;
  // *in_use is then true when the port was taken (someone else may serve it).
  bool start(int port, std::string* error, bool* in_use);

  // Stops serving and closes every connection. Idempotent.
  void stop();

 private:
  void run();

  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace denpex
