// Serves the gate's TCPStore server (collect/tcp_store_server.h) on a port for a few seconds,
// so that torch's own Python clients can be pointed at it (run_store_server_interop.sh).
//   store_server_driver PORT SECONDS     prints "listening" once it listens; exit 2 if it cannot
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "collect/tcp_store_server.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: store_server_driver PORT SECONDS\n");
    return 2;
  }
  denpex::TcpStoreServer server;
  std::string error;
  bool in_use = false;
  if (!server.start(std::atoi(argv[1]), &error, &in_use)) {
    std::fprintf(stderr, "store_server_driver: %s\n", error.c_str());
    return 2;
  }
  std::printf("listening\n");
  std::fflush(stdout);
  ::sleep(static_cast<unsigned>(std::atoi(argv[2])));
  return 0;
}
