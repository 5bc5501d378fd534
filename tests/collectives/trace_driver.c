/* A one-process "rank" for the recorder tests (run_recorder.sh): calls NCCL's API the way a
 * training process does, through the global scope (dlopen RTLD_GLOBAL + dlsym RTLD_DEFAULT), so
 * a preloaded libdenpex-trace.so sees every call. Never linked against NCCL.
 *
 * usage: trace_driver MODE ...
 *   loop RANK NRANKS CALLS [DIVERGE_AT]  ncclCommInitRank (the same unique id in every process),
 *        CALLS x AllReduce(1024 float32 sum); call DIVERGE_AT (0-based) has count 1000 instead.
 *        Then prints "done" and waits for a signal when DRIVER_WAIT is set, else exits 0.
 *        DRIVER_BLOCK_AT=K with nccl_blocker.c preloaded: the real NCCL blocks inside call K.
 *   all  every entry point the recorder intercepts once, groups nested two deep; exits 0.
 *   group  GroupStart, Send, Recv, GroupEnd on one communicator; exits 0.
 *   threads  4 threads, each its own communicator, 50,000 AllReduce each, concurrently.
 *   fork  init + 3 AllReduce, fork: the child makes 2 (count 16) and exits, the parent 1 more.
 *   shrink_null  5 AllReduce, then ncclCommShrink(NULL, ...), which crashes the real NCCL 2.28.9.
 *   private  opens NCCL with RTLD_LOCAL and calls ncclAllReduce through that handle (invisible
 *        to an interposer), prints "done" and waits for a signal.
 * Exit 77 when libnccl.so.2 cannot be loaded. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { char internal[128]; } UniqueId;
typedef void* Comm;
typedef int (*InitRankFn)(Comm*, int, UniqueId, int);
typedef int (*InitRankConfigFn)(Comm*, int, UniqueId, int, void*);
typedef int (*InitScalableFn)(Comm*, int, int, int, UniqueId*, void*);
typedef int (*InitAllFn)(Comm*, int, const int*);
typedef int (*SplitFn)(Comm, int, int, Comm*, void*);
typedef int (*ShrinkFn)(Comm, int*, int, Comm*, void*, int);
typedef int (*CommFn)(Comm);
typedef int (*RevokeFn)(Comm, int);
typedef int (*AllReduceFn)(const void*, void*, size_t, int, int, Comm, void*);
typedef int (*AllGatherFn)(const void*, void*, size_t, int, Comm, void*);
typedef int (*RootedFn)(const void*, void*, size_t, int, int, Comm, void*);
typedef int (*ReduceFn)(const void*, void*, size_t, int, int, int, Comm, void*);
typedef int (*BcastFn)(void*, size_t, int, int, Comm, void*);
typedef int (*SendFn)(const void*, size_t, int, int, Comm, void*);
typedef int (*GroupFn)(void);

enum { kFloat32 = 7, kSum = 0, kSkip = 77 };

static void* sym(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p == NULL) {
    fprintf(stderr, "trace_driver: %s not found\n", name);
    exit(2);
  }
  return p;
}

static void wait_for_signal(void) {
  printf("done\n");
  fflush(stdout);
  for (;;) pause();
}

static Comm init_rank(int rank, int nranks) {
  UniqueId id;
  memset(&id, 'D', sizeof id);
  Comm comm = NULL;
  ((InitRankFn)sym("ncclCommInitRank"))(&comm, nranks, id, rank);  /* fails without a GPU on real NCCL */
  return comm;
}

