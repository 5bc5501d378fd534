// libdenpex-trace.so: an LD_PRELOAD recorder of NCCL calls that keeps the call a hung rank is
// stuck in, even when the rank is then killed with SIGKILL.
//
// Every interposed ncclX writes one slot into a ring before it forwards the call unchanged to the
// next definition in lookup order (dlsym(RTLD_NEXT)), i.e. the real libnccl, and stamps the same
// slot with the return code and time when the call returns. The ring is a file mapped MAP_SHARED
// ($DENPEX_TRACE_DIR/denpex-trace.<host>.<pid>.trace, layout in collect/trace_format.h): a store
// into it is a store into the page cache, so nothing needs flushing and no handler needs to run
// for the record to outlive the process. A call entered and never returned stays "in flight".
//
// The file is made at the first intercepted call, or at load when NCCL is already mapped (linked
// at start-up), so a rank that loads NCCL and is killed before its first call still leaves a
// trace saying so. On exit and on a terminating signal the control block records how the process
// ended; SIGKILL leaves it "running", which the reader reports as killed.
//
// Communicator identity: identical on every rank of a communicator: a hash of the ncclUniqueId
// bytes and the size (InitRank, InitRankConfig; all the ids for InitRankScalable), or for a split
// or shrink, of the parent's identity, the colour (or the excluded ranks) and how many
// splits/shrinks of that parent came before (both are collective over the parent, so the count
// agrees across its ranks). comm_seq numbers collectives and point-to-point calls per
// communicator, coll_seq collectives only, because NCCL's own counters are per type and
// pipeline stages make different numbers of Send/Recv.
//
// The NCCL types are declared here rather than taken from nccl.h: nccl.h pulls in the CUDA runtime
// headers, and the recorder must build where CUDA is absent. The declarations match the NCCL ABI
// (enums are int, ncclUniqueId is 128 bytes passed by value, handles are pointers).
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "collect/trace_format.h"

extern "C" {
typedef int ncclResult_t;
typedef struct ncclComm* ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclConfig ncclConfig_t;
typedef void* cudaStream_t;
}

