// Floor of the torchrun benchmark: the least a gate over torchrun's store must do. Every rank
// connects to MASTER_ADDR:MASTER_PORT (the same client and handshake as the probe), puts one
// key; rank 0 waits for all of them and gets them, then puts one key every other rank gets.
// No probe, no record, no judgement. Rank 0 prints "bytes_at_root=<n>". Exit 0, or 2 with one
// line when the store fails.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include "collect/tcp_store_client.h"
#include "probe/monotonic_clock.h"

using namespace denpex;

int main() {
  const char* rank_s = std::getenv("RANK");
  const char* size_s = std::getenv("WORLD_SIZE");
  const char* addr = std::getenv("MASTER_ADDR");
  const char* port_s = std::getenv("MASTER_PORT");
  const char* run = std::getenv("TORCHELASTIC_RUN_ID");
  const char* restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
  if (!rank_s || !size_s || !addr || !port_s) {
    std::fprintf(stderr, "floor_store_keys: run under torchrun (RANK, WORLD_SIZE, MASTER_*)\n");
    return 2;
  }
  const int rank = std::atoi(rank_s), size = std::atoi(size_s);
  const std::string p = std::string("floor/") + (run ? run : "") + "/" + (restart ? restart : "") + "/";
  const double deadline = monotonic_seconds() + 30;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  TcpStoreClient c;
  StoreReply s = c.connect(addr, std::atoi(port_s), p + "hello", deadline);
  if (s.ok() && rank != 0) {
    s = c.set(p + "k/" + std::to_string(rank), host, deadline);
    int64_t n = 0;
    if (s.ok()) s = c.add(p + "n", 1, &n, deadline);
    if (s.ok() && n == size - 1) s = c.set(p + "all", "1", deadline);
    if (s.ok()) s = c.wait({p + "done"}, deadline);
    std::string v;
    if (s.ok()) s = c.get(p + "done", 8, &v, deadline);
  } else if (s.ok()) {
    std::vector<std::string> keys, values;
    for (int r = 1; r < size; ++r) keys.push_back(p + "k/" + std::to_string(r));
    if (size > 1) s = c.wait({p + "all"}, deadline);
    if (s.ok()) s = c.get_each(keys, 256, &values, deadline);
    if (s.ok()) s = c.set(p + "done", "0", deadline);
    if (s.ok()) std::printf("bytes_at_root=%lld\n", c.bytes_received());
  }
  if (!s.ok()) {
    std::fprintf(stderr, "floor_store_keys: rank %d: %s\n", rank, s.error.c_str());
    return 2;
  }
  return 0;
}
