// Test program for the recorder: calls NCCL's API in a loop, one collective per step, under mpirun.
// Rank 2 diverges at step K according to VARIANT. Without a GPU the real NCCL 2.28.9 fails the
// communicator init and returns ncclInvalidArgument from every call on the null communicator
// without touching CUDA, which is enough: the recorder sees and forwards every call.
//
// usage: nccl_loop VARIANT K     VARIANT: none | count | root | type | stop | abort | check
//   abort runs without MPI as a single rank and calls abort() after K calls (signal flush test);
//   check only tells whether NCCL loads.
// Exit 77 (skip) when libnccl.so.2 cannot be loaded.
//
// NCCL is opened with dlopen(RTLD_GLOBAL) and its entry points looked up in the global scope
// (RTLD_DEFAULT), the way a preloaded interposer sees them; the test must not link NCCL.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct UniqueId { char bytes[128]; };
using Comm = void*;
using GetUniqueIdFn = int (*)(UniqueId*);
using InitRankFn = int (*)(Comm*, int, UniqueId, int);
using AllReduceFn = int (*)(const void*, void*, size_t, int, int, Comm, void*);
using BroadcastFn = int (*)(const void*, void*, size_t, int, int, Comm, void*);
using AllGatherFn = int (*)(const void*, void*, size_t, int, Comm, void*);
using ReduceScatterFn = int (*)(const void*, void*, size_t, int, int, Comm, void*);
using P2pFn = int (*)(const void*, size_t, int, int, Comm, void*);
using GroupFn = int (*)();

constexpr int kFloat32 = 7, kBfloat16 = 9, kSum = 0, kMax = 2, kSteps = 8, kSkip = 77;

struct Nccl {
  GetUniqueIdFn get_unique_id;
  InitRankFn init_rank;
  AllReduceFn all_reduce;
  BroadcastFn broadcast;
  AllGatherFn all_gather;
  ReduceScatterFn reduce_scatter;
  P2pFn send, recv;
  GroupFn group_start, group_end;
};

template <typename F>
bool lookup(const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return *out != nullptr;
}

bool load(Nccl* n) {
  if (dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL) == nullptr) return false;
  return lookup("ncclGetUniqueId", &n->get_unique_id) && lookup("ncclCommInitRank", &n->init_rank) &&
         lookup("ncclAllReduce", &n->all_reduce) && lookup("ncclBroadcast", &n->broadcast) &&
         lookup("ncclAllGather", &n->all_gather) && lookup("ncclReduceScatter", &n->reduce_scatter) &&
         lookup("ncclSend", &n->send) && lookup("ncclRecv", &n->recv) &&
         lookup("ncclGroupStart", &n->group_start) && lookup("ncclGroupEnd", &n->group_end);
}

// One collective per step; the schedule every rank follows unless it diverges.
void step(const Nccl& n, Comm comm, int s, bool diverge, const std::string& variant) {
  switch (s % 4) {
    case 0: n.all_reduce(nullptr, nullptr, 1024, kFloat32, kSum, comm, nullptr); break;
    case 1:
      if (diverge && variant == "count") n.broadcast(nullptr, nullptr, 257, kFloat32, 0, comm, nullptr);
      else if (diverge && variant == "root") n.broadcast(nullptr, nullptr, 256, kFloat32, 1, comm, nullptr);
      else if (diverge && variant == "type") n.all_reduce(nullptr, nullptr, 256, kFloat32, kSum, comm, nullptr);
      else n.broadcast(nullptr, nullptr, 256, kFloat32, 0, comm, nullptr);
      break;
    case 2: n.all_gather(nullptr, nullptr, 128, kBfloat16, comm, nullptr); break;
    default: n.reduce_scatter(nullptr, nullptr, 64, kFloat32, kMax, comm, nullptr); break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: nccl_loop none|count|root|type|stop|abort K\n");
    return 2;
  }
  std::string variant = argv[1];
  int k = std::atoi(argv[2]);
  Nccl n;
  if (!load(&n)) {
    std::fprintf(stderr, "nccl_loop: libnccl.so.2 not loadable: %s\n", dlerror());
    return kSkip;
  }
  UniqueId id;
  std::memset(&id, 0, sizeof id);
  Comm comm = nullptr;
  if (variant == "check") return 0;
  if (variant == "abort") {
    n.init_rank(&comm, 1, id, 0);
    for (int s = 0; s < k; ++s) step(n, comm, s, false, variant);
    std::abort();
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) n.get_unique_id(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  n.init_rank(&comm, size, id, rank);  // fails without a GPU and leaves comm null
  // A ring exchange first: point-to-point calls that the analyser must not mistake for divergence.
  n.group_start();
  n.send(nullptr, 32, kFloat32, (rank + 1) % size, comm, nullptr);
  n.recv(nullptr, 32, kFloat32, (rank + size - 1) % size, comm, nullptr);
  n.group_end();
  for (int s = 0; s < kSteps; ++s) {
    bool diverge = rank == 2 && s == k;
    if (diverge && variant == "stop") break;
    step(n, comm, s, diverge, variant);
  }
  MPI_Finalize();
  return 0;
}