namespace {

namespace tf = denpex::trace_format;

constexpr ncclResult_t kNcclInternalError = 3;  // returned when the real symbol cannot be found
constexpr int kMaxComms = 1024;

enum Fn {
  kAllReduce, kAllGather, kReduceScatter, kBroadcast, kBcast, kReduce, kAlltoAll, kGather, kScatter,
  kSend, kRecv, kGroupStart, kGroupEnd, kCommInitRank, kCommInitRankConfig, kCommInitAll,
  kCommInitRankScalable, kCommSplit, kCommShrink, kCommFinalize, kCommDestroy, kCommAbort,
  kCommRevoke, kCommUserRank, kCommCount, kNumFns
};
constexpr const char* kFnNames[kNumFns] = {
    "ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclBcast",
    "ncclReduce", "ncclAlltoAll", "ncclGather", "ncclScatter", "ncclSend", "ncclRecv",
    "ncclGroupStart", "ncclGroupEnd", "ncclCommInitRank", "ncclCommInitRankConfig",
    "ncclCommInitAll", "ncclCommInitRankScalable", "ncclCommSplit", "ncclCommShrink",
    "ncclCommFinalize", "ncclCommDestroy", "ncclCommAbort", "ncclCommRevoke", "ncclCommUserRank",
    "ncclCommCount"};

struct CommEntry {
  const void* handle;
  uint64_t id;
  int rank;
  int nranks;
  int64_t next_seq;   // collectives + point-to-point
  int64_t next_coll;  // collectives only
  int splits;         // ncclCommSplit calls with this communicator as parent
  int shrinks;        // ncclCommShrink calls with this communicator as parent
};

enum FileState : int { kFileNone = 0, kFileCreating = 1, kFileReady = 2, kFileFailed = 3 };

// The recorder's whole state. An LD_PRELOAD library has no owner to hand an object to: the
// interposed C entry points and the signal handler can only reach state through a static. It is
// kept in this one struct. It has no initialisers on purpose: static storage is zeroed before any
// code runs, whereas a C++ dynamic initialiser could run after our constructor (or after another
// library's constructor already called into NCCL) and wipe what was recorded. All-zero is a valid
// empty state (glibc's PTHREAD_MUTEX_INITIALIZER is all zeros).
struct TraceState {
  pthread_mutex_t mu;  // guards comms and the claiming and stamping of slots
  std::atomic<void*> real[kNumFns];
  CommEntry comms[kMaxComms];
  int ncomms;
  int next_evict;
  uint64_t initall_calls;
  std::atomic<int> file;  // FileState
  void* map;
  size_t map_bytes;
  tf::TraceControl* ctl;
  tf::TraceSlot* ring;  // nullptr when the file has no ring (made at exit or on a signal)
  uint64_t mask;
  uint64_t slots;       // wanted ring size, from DENPEX_TRACE_SLOTS
  int rank;
  char path[PATH_MAX];
  char host[256];
  bool handled[NSIG];
  struct sigaction old_actions[NSIG];
};

TraceState g_state;

// Thread-local: NCCL's group depth is per thread. Constant-initialised, so no TLS guard.
// initial-exec: a preloaded library's TLS is static, and the general model's __tls_get_addr was
// 7 % of a traced call; 12 bytes fit glibc's surplus should the library be dlopen'ed instead.
#define DENPEX_TLS thread_local __attribute__((tls_model("initial-exec")))
DENPEX_TLS int t_tid;
DENPEX_TLS int t_depth;
// Intercepted calls this thread is inside. NCCL calls its own exported entry points through the
// PLT (ncclBcast calls ncclBroadcast), so the interposer sees them again; only the outermost call
// is the program's and is recorded.
DENPEX_TLS int t_inside;

// Terminating signals whose default action ends the process; SIGKILL cannot be caught and needs
// nothing (the mapping already holds every record).
constexpr int kEndSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGQUIT, SIGHUP};

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

// The kernel tick's clock (1-4 ms resolution): a hang is measured in seconds, and the precise
// clock costs 100+ ns per read in a VM, twice per call.
uint64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

int this_tid() {
  if (t_tid == 0) t_tid = static_cast<int>(syscall(SYS_gettid));
  return t_tid;
}

int launcher_rank() {
  // torchrun's workers (TORCHELASTIC_RUN_ID set) carry their job rank in RANK; the Slurm or MPI
  // rank they inherit from `srun torchrun` is the node's, shared by all its workers.
  const char* elastic = getenv("TORCHELASTIC_RUN_ID");
  const char* rank = getenv("RANK");
  if (elastic != nullptr && rank != nullptr && *rank != '\0') return atoi(rank);
  // Why these: Open MPI, PMIx, MPICH/PMI, Slurm, torchrun. The first one set wins.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') return atoi(v);
  }
  return -1;
}

uint64_t wanted_slots() {
  const char* v = getenv("DENPEX_TRACE_SLOTS");
  uint64_t want = tf::kDefaultSlots;
  if (v != nullptr && *v != '\0') {
    char* end = nullptr;
    unsigned long long n = strtoull(v, &end, 10);
    if (end != v && *end == '\0') want = n;
  }
  if (want < tf::kMinSlots) want = tf::kMinSlots;
  if (want > tf::kMaxSlots) want = tf::kMaxSlots;
  uint64_t p = tf::kMinSlots;
  while (p < want) p <<= 1;
  return p;
}

// (Re)computes the file name for the current pid; called at load and in a forked child, which must
// not write into the parent's file.
void init_identity(TraceState& s) {
  if (gethostname(s.host, sizeof s.host - 1) != 0) strcpy(s.host, "unknown");
  const char* dir = getenv("DENPEX_TRACE_DIR");
  if (dir == nullptr || *dir == '\0') dir = ".";
  auto r = fmt::format_to_n(s.path, sizeof s.path - 1, "{}/denpex-trace.{}.{}.trace", dir, s.host,
                            static_cast<int>(getpid()));
  *r.out = '\0';
  s.rank = launcher_rank();
  s.slots = wanted_slots();
}

