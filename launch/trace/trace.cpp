// libdenpex-trace.so: an LD_PRELOAD recorder of NCCL collective and point-to-point calls.
//
// Every interposed ncclX records one JSON line and forwards the call unchanged to the next
// definition in lookup order (dlsym(RTLD_NEXT)), i.e. the real libnccl. Lines go to
// $DENPEX_TRACE_DIR/denpex-trace.<host>.<pid>.jsonl (current directory when unset), schema
// "denpex.trace.v1":
//   {"schema":"denpex.trace.v1","host":..,"pid":..,"rank":..}             first line (rank from the launcher, -1 if none)
//   {"ev":"comm","comm":ID,"handle":..,"rank":r,"nranks":n,"how":..,"status":s[,"parent":ID,"color":c,"split":k]}
//   {"ev":"call","comm":ID,"seq":q,"op":..,"count":..,"dtype":..,"redop":..,"root":..,"peer":..,"rank":r,"nranks":n}
//   {"ev":"group_start"} / {"ev":"group_end"}
// ID is identical on every rank of a communicator: a hash of the ncclUniqueId bytes and the size,
// or for a split, of the parent's ID, the colour and how many splits of that parent came before
// (ncclCommSplit is collective over the parent, so that count agrees across ranks). `seq` numbers
// calls per communicator across all types, because NCCL's own counters are per type.
//
// Calls are recorded before they are forwarded, so a call that hangs is in the trace.
//
// The NCCL types are declared here rather than taken from nccl.h: nccl.h pulls in the CUDA runtime
// headers, and the recorder must build where CUDA is absent. The declarations match the NCCL ABI
// (enums are int, ncclUniqueId is 128 bytes passed by value, handles are pointers).
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

extern "C" {
typedef int ncclResult_t;
typedef struct ncclComm* ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclConfig ncclConfig_t;
typedef void* cudaStream_t;
}

namespace {

constexpr ncclResult_t kNcclInternalError = 3;  // returned when the real symbol cannot be found
constexpr int kMaxComms = 1024;
constexpr size_t kBufBytes = 1 << 20;  // bounded memory: flushed to the file when full
constexpr size_t kMaxLine = 512;

enum Fn {
  kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kSend, kRecv, kGroupStart,
  kGroupEnd, kCommInitRank, kCommInitRankConfig, kCommInitAll, kCommSplit, kNumFns
};
constexpr const char* kFnNames[kNumFns] = {
    "ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclReduce",
    "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclCommInitRank",
    "ncclCommInitRankConfig", "ncclCommInitAll", "ncclCommSplit"};

struct CommEntry {
  const void* handle;
  uint64_t id;
  int rank;
  int nranks;
  uint64_t next_seq;
  int splits;  // how many ncclCommSplit calls used this communicator as parent
};

// The recorder's whole state. An LD_PRELOAD library has no owner to hand an object to: the
// interposed C entry points and the signal handler can only reach state through a static. It is
// kept in this one struct. It has no initialisers on purpose: static storage is zeroed before any
// code runs, whereas a C++ dynamic initialiser could run after our constructor (or after another
// library's constructor already called into NCCL) and wipe what was recorded. All-zero is a valid
// empty state (glibc's PTHREAD_MUTEX_INITIALIZER is all zeros); `fd_open` guards the zero fd.
struct TraceState {
  pthread_mutex_t mu;
  std::atomic<void*> real[kNumFns];
  CommEntry comms[kMaxComms];
  int ncomms;
  int next_evict;
  uint64_t initall_calls;
  char buf[kBufBytes];
  std::atomic<size_t> used;  // bytes of complete lines in buf; what a signal handler may write
  int fd;
  bool fd_open;
  bool header_written;
  char path[PATH_MAX];
  char header[kMaxLine];
  char host[256];
  struct sigaction old_actions[NSIG];
};

TraceState g_state;

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGQUIT, SIGHUP};

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

int launcher_rank() {
  // Why these: Open MPI, PMIx, MPICH/PMI, Slurm, torchrun. The first one set wins.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') return atoi(v);
  }
  return -1;
}