static int loop(int rank, int nranks, long calls, long diverge_at) {
  Comm comm = init_rank(rank, nranks);
  AllReduceFn all_reduce = (AllReduceFn)sym("ncclAllReduce");
  /* DRIVER_BLOCK_AT=K with nccl_blocker.c preloaded: the real NCCL blocks inside call K (0-based). */
  const char* block = getenv("DRIVER_BLOCK_AT");
  long block_at = block != NULL ? atol(block) : -1;
  void (*arm)(void) = block != NULL ? (void (*)(void))dlsym(RTLD_DEFAULT, "denpex_test_block_next_vsnprintf") : NULL;
  for (long i = 0; i < calls; ++i) {
    if (i == block_at && arm != NULL) arm();
    all_reduce(NULL, NULL, i == diverge_at ? 1000 : 1024, kFloat32, kSum, comm, NULL);
  }
  if (getenv("DRIVER_WAIT") != NULL) wait_for_signal();
  printf("done\n");
  return 0;
}

static int all(void) {
  Comm comm = init_rank(0, 2);
  UniqueId ids[2];
  memset(ids, 'S', sizeof ids);
  Comm cfg = NULL, scalable = NULL, split = NULL, shrunk = NULL, pair[2] = {NULL, NULL};
  int devs[2] = {0, 1}, exclude[1] = {1};
  ((InitRankConfigFn)sym("ncclCommInitRankConfig"))(&cfg, 2, ids[0], 0, NULL);
  ((InitScalableFn)sym("ncclCommInitRankScalable"))(&scalable, 2, 0, 2, ids, NULL);
  ((InitAllFn)sym("ncclCommInitAll"))(pair, 2, devs);
  ((SplitFn)sym("ncclCommSplit"))(comm, 0, 0, &split, NULL);
  ((GroupFn)sym("ncclGroupStart"))();
  ((GroupFn)sym("ncclGroupStart"))();
  ((SendFn)sym("ncclSend"))(NULL, 8, kFloat32, 1, comm, NULL);
  ((SendFn)sym("ncclRecv"))(NULL, 8, kFloat32, 1, comm, NULL);
  ((GroupFn)sym("ncclGroupEnd"))();
  ((AllReduceFn)sym("ncclAllReduce"))(NULL, NULL, 4, kFloat32, kSum, comm, NULL);
  ((GroupFn)sym("ncclGroupEnd"))();
  ((RootedFn)sym("ncclBroadcast"))(NULL, NULL, 4, kFloat32, 0, comm, NULL);
  ((BcastFn)sym("ncclBcast"))(NULL, 4, kFloat32, 0, comm, NULL);
  ((ReduceFn)sym("ncclReduce"))(NULL, NULL, 4, kFloat32, kSum, 0, comm, NULL);
  ((AllGatherFn)sym("ncclAllGather"))(NULL, NULL, 4, kFloat32, comm, NULL);
  ((AllReduceFn)sym("ncclReduceScatter"))(NULL, NULL, 4, kFloat32, kSum, comm, NULL);
  ((AllGatherFn)sym("ncclAlltoAll"))(NULL, NULL, 4, kFloat32, comm, NULL);
  ((RootedFn)sym("ncclGather"))(NULL, NULL, 4, kFloat32, 0, comm, NULL);
  ((RootedFn)sym("ncclScatter"))(NULL, NULL, 4, kFloat32, 0, comm, NULL);
  ((AllReduceFn)sym("ncclAllReduce"))(NULL, NULL, 4, kFloat32, kSum, split, NULL);
  /* The real NCCL 2.28.9 dereferences a null parent in ncclCommShrink (SIGSEGV); without a GPU its
   * inits leave the communicator null, so the real-NCCL run records a failed Split instead. */
  if (comm != NULL) ((ShrinkFn)sym("ncclCommShrink"))(comm, exclude, 1, &shrunk, NULL, 0);
  ((RevokeFn)sym("ncclCommRevoke"))(shrunk, 0);
  ((CommFn)sym("ncclCommAbort"))(shrunk);
  ((CommFn)sym("ncclCommFinalize"))(comm);
  ((CommFn)sym("ncclCommDestroy"))(comm);
  printf("done\n");
  return 0;
}