// Finds a loaded NCCL in /proc/self/maps: a libnccl.so*, else libtorch_cuda.so (which then holds
// NCCL linked in statically). Only open/read/close: the signal handler calls it. False if none.
bool find_nccl_mapping(char* out, size_t cap) {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[8192];
  size_t have = 0;
  bool torch = false;
  bool found = false;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n <= 0) break;
    have += static_cast<size_t>(n);
    size_t start = 0;
    for (size_t i = 0; i < have; ++i) {
      if (buf[i] != '\n') continue;
      buf[i] = '\0';
      const char* line = buf + start;
      const char* path = strchr(line, '/');
      start = i + 1;
      if (path == nullptr) continue;
      const char* base = strrchr(path, '/') + 1;
      bool nccl = strncmp(base, "libnccl.so", 10) == 0;
      bool tc = !nccl && !torch && strncmp(base, "libtorch_cuda.so", 16) == 0;
      if (nccl || tc) {
        size_t len = strnlen(path, cap - 1);
        memcpy(out, path, len);
        out[len] = '\0';
        found = true;
        torch = tc;
        if (nccl) {
          close(fd);
          return true;
        }
      }
    }
    if (start == 0 && have == sizeof buf) have = 0;  // a line longer than the buffer: drop it
    memmove(buf, buf + start, have - start);
    have -= start;
  }
  close(fd);
  return found;
}