// (Re)computes the file name and header for the current pid; called at load and in a forked child,
// which must not append the parent's records to the parent's file.
void init_identity(TraceState& s) {
  if (gethostname(s.host, sizeof s.host - 1) != 0) strcpy(s.host, "unknown");
  const char* dir = getenv("DENPEX_TRACE_DIR");
  if (dir == nullptr || *dir == '\0') dir = ".";
  int pid = static_cast<int>(getpid());
  auto r = fmt::format_to_n(s.path, sizeof s.path - 1, "{}/denpex-trace.{}.{}.jsonl", dir, s.host, pid);
  *r.out = '\0';
  auto h = fmt::format_to_n(s.header, sizeof s.header - 2,
                            "{{\"schema\":\"denpex.trace.v1\",\"host\":\"{}\",\"pid\":{},\"rank\":{}}}\n",
                            s.host, pid, launcher_rank());
  *h.out = '\0';
  s.used.store(0);
  if (s.fd_open) close(s.fd);
  s.fd_open = false;
  s.header_written = false;
}

// Writes the buffered complete lines. Async-signal-safe (open/write only) so the fatal-signal
// handler can call it; a failure to write is silent because there is nobody left to tell.
void flush_locked(TraceState& s) {
  size_t n = s.used.load();
  if (n == 0) return;
  if (!s.fd_open) {
    s.fd = open(s.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    s.fd_open = s.fd >= 0;
  }
  if (!s.fd_open) return;
  if (!s.header_written) {
    s.header_written = true;
    if (write(s.fd, s.header, strlen(s.header)) < 0) return;
  }
  size_t off = 0;
  while (off < n) {
    ssize_t w = write(s.fd, s.buf + off, n - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  s.used.store(0);
}

// Appends one formatted line. REQUIRES: s.mu held.
template <typename... Args>
void append_locked(TraceState& s, fmt::format_string<Args...> f, Args&&... args) {
  if (s.used.load() + kMaxLine > kBufBytes) flush_locked(s);
  size_t at = s.used.load();
  auto r = fmt::format_to_n(s.buf + at, kMaxLine - 1, f, std::forward<Args>(args)...);
  size_t len = static_cast<size_t>(r.out - (s.buf + at));
  s.buf[at + len] = '\n';
  s.used.store(at + len + 1);  // published only once the line is complete
}

void on_fatal_signal(int sig) {
  flush_locked(g_state);  // without the lock: the interrupted thread may hold it
  sigaction(sig, &g_state.old_actions[sig], nullptr);
  raise(sig);
}

void on_fork_child() {
  pthread_mutex_init(&g_state.mu, nullptr);
  init_identity(g_state);
}

__attribute__((constructor)) void trace_load() {
  init_identity(g_state);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, &g_state.old_actions[sig]);
}

__attribute__((destructor)) void trace_unload() {
  pthread_mutex_lock(&g_state.mu);
  flush_locked(g_state);
  pthread_mutex_unlock(&g_state.mu);
}

template <typename F>
F real_fn(Fn which) {
  void* p = g_state.real[which].load(std::memory_order_acquire);
  if (p == nullptr) {
    p = dlsym(RTLD_NEXT, kFnNames[which]);
    g_state.real[which].store(p, std::memory_order_release);
  }
  return reinterpret_cast<F>(p);
}

// REQUIRES: s.mu held. Returns nullptr for a handle no intercepted init produced.
CommEntry* find_comm_locked(TraceState& s, const void* handle) {
  for (int i = s.ncomms - 1; i >= 0; --i)
    if (s.comms[i].handle == handle) return &s.comms[i];
  return nullptr;
}

// A handle is registered even when the init failed: NCCL leaves the caller's handle untouched on
// failure and a program that ignores the error keeps calling with it; recording those calls is
// what shows the divergence (and is how the GPU-less tests run). Handle reuse after
// ncclCommDestroy replaces the entry. REQUIRES: s.mu held.
CommEntry* register_comm_locked(TraceState& s, const void* handle, uint64_t id, int rank, int nranks) {
  CommEntry* e = find_comm_locked(s, handle);
  if (e == nullptr) {
    if (s.ncomms < kMaxComms) {
      e = &s.comms[s.ncomms++];
    } else {
      e = &s.comms[s.next_evict];
      s.next_evict = (s.next_evict + 1) % kMaxComms;
    }
  }
  *e = CommEntry{handle, id, rank, nranks, 0, 0};
  return e;
}

const char* kind_name(Fn f) { return kFnNames[f] + 4; }  // "ncclAllReduce" -> "AllReduce"

void record_call(Fn f, const void* handle, size_t count, int dtype, int redop, int root, int peer) {
  TraceState& s = g_state;
  pthread_mutex_lock(&s.mu);
  CommEntry* e = find_comm_locked(s, handle);
  if (e == nullptr) {
    // A communicator made by a call we do not intercept: process-local identity only.
    append_locked(s, "{{\"ev\":\"call\",\"comm\":\"local:{}\",\"seq\":-1,\"op\":\"{}\",\"count\":{},\"dtype\":{},"
                  "\"redop\":{},\"root\":{},\"peer\":{},\"rank\":-1,\"nranks\":-1}}",
                  fmt::ptr(handle), kind_name(f), count, dtype, redop, root, peer);
  } else {
    append_locked(s, "{{\"ev\":\"call\",\"comm\":\"{:016x}\",\"seq\":{},\"op\":\"{}\",\"count\":{},\"dtype\":{},"
                  "\"redop\":{},\"root\":{},\"peer\":{},\"rank\":{},\"nranks\":{}}}",
                  e->id, e->next_seq++, kind_name(f), count, dtype, redop, root, peer, e->rank, e->nranks);
  }
  pthread_mutex_unlock(&s.mu);
}

void record_event(const char* ev) {
  pthread_mutex_lock(&g_state.mu);
  append_locked(g_state, "{{\"ev\":\"{}\"}}", ev);
  pthread_mutex_unlock(&g_state.mu);
}

void record_init(const char* how, const void* handle, uint64_t id, int rank, int nranks, ncclResult_t status) {
  TraceState& s = g_state;
  pthread_mutex_lock(&s.mu);
  register_comm_locked(s, handle, id, rank, nranks);
  append_locked(s, "{{\"ev\":\"comm\",\"comm\":\"{:016x}\",\"handle\":\"{}\",\"rank\":{},\"nranks\":{},\"how\":\"{}\",\"status\":{}}}",
                id, fmt::ptr(handle), rank, nranks, how, status);
  pthread_mutex_unlock(&s.mu);
}

uint64_t unique_id_hash(const ncclUniqueId& uid, int nranks) {
  uint64_t h = fnv1a(kFnvBasis, uid.internal, sizeof uid.internal);
  return fnv1a(h, &nranks, sizeof nranks);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ncclResult_t ncclAllReduce(
    const void* sendbuff, void* recvbuff, size_t count, int datatype, int op, ncclComm_t comm, cudaStream_t stream) {
  record_call(kAllReduce, comm, count, datatype, op, -1, -1);
  auto f = real_fn<ncclResult_t (*)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t)>(kAllReduce);
  return f ? f(sendbuff, recvbuff, count, datatype, op, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclAllGather(
    const void* sendbuff, void* recvbuff, size_t sendcount, int datatype, ncclComm_t comm, cudaStream_t stream) {
  record_call(kAllGather, comm, sendcount, datatype, -1, -1, -1);
  auto f = real_fn<ncclResult_t (*)(const void*, void*, size_t, int, ncclComm_t, cudaStream_t)>(kAllGather);
  return f ? f(sendbuff, recvbuff, sendcount, datatype, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclReduceScatter(
    const void* sendbuff, void* recvbuff, size_t recvcount, int datatype, int op, ncclComm_t comm, cudaStream_t stream) {
  record_call(kReduceScatter, comm, recvcount, datatype, op, -1, -1);
  auto f = real_fn<ncclResult_t (*)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t)>(kReduceScatter);
  return f ? f(sendbuff, recvbuff, recvcount, datatype, op, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclBroadcast(
    const void* sendbuff, void* recvbuff, size_t count, int datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  record_call(kBroadcast, comm, count, datatype, -1, root, -1);
  auto f = real_fn<ncclResult_t (*)(const void*, void*, size_t, int, int, ncclComm_t, cudaStream_t)>(kBroadcast);
  return f ? f(sendbuff, recvbuff, count, datatype, root, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclReduce(
    const void* sendbuff, void* recvbuff, size_t count, int datatype, int op, int root, ncclComm_t comm,
    cudaStream_t stream) {
  record_call(kReduce, comm, count, datatype, op, root, -1);
  auto f = real_fn<ncclResult_t (*)(const void*, void*, size_t, int, int, int, ncclComm_t, cudaStream_t)>(kReduce);
  return f ? f(sendbuff, recvbuff, count, datatype, op, root, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclSend(
    const void* sendbuff, size_t count, int datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  record_call(kSend, comm, count, datatype, -1, -1, peer);
  auto f = real_fn<ncclResult_t (*)(const void*, size_t, int, int, ncclComm_t, cudaStream_t)>(kSend);
  return f ? f(sendbuff, count, datatype, peer, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclRecv(
    void* recvbuff, size_t count, int datatype, int peer, ncclComm_t comm, cudaStream_t stream) {
  record_call(kRecv, comm, count, datatype, -1, -1, peer);
  auto f = real_fn<ncclResult_t (*)(void*, size_t, int, int, ncclComm_t, cudaStream_t)>(kRecv);
  return f ? f(recvbuff, count, datatype, peer, comm, stream) : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclGroupStart() {
  record_event("group_start");
  auto f = real_fn<ncclResult_t (*)()>(kGroupStart);
  return f ? f() : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclGroupEnd() {
  record_event("group_end");
  auto f = real_fn<ncclResult_t (*)()>(kGroupEnd);
  return f ? f() : kNcclInternalError;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRank(
    ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  auto f = real_fn<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int)>(kCommInitRank);
  ncclResult_t r = f ? f(comm, nranks, commId, rank) : kNcclInternalError;
  if (comm != nullptr) record_init("InitRank", *comm, unique_id_hash(commId, nranks), rank, nranks, r);
  return r;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRankConfig(
    ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  auto f = real_fn<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*)>(kCommInitRankConfig);
  ncclResult_t r = f ? f(comm, nranks, commId, rank, config) : kNcclInternalError;
  if (comm != nullptr) record_init("InitRankConfig", *comm, unique_id_hash(commId, nranks), rank, nranks, r);
  return r;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  auto f = real_fn<ncclResult_t (*)(ncclComm_t*, int, const int*)>(kCommInitAll);
  ncclResult_t r = f ? f(comms, ndev, devlist) : kNcclInternalError;
  if (comms == nullptr || ndev <= 0) return r;
  // Single-process clique: every member lives here, so a process-unique identity suffices.
  uint64_t id = fnv1a(kFnvBasis, g_state.host, strlen(g_state.host));
  pid_t pid = getpid();
  id = fnv1a(id, &pid, sizeof pid);
  pthread_mutex_lock(&g_state.mu);
  uint64_t nth = g_state.initall_calls++;
  pthread_mutex_unlock(&g_state.mu);
  id = fnv1a(id, &nth, sizeof nth);
  id = fnv1a(id, &ndev, sizeof ndev);
  for (int i = 0; i < ndev; ++i) record_init("InitAll", comms[i], id, i, ndev, r);
  return r;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommSplit(
    ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  auto f = real_fn<ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*)>(kCommSplit);
  ncclResult_t r = f ? f(comm, color, key, newcomm, config) : kNcclInternalError;
  TraceState& s = g_state;
  pthread_mutex_lock(&s.mu);
  CommEntry* parent = find_comm_locked(s, comm);
  uint64_t parent_id = parent ? parent->id : 0;
  int nth = parent ? parent->splits++ : 0;
  pthread_mutex_unlock(&s.mu);
  if (newcomm == nullptr || *newcomm == nullptr) return r;  // NCCL_SPLIT_NOCOLOR: no new communicator
  uint64_t id = fnv1a(fnv1a(fnv1a(parent_id, &color, sizeof color), &nth, sizeof nth), "split", 5);
  // Rank and size inside the split are only known to NCCL; -1 until a call names them.
  int rank = -1, nranks = -1;
  using CountFn = ncclResult_t (*)(const ncclComm_t, int*);
  if (r == 0) {
    auto user_rank = reinterpret_cast<CountFn>(dlsym(RTLD_NEXT, "ncclCommUserRank"));
    auto count = reinterpret_cast<CountFn>(dlsym(RTLD_NEXT, "ncclCommCount"));
    if (user_rank) user_rank(*newcomm, &rank);
    if (count) count(*newcomm, &nranks);
  }
  pthread_mutex_lock(&s.mu);
  register_comm_locked(s, *newcomm, id, rank, nranks);
  append_locked(s, "{{\"ev\":\"comm\",\"comm\":\"{:016x}\",\"handle\":\"{}\",\"rank\":{},\"nranks\":{},\"how\":\"Split\","
                "\"status\":{},\"parent\":\"{:016x}\",\"color\":{},\"split\":{}}}",
                id, fmt::ptr(*newcomm), rank, nranks, r, parent_id, color, nth);
  pthread_mutex_unlock(&s.mu);
  return r;
}

}  // extern "C"
