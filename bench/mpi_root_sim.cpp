// Benchmark 7: memory at rank 0 of the digest protocol (collect/mpi_job.cpp), for a simulated
// job of N ranks (default 1,000,000 on 125,000 hosts named like "gpu-node-012345"), with K = 3
// configurations. The real MpiJob code runs as rank 0 over an in-memory transport (the plugin
// C ABI of collect/mpi_plugin/mpi_plugin.h): each MPI_Iprobe for a digest yields the next rank's
// message, made when asked, so the only memory that grows is what rank 0 itself keeps.
//
// The configurations, from a real rank record (TEMPLATE, from --rank-report), as in
// judge_sim.cpp: the template (majority); NCCL_PROTO=Simple on every 97th rank; NCCL 2.27.3 on
// 10 whole hosts.
//
// usage: denpex_bench_mpi_root_sim TEMPLATE.json [N=1000000] [HOSTS=125000]
// Output: "rss_before_kb", "peak_rss_kb", "bytes_per_rank" (peak growth / N), "received_bytes",
// the group sizes and the collect time. Exit 0; 2 on bad usage or an unreadable template.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/sim_inputs.h"
#include "collect/mpi_job.h"
#include "probe/monotonic_clock.h"

using namespace denpex;

namespace {

// The simulated world, seen from rank 0 (a benchmark's own state).
struct Sim {
  int n = 0;
  int per_host = 8;
  int next = 1;                        // next rank whose digest arrives
  std::string pending;                 // the message iprobe announced
  int pending_from = -1;
  std::vector<unsigned long long> digests;
  std::vector<std::string> records;    // JSON per configuration
  std::map<int, int> requested;        // representative rank -> configuration
  int bad_host_lo = 0;
} sim;

int config_of(int r) {
  int h = r / sim.per_host;
  if (h >= sim.bad_host_lo && h < sim.bad_host_lo + 10) return 2;
  return r % 97 == 1 ? 1 : 0;
}

std::string host_of(int r) {
  char h[32];
  std::snprintf(h, sizeof h, "gpu-node-%06d", r / sim.per_host);
  return h;
}

constexpr int kTagDigest = 7101, kTagRequest = 7102, kTagRecord = 7103;

int s_init(int*, char***, int* rank, int* size) {
  *rank = 0;
  *size = sim.n;
  return 0;
}
void s_library(char* out, int n) { std::snprintf(out, static_cast<size_t>(n), "simulated"); }
int s_send(const void*, int, int dest, int tag) {
  if (tag == kTagRequest) sim.requested[dest] = config_of(dest);
  return 0;
}
int s_iprobe(int source, int tag, int* found, int* from, int* len) {
  *found = 0;
  if (tag == kTagDigest && sim.next < sim.n) {
    int r = sim.next;
    sim.pending.assign(8, '\0');
    unsigned long long d = sim.digests[static_cast<size_t>(config_of(r))];
    std::memcpy(&sim.pending[0], &d, 8);
    sim.pending += host_of(r);
    sim.pending_from = r;
  } else if (tag == kTagRecord && sim.requested.count(source)) {
    sim.pending = sim.records[static_cast<size_t>(sim.requested[source])];
    sim.pending_from = source;
  } else {
    return 0;
  }
  *found = 1;
  *from = sim.pending_from;
  *len = static_cast<int>(sim.pending.size());
  return 0;
}
int s_recv(void* buf, int len, int source, int tag) {
  if (source != sim.pending_from) return 1;
  std::memcpy(buf, sim.pending.data(), static_cast<size_t>(len));
  if (tag == kTagDigest) ++sim.next;
  if (tag == kTagRecord) sim.requested.erase(source);
  return 0;
}
int s_finalize() { return 0; }
int s_abort(int) { return 0; }
void s_error_string(int code, char* out, int n) {
  std::snprintf(out, static_cast<size_t>(n), "simulated error %d", code);
}
const denpex_mpi_plugin kSim = {DENPEX_MPI_PLUGIN_ABI, "simulated", s_init, s_library, s_send,
                                s_iprobe, s_recv, s_finalize, s_error_string, s_abort};


}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TEMPLATE.json [N=1000000] [HOSTS=125000]\n", argv[0]);
    return 2;
  }
  RankRecord base;
  if (!denpex_bench::load_template(argv[1], &base)) return 2;
  sim.n = argc > 2 ? std::atoi(argv[2]) : 1000000;
  const int nhosts = argc > 3 ? std::atoi(argv[3]) : 125000;
  if (sim.n < 2 || nhosts < 1) return 2;
  sim.per_host = (sim.n + nhosts - 1) / nhosts;
  sim.bad_host_lo = nhosts / 2;
  const std::vector<RankRecord> configs = denpex_bench::three_configurations(base);
  for (auto& c : configs) {
    sim.digests.push_back(configuration_digest(c));
    sim.records.push_back(nlohmann::json(c).dump());
  }

  MpiJob job;
  std::string error;
  MpiJob::start(&kSim, nullptr, nullptr, &job, &error);
  const long before = denpex_bench::rss_kb();
  auto t0 = std::chrono::steady_clock::now();
  CollectResult res = job.collect(&configs[0], host_of(0), "", monotonic_seconds() + 3600);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const long peak = denpex_bench::peak_rss_kb();
  if (!res.error.empty()) {
    std::fprintf(stderr, "collect failed: %s\n", res.error.c_str());
    return 2;
  }
  std::printf("ranks %d hosts %d host_name_bytes %zu configurations %zu missing %zu\n", sim.n,
              nhosts, host_of(0).size(), res.groups.size(), res.missing.size());
  for (const auto& g : res.groups)
    std::printf("group ranks %zu hosts %zu\n", g.ranks.size(), g.hosts.size());
  std::printf("collect_ms %.1f\n", ms);
  std::printf("received_bytes %lld\n", res.bytes_at_root);
  std::printf("rss_before_kb %ld\n", before);
  std::printf("rss_after_kb %ld\n", denpex_bench::rss_kb());
  std::printf("peak_rss_kb %ld\n", peak);
  std::printf("bytes_per_rank %.1f\n", (peak - before) * 1024.0 / sim.n);
  return 0;
}