// Makes and maps the trace file with `slots` slots (0: header and control only). Uses only
// system calls and fmt into fixed buffers, so the signal handler may call it. False on failure.
//
// The blocks are reserved up front (posix_fallocate): a store into a hole of a shared mapping on a
// full filesystem is a SIGBUS in the traced program. A file size limit (ulimit -f) makes the
// reservation fail with SIGXFSZ, whose default action would end the program: it is blocked in this
// thread meanwhile and the one our call raised is consumed.
bool create_file(TraceState& s, uint64_t slots) {
  size_t bytes = static_cast<size_t>(tf::kRingOffset + slots * tf::kSlotBytes);
  int fd = open(s.path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  sigset_t xfsz, old, pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGXFSZ) == 1;
  int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (!was_pending) {
    struct timespec zero = {0, 0};
    sigtimedwait(&xfsz, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  void* map = MAP_FAILED;
  if (err == 0) map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  else errno = err;
  err = errno;
  close(fd);
  if (map == MAP_FAILED) {
    unlink(s.path);
    errno = err;
    return false;
  }
  auto* base = static_cast<char*>(map);
  uint64_t created = now_ns();
  int pid = static_cast<int>(getpid());
  auto h = fmt::format_to_n(base, tf::kHeaderBytes - 1,
                            "{{\"schema\":\"{}\",\"host\":\"{}\",\"pid\":{},\"rank\":{},\"slots\":{},"
                            "\"slot_bytes\":{},\"ring_offset\":{},\"created_ns\":{}}}",
                            tf::kSchemaV2, s.host, pid, s.rank, slots, tf::kSlotBytes, tf::kRingOffset,
                            created);
  memset(h.out, ' ', static_cast<size_t>(base + tf::kHeaderBytes - 1 - h.out));
  base[tf::kHeaderBytes - 1] = '\n';
  auto* ctl = reinterpret_cast<tf::TraceControl*>(base + tf::kHeaderBytes);
  memcpy(ctl->magic, tf::kMagic, sizeof ctl->magic);
  ctl->version = tf::kVersion;
  ctl->slot_bytes = tf::kSlotBytes;
  ctl->slots = slots;
  ctl->ring_offset = tf::kRingOffset;
  ctl->created_ns = created;
  ctl->pid = pid;
  ctl->rank = s.rank;
  find_nccl_mapping(ctl->nccl_mapped, sizeof ctl->nccl_mapped);
  s.map = map;
  s.map_bytes = bytes;
  s.ring = slots > 0 ? reinterpret_cast<tf::TraceSlot*>(base + tf::kRingOffset) : nullptr;
  s.mask = slots > 0 ? slots - 1 : 0;
  __atomic_store_n(&s.ctl, ctl, __ATOMIC_RELEASE);
  return true;
}

// True when the file is mapped. The first caller makes it; a failure is said once on stderr and
// never retried (nobody else will tell the user that nothing is recorded), except in a signal
// handler, where strerror (locale, allocation) is not safe to call.
bool ensure_file(TraceState& s, uint64_t slots, bool in_handler = false) {
  int st = s.file.load(std::memory_order_acquire);
  if (st == kFileReady) return true;
  if (st != kFileNone || !s.file.compare_exchange_strong(st, kFileCreating)) return false;
  if (create_file(s, slots)) {
    s.file.store(kFileReady, std::memory_order_release);
    return true;
  }
  int err = errno;
  s.file.store(kFileFailed, std::memory_order_release);
  if (in_handler) return false;
  char msg[PATH_MAX + 160];
  auto r = fmt::format_to_n(msg, sizeof msg - 1,
                            "libdenpex-trace.so: cannot create {}: {}; NCCL calls of this process are not recorded "
                            "(set DENPEX_TRACE_DIR to a writable directory)\n",
                            s.path, strerror(err));
  if (write(2, msg, static_cast<size_t>(r.out - msg)) < 0) return false;
  return false;
}

// How the process ended. Async-signal-safe (stores, and the file creation above); a file is made
// here only when NCCL is mapped, so that a rank whose calls the recorder never saw says so.
void close_trace(TraceState& s, uint32_t state, int sig) {
  if (s.file.load(std::memory_order_acquire) == kFileNone) {
    char lib[256];
    if (!find_nccl_mapping(lib, sizeof lib) || !ensure_file(s, 0, state == tf::kStateSignalled)) return;
  }
  tf::TraceControl* ctl = __atomic_load_n(&s.ctl, __ATOMIC_ACQUIRE);
  if (ctl == nullptr) return;
  if (ctl->nccl_mapped[0] == '\0') find_nccl_mapping(ctl->nccl_mapped, sizeof ctl->nccl_mapped);
  ctl->signal = sig;
  __atomic_store_n(&ctl->ended_ns, now_ns(), __ATOMIC_RELAXED);
  __atomic_store_n(&ctl->state, state, __ATOMIC_RELEASE);
}

void on_end_signal(int sig) {
  int saved = errno;
  close_trace(g_state, tf::kStateSignalled, sig);
  // The previous disposition takes over for good: the default action ends the process when the
  // signal is raised again on return; a program's own handler runs as if we were not there.
  sigaction(sig, &g_state.old_actions[sig], nullptr);
  raise(sig);
  errno = saved;
}

void on_fork_child() {
  TraceState& s = g_state;
  pthread_mutex_init(&s.mu, nullptr);
  // The parent's mapping is shared with the parent: the child gets its own file, made lazily.
  if (s.map != nullptr) munmap(s.map, s.map_bytes);
  s.map = nullptr;
  s.ctl = nullptr;
  s.ring = nullptr;
  s.file.store(kFileNone);
  t_tid = 0;
  init_identity(s);
}

__attribute__((constructor)) void trace_load() {
  TraceState& s = g_state;
  init_identity(s);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_end_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kEndSignals) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // nohup's SIGHUP (and any other ignored signal) stays ignored: a handler would end the process.
    if (old.sa_handler == SIG_IGN) continue;
    s.old_actions[sig] = old;
    s.handled[sig] = sigaction(sig, &sa, nullptr) == 0;
  }
  char lib[256];
  if (find_nccl_mapping(lib, sizeof lib)) ensure_file(s, s.slots);
}

