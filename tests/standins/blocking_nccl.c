/* Stand-in for libnccl.so.2 2.28.9 whose N-th call never returns: a rank stuck inside NCCL, for
 * the recorder tests (tests/collectives/run_recorder.sh). Real soname, version literal and the
 * entry points of NCCL 2.28.9 the recorder intercepts, with their real signatures (nccl.h).
 *
 * Run-time knobs (environment, read at the first call):
 *   DENPEX_STANDIN_BLOCK_AT=N   the N-th collective or point-to-point call (1-based) blocks forever
 *   DENPEX_STANDIN_BLOCK_IN=fn  the first call of function fn (e.g. ncclGroupEnd) blocks forever
 * Communicators are real objects holding rank and size, so ncclCommUserRank/ncclCommCount work;
 * every call succeeds (returns ncclSuccess) unless it blocks. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int ncclResult_t;
typedef struct ncclComm { int rank; int nranks; } * ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclConfig ncclConfig_t;
typedef void* cudaStream_t;

__attribute__((used)) static const char version_literal[] = "NCCL version 2.28.9+cuda13.0";

static long calls;

static void block_forever(void) {
  for (;;) pause();
}

/* Counts collective and point-to-point calls and blocks the configured one. */
static void count_call(void) {
  const char* at = getenv("DENPEX_STANDIN_BLOCK_AT");
  long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
  if (at != NULL && *at != '\0' && atol(at) == n) block_forever();
}

static void maybe_block_in(const char* fn) {
  const char* in = getenv("DENPEX_STANDIN_BLOCK_IN");
  if (in != NULL && strcmp(in, fn) == 0) block_forever();
}

static ncclComm_t new_comm(int rank, int nranks) {
  ncclComm_t c = malloc(sizeof *c);
  if (c != NULL) {
    c->rank = rank;
    c->nranks = nranks;
  }
  return c;
}

ncclResult_t ncclGetVersion(int* version) { *version = 22809; return 0; }
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) { memset(id, 7, sizeof *id); return 0; }
ncclResult_t ncclCommUserRank(const ncclComm_t c, int* rank) { *rank = c ? c->rank : -1; return 0; }
ncclResult_t ncclCommCount(const ncclComm_t c, int* n) { *n = c ? c->nranks : -1; return 0; }

ncclResult_t ncclCommInitRank(ncclComm_t* c, int n, ncclUniqueId id, int r) {
  (void)id;
  maybe_block_in("ncclCommInitRank");
  *c = new_comm(r, n);
  return 0;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* c, int n, ncclUniqueId id, int r, ncclConfig_t* cfg) {
  (void)id; (void)cfg;
  maybe_block_in("ncclCommInitRankConfig");
  *c = new_comm(r, n);
  return 0;
}
ncclResult_t ncclCommInitRankScalable(ncclComm_t* c, int n, int r, int nId, ncclUniqueId* ids, ncclConfig_t* cfg) {
  (void)nId; (void)ids; (void)cfg;
  maybe_block_in("ncclCommInitRankScalable");
  *c = new_comm(r, n);
  return 0;
}
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  (void)devlist;
  for (int i = 0; i < ndev; ++i) comms[i] = new_comm(i, ndev);
  return 0;
}
/* One process plays its own rank: the split keeps it (rank `key` of `color + 1` ranks). */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* cfg) {
  (void)comm; (void)cfg;
  maybe_block_in("ncclCommSplit");
  *newcomm = color < 0 ? NULL : new_comm(key, color + 1);
  return 0;
}
ncclResult_t ncclCommShrink(ncclComm_t comm, int* exclude, int nexclude, ncclComm_t* newcomm, ncclConfig_t* cfg,
                            int flags) {
  (void)exclude; (void)cfg; (void)flags;
  *newcomm = new_comm(comm ? comm->rank : 0, (comm ? comm->nranks : 1) - nexclude);
  return 0;
}
ncclResult_t ncclCommFinalize(ncclComm_t c) { (void)c; return 0; }
ncclResult_t ncclCommDestroy(ncclComm_t c) { (void)c; maybe_block_in("ncclCommDestroy"); return 0; }
ncclResult_t ncclCommAbort(ncclComm_t c) { (void)c; return 0; }
ncclResult_t ncclCommRevoke(ncclComm_t c, int flags) { (void)c; (void)flags; return 0; }

ncclResult_t ncclGroupStart(void) { return 0; }
ncclResult_t ncclGroupEnd(void) { maybe_block_in("ncclGroupEnd"); return 0; }

#define COLL(...) { (void)0; count_call(); return 0; }
ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
  COLL()
ncclResult_t ncclAllGather(const void* s, void* r, size_t n, int t, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclReduceScatter(const void* s, void* r, size_t n, int t, int op, ncclComm_t c, cudaStream_t st)
  COLL()
ncclResult_t ncclBroadcast(const void* s, void* r, size_t n, int t, int root, ncclComm_t c, cudaStream_t st)
  COLL()
ncclResult_t ncclBcast(void* b, size_t n, int t, int root, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclReduce(const void* s, void* r, size_t n, int t, int op, int root, ncclComm_t c, cudaStream_t st)
  COLL()
ncclResult_t ncclAlltoAll(const void* s, void* r, size_t n, int t, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclGather(const void* s, void* r, size_t n, int t, int root, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclScatter(const void* s, void* r, size_t n, int t, int root, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclSend(const void* s, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st) COLL()
ncclResult_t ncclRecv(void* r, size_t n, int t, int peer, ncclComm_t c, cudaStream_t st) COLL()