static int group(void) {
  Comm comm = init_rank(0, 2);
  ((GroupFn)sym("ncclGroupStart"))();
  ((SendFn)sym("ncclSend"))(NULL, 8, kFloat32, 1, comm, NULL);
  ((SendFn)sym("ncclRecv"))(NULL, 8, kFloat32, 1, comm, NULL);
  ((GroupFn)sym("ncclGroupEnd"))();
  printf("done\n");
  return 0;
}

/* 5 AllReduce, then ncclCommShrink on a null parent: the real NCCL 2.28.9 dereferences it
 * (SIGSEGV), so the process dies inside an NCCL call. Returns 3 if it did not crash. */
static int shrink_null(void) {
  Comm comm = init_rank(0, 1);
  for (int i = 0; i < 5; ++i) ((AllReduceFn)sym("ncclAllReduce"))(NULL, NULL, 8, kFloat32, kSum, comm, NULL);
  Comm shrunk = NULL;
  int exclude[1] = {1};
  ((ShrinkFn)sym("ncclCommShrink"))(NULL, exclude, 1, &shrunk, NULL, 0);
  printf("no crash\n");
  return 3;
}

/* 4 threads, each with its own communicator, 50,000 AllReduce each at the same time. */
static void* thread_calls(void* arg) {
  int t = (int)(long)arg;
  UniqueId id;
  memset(&id, 'T' + t, sizeof id);
  Comm comm = NULL;
  ((InitRankFn)sym("ncclCommInitRank"))(&comm, 1, id, 0);
  AllReduceFn all_reduce = (AllReduceFn)sym("ncclAllReduce");
  for (int i = 0; i < 50000; ++i) all_reduce(NULL, NULL, 100 + t, kFloat32, kSum, comm, NULL);
  return NULL;
}

static int threads(void) {
  pthread_t th[4];
  for (long t = 0; t < 4; ++t) pthread_create(&th[t], NULL, thread_calls, (void*)t);
  for (int t = 0; t < 4; ++t) pthread_join(th[t], NULL);
  printf("done\n");
  return 0;
}

/* init + 3 AllReduce, fork; the child makes 2 and exits; then the parent makes 1 more. */
static int forked(void) {
  Comm comm = init_rank(0, 1);
  AllReduceFn all_reduce = (AllReduceFn)sym("ncclAllReduce");
  for (int i = 0; i < 3; ++i) all_reduce(NULL, NULL, 8, kFloat32, kSum, comm, NULL);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 2; ++i) all_reduce(NULL, NULL, 16, kFloat32, kSum, comm, NULL);
    printf("child %d\n", (int)getpid());
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  all_reduce(NULL, NULL, 8, kFloat32, kSum, comm, NULL);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

static int private_handle(void) {
  void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return kSkip;
  AllReduceFn f = (AllReduceFn)dlsym(h, "ncclAllReduce");
  if (f == NULL) return kSkip;
  for (int i = 0; i < 10; ++i) f(NULL, NULL, 1024, kFloat32, kSum, NULL, NULL);
  wait_for_signal();
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: trace_driver loop|all|group|private ...\n");
    return 2;
  }
  if (strcmp(argv[1], "private") == 0) return private_handle();
  if (dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL) == NULL) {
    fprintf(stderr, "trace_driver: libnccl.so.2 not loadable: %s\n", dlerror());
    return kSkip;
  }
  if (strcmp(argv[1], "loop") == 0 && argc >= 5)
    return loop(atoi(argv[2]), atoi(argv[3]), atol(argv[4]), argc > 5 ? atol(argv[5]) : -1);
  if (strcmp(argv[1], "all") == 0) return all();
  if (strcmp(argv[1], "group") == 0) return group();
  if (strcmp(argv[1], "shrink_null") == 0) return shrink_null();
  if (strcmp(argv[1], "fork") == 0) return forked();
  if (strcmp(argv[1], "threads") == 0) return threads();
  fprintf(stderr, "trace_driver: bad arguments\n");
  return 2;
}