__attribute__((destructor)) void trace_unload() { close_trace(g_state, tf::kStateExited, 0); }

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
void register_comm_locked(TraceState& s, const void* handle, uint64_t id, int rank, int nranks) {
  CommEntry* e = find_comm_locked(s, handle);
  if (e == nullptr) {
    if (s.ncomms < kMaxComms) {
      e = &s.comms[s.ncomms++];
    } else {
      e = &s.comms[s.next_evict];
      s.next_evict = (s.next_evict + 1) % kMaxComms;
    }
  }
  *e = CommEntry{handle, id, rank, nranks, 0, 0, 0, 0};
}

void register_comm(const void* handle, uint64_t id, int rank, int nranks) {
  pthread_mutex_lock(&g_state.mu);
  register_comm_locked(g_state, handle, id, rank, nranks);
  pthread_mutex_unlock(&g_state.mu);
}

// What one slot is filled with at entry; the fields of tf::TraceSlot set before the call.
struct Entry {
  int32_t op = tf::kOpNone;
  uint64_t comm = 0;
  uint32_t flags = 0;
  int64_t comm_seq = -1;
  int64_t coll_seq = -1;
  uint64_t count = 0;
  uint64_t parent = 0;
  int32_t dtype = -1, redop = -1, root = -1, peer = -1, rank = -1, nranks = -1, depth = 0, aux = 0;
};

// A claimed slot, to stamp at return. slot == nullptr: nothing was recorded.
struct Entered {
  tf::TraceSlot* slot = nullptr;
  uint64_t seq = 0;
};

// Writes `e` into the next slot: seq 0 first, the fields, then the sequence number, so that a
// kill between the stores leaves a torn slot, never a mix of two calls. REQUIRES: s.mu held.
Entered enter_locked(TraceState& s, const Entry& e, uint64_t t_enter) {
  if (!ensure_file(s, s.slots)) return {};
  tf::TraceControl* ctl = s.ctl;
  if (s.ring == nullptr) {
    __atomic_store_n(&ctl->dropped, ctl->dropped + 1, __ATOMIC_RELAXED);
    return {};
  }
  uint64_t seq = ctl->next + 1;
  __atomic_store_n(&ctl->next, seq, __ATOMIC_RELAXED);
  tf::TraceSlot* slot = &s.ring[(seq - 1) & s.mask];
  __atomic_store_n(&slot->seq, uint64_t{0}, __ATOMIC_RELEASE);
  __atomic_store_n(&slot->t_return, uint64_t{0}, __ATOMIC_RELAXED);
  slot->t_enter = t_enter;
  slot->comm = e.comm;
  slot->comm_seq = e.comm_seq;
  slot->coll_seq = e.coll_seq;
  slot->count = e.count;
  slot->parent = e.parent;
  slot->op = e.op;
  slot->status = 0;
  slot->dtype = e.dtype;
  slot->redop = e.redop;
  slot->root = e.root;
  slot->peer = e.peer;
  slot->rank = e.rank;
  slot->nranks = e.nranks;
  slot->tid = this_tid();
  slot->depth = e.depth;
  slot->flags = e.flags;
  slot->aux = e.aux;
  __atomic_store_n(&slot->seq, seq, __ATOMIC_RELEASE);
  return {slot, seq};
}

// Every enter() and enter_call() is matched by one leave().
Entered enter(const Entry& e) {
  if (t_inside++ > 0) return {};
  uint64_t t = now_ns();
  pthread_mutex_lock(&g_state.mu);
  Entered r = enter_locked(g_state, e, t);
  pthread_mutex_unlock(&g_state.mu);
  return r;
}

// Stamps the return, unless the ring came round and the slot holds a later call by now. Rank and
// size are updated when the call told them (a split's); -2 leaves them.
void leave(const Entered& e, ncclResult_t status, int rank = -2, int nranks = -2) {
  --t_inside;
  if (e.slot == nullptr) return;
  uint64_t t = now_ns();
  pthread_mutex_lock(&g_state.mu);
  if (__atomic_load_n(&e.slot->seq, __ATOMIC_RELAXED) == e.seq) {
    e.slot->status = status;
    if (rank != -2) e.slot->rank = rank;
    if (nranks != -2) e.slot->nranks = nranks;
    __atomic_store_n(&e.slot->t_return, t, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_state.mu);
}

// A collective or point-to-point call on `handle`.
Entered enter_call(int32_t op, bool collective, const void* handle, size_t count, int dtype, int redop,
                   int root, int peer) {
  if (t_inside++ > 0) return {};
  uint64_t t = now_ns();
  TraceState& s = g_state;
  Entry e;
  e.op = op;
  e.count = count;
  e.dtype = dtype;
  e.redop = redop;
  e.root = root;
  e.peer = peer;
  e.depth = t_depth;
  pthread_mutex_lock(&s.mu);
  CommEntry* c = find_comm_locked(s, handle);
  if (c == nullptr) {
    // A communicator made by a call we do not intercept: process-local identity only.
    e.comm = reinterpret_cast<uintptr_t>(handle);
  } else {
    e.comm = c->id;
    e.flags = tf::kFlagCommKnown;
    e.comm_seq = c->next_seq++;
    if (collective) e.coll_seq = c->next_coll++;
    e.rank = c->rank;
    e.nranks = c->nranks;
  }
  Entered r = enter_locked(s, e, t);
  pthread_mutex_unlock(&s.mu);
  return r;
}

// The communicator's identity for a life-cycle call on an existing handle.
Entry comm_entry(int32_t op, const void* handle) {
  Entry e;
  e.op = op;
  e.depth = t_depth;
  pthread_mutex_lock(&g_state.mu);
  CommEntry* c = find_comm_locked(g_state, handle);
  if (c != nullptr) {
    e.comm = c->id;
    e.flags = tf::kFlagCommKnown;
    e.rank = c->rank;
    e.nranks = c->nranks;
  } else {
    e.comm = reinterpret_cast<uintptr_t>(handle);
  }
  pthread_mutex_unlock(&g_state.mu);
  return e;
}

uint64_t unique_id_hash(const ncclUniqueId& uid, int nranks) {
  uint64_t h = fnv1a(kFnvBasis, uid.internal, sizeof uid.internal);
  return fnv1a(h, &nranks, sizeof nranks);
}

// Rank and size inside a communicator NCCL made for us (split, shrink): only NCCL knows them.
void ask_rank(ncclComm_t comm, int* rank, int* nranks) {
  using CountFn = ncclResult_t (*)(const ncclComm_t, int*);
  auto user_rank = real_fn<CountFn>(kCommUserRank);
  auto count = real_fn<CountFn>(kCommCount);
  if (user_rank) user_rank(comm, rank);
  if (count) count(comm, nranks);
}

// The entry for a communicator derived from `parent` (split, shrink): identity from the parent's,
// `salt`, and how many such derivations of the parent came before.
Entry derived_entry(int32_t op, ncclComm_t parent, bool shrink, const void* salt, size_t salt_bytes) {
  Entry e;
  e.op = op;
  e.depth = t_depth;
  pthread_mutex_lock(&g_state.mu);
  CommEntry* p = find_comm_locked(g_state, parent);
  uint64_t parent_id = p ? p->id : 0;
  int nth = p ? (shrink ? p->shrinks++ : p->splits++) : 0;
  pthread_mutex_unlock(&g_state.mu);
  const char* tag = shrink ? "shrink" : "split";
  uint64_t id = fnv1a(fnv1a(fnv1a(parent_id, salt, salt_bytes), &nth, sizeof nth), tag, strlen(tag));
  e.comm = id;
  e.flags = p ? uint32_t{tf::kFlagCommKnown} : 0u;
  e.parent = parent_id;
  return e;
}

template <typename F, typename... A>
ncclResult_t forward(Fn which, A... args) {
  auto f = real_fn<F>(which);
  return f ? f(args...) : kNcclInternalError;
}

// What a collective or point-to-point call tells the recorder besides its communicator.
struct CallArgs {
  size_t count;
  int dtype;
  int redop = -1;
  int root = -1;
  int peer = -1;
};

// One intercepted call: recorded on entry, forwarded to NCCL's own `which` (of type F, the
// wrapper's own type), stamped on return.
template <typename F, typename... A>
ncclResult_t recorded_call(int32_t op, bool collective, Fn which, ncclComm_t comm, CallArgs c, A... args) {
  Entered e = enter_call(op, collective, comm, c.count, c.dtype, c.redop, c.root, c.peer);
  ncclResult_t r = forward<F>(which, args...);
  leave(e, r);
  return r;
}

}  // namespace

extern "C" {

#define DENPEX_EXPORT __attribute__((visibility("default")))

DENPEX_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, int datatype, int op,
                                         ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclAllReduce)>(
      tf::kOpAllReduce, true, kAllReduce, comm, {count, datatype, op},
      sendbuff, recvbuff, count, datatype, op, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, int datatype,
                                         ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclAllGather)>(
      tf::kOpAllGather, true, kAllGather, comm, {sendcount, datatype},
      sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, int datatype,
                                             int op, ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclReduceScatter)>(
      tf::kOpReduceScatter, true, kReduceScatter, comm, {recvcount, datatype, op},
      sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, int datatype, int root,
                                         ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclBroadcast)>(
      tf::kOpBroadcast, true, kBroadcast, comm, {count, datatype, -1, root},
      sendbuff, recvbuff, count, datatype, root, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, int datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
  return recorded_call<decltype(&ncclBcast)>(
      tf::kOpBcast, true, kBcast, comm, {count, datatype, -1, root},
      buff, count, datatype, root, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, int datatype, int op,
                                      int root, ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclReduce)>(
      tf::kOpReduce, true, kReduce, comm, {count, datatype, op, root},
      sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, int datatype,
                                        ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclAlltoAll)>(
      tf::kOpAlltoAll, true, kAlltoAll, comm, {count, datatype},
      sendbuff, recvbuff, count, datatype, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, int datatype, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclGather)>(
      tf::kOpGather, true, kGather, comm, {count, datatype, -1, root},
      sendbuff, recvbuff, count, datatype, root, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, int datatype, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  return recorded_call<decltype(&ncclScatter)>(
      tf::kOpScatter, true, kScatter, comm, {count, datatype, -1, root},
      sendbuff, recvbuff, count, datatype, root, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, int datatype, int peer, ncclComm_t comm,
                                    cudaStream_t stream) {
  return recorded_call<decltype(&ncclSend)>(
      tf::kOpSend, false, kSend, comm, {count, datatype, -1, -1, peer},
      sendbuff, count, datatype, peer, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, int datatype, int peer, ncclComm_t comm,
                                    cudaStream_t stream) {
  return recorded_call<decltype(&ncclRecv)>(
      tf::kOpRecv, false, kRecv, comm, {count, datatype, -1, -1, peer},
      recvbuff, count, datatype, peer, comm, stream);
}

DENPEX_EXPORT ncclResult_t ncclGroupStart() {
  Entry en;
  en.op = tf::kOpGroupStart;
  if (t_inside == 0) en.depth = ++t_depth;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)()>(kGroupStart);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclGroupEnd() {
  Entry en;
  en.op = tf::kOpGroupEnd;
  en.depth = t_depth;
  if (t_inside == 0 && t_depth > 0) --t_depth;
  // The grouped calls run here: a hang in a group is a GroupEnd in flight.
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)()>(kGroupEnd);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  Entry en;
  en.op = tf::kOpCommInitRank;
  en.comm = unique_id_hash(commId, nranks);
  en.flags = tf::kFlagCommKnown;
  en.rank = rank;
  en.nranks = nranks;
  en.depth = t_depth;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int)>(kCommInitRank, comm, nranks,
                                                                                   commId, rank);
  if (comm != nullptr) register_comm(*comm, en.comm, rank, nranks);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                                  ncclConfig_t* config) {
  Entry en;
  en.op = tf::kOpCommInitRankConfig;
  en.comm = unique_id_hash(commId, nranks);
  en.flags = tf::kFlagCommKnown;
  en.rank = rank;
  en.nranks = nranks;
  en.depth = t_depth;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*)>(
      kCommInitRankConfig, comm, nranks, commId, rank, config);
  if (comm != nullptr) register_comm(*comm, en.comm, rank, nranks);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                                    ncclUniqueId* commIds, ncclConfig_t* config) {
  Entry en;
  en.op = tf::kOpCommInitRankScalable;
  uint64_t id = kFnvBasis;
  if (commIds != nullptr && nId > 0) {
    for (int i = 0; i < nId; ++i) id = fnv1a(id, commIds[i].internal, sizeof commIds[i].internal);
    en.flags = tf::kFlagCommKnown;
  }
  en.comm = fnv1a(id, &nranks, sizeof nranks);
  en.rank = myrank;
  en.nranks = nranks;
  en.aux = nId;
  en.depth = t_depth;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t*, int, int, int, ncclUniqueId*, ncclConfig_t*)>(
      kCommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config);
  if (newcomm != nullptr) register_comm(*newcomm, en.comm, myrank, nranks);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  // Single-process clique: every member lives here, so a process-unique identity suffices.
  uint64_t id = fnv1a(kFnvBasis, g_state.host, strlen(g_state.host));
  pid_t pid = getpid();
  id = fnv1a(id, &pid, sizeof pid);
  pthread_mutex_lock(&g_state.mu);
  uint64_t nth = g_state.initall_calls++;
  pthread_mutex_unlock(&g_state.mu);
  id = fnv1a(fnv1a(id, &nth, sizeof nth), &ndev, sizeof ndev);
  Entry en;
  en.op = tf::kOpCommInitAll;
  en.comm = id;
  en.flags = tf::kFlagCommKnown;
  en.nranks = ndev;
  en.depth = t_depth;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t*, int, const int*)>(kCommInitAll, comms, ndev, devlist);
  if (comms != nullptr)
    for (int i = 0; i < ndev; ++i) register_comm(comms[i], id, i, ndev);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                         ncclConfig_t* config) {
  Entry en = derived_entry(tf::kOpCommSplit, comm, false, &color, sizeof color);
  en.aux = color;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*)>(
      kCommSplit, comm, color, key, newcomm, config);
  int rank = -1, nranks = -1;
  // NCCL_SPLIT_NOCOLOR leaves *newcomm null: no communicator to register.
  if (newcomm != nullptr && *newcomm != nullptr) {
    if (r == 0) ask_rank(*newcomm, &rank, &nranks);
    register_comm(*newcomm, en.comm, rank, nranks);
  }
  leave(e, r, rank, nranks);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                          ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  size_t n = excludeRanksList != nullptr && excludeRanksCount > 0 ? static_cast<size_t>(excludeRanksCount) : 0;
  Entry en = derived_entry(tf::kOpCommShrink, comm, true, excludeRanksList, n * sizeof(int));
  en.aux = excludeRanksCount;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int)>(
      kCommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  int rank = -1, nranks = -1;
  if (newcomm != nullptr && *newcomm != nullptr) {
    if (r == 0) ask_rank(*newcomm, &rank, &nranks);
    register_comm(*newcomm, en.comm, rank, nranks);
  }
  leave(e, r, rank, nranks);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  Entered e = enter(comm_entry(tf::kOpCommFinalize, comm));
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t)>(kCommFinalize, comm);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  Entered e = enter(comm_entry(tf::kOpCommDestroy, comm));
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t)>(kCommDestroy, comm);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  Entered e = enter(comm_entry(tf::kOpCommAbort, comm));
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t)>(kCommAbort, comm);
  leave(e, r);
  return r;
}

DENPEX_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  Entry en = comm_entry(tf::kOpCommRevoke, comm);
  en.aux = revokeFlags;
  Entered e = enter(en);
  ncclResult_t r = forward<ncclResult_t (*)(ncclComm_t, int)>(kCommRevoke, comm, revokeFlags);
  leave(e, r);
  return r;
}

}  // extern "C"
