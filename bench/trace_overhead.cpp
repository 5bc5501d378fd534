// Recorder overhead per call: ncclAllReduce through libdenpex-trace.so against a direct call of
// the real NCCL, both on a null communicator (NCCL returns ncclInvalidArgument after its argument
// check, without CUDA, so this measures the call path, not communication).
//
// usage: DENPEX_TRACE_DIR=DIR LD_PRELOAD=libdenpex-trace.so trace_overhead [CALLS]
// "direct" resolves ncclAllReduce inside libnccl itself; "traced" resolves it in the global
// scope, where the preloaded recorder comes first. Exit 77 when NCCL cannot be loaded.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

using AllReduceFn = int (*)(const void*, void*, size_t, int, int, void*, void*);

double ns_per_call(AllReduceFn f, long calls) {
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) f(nullptr, nullptr, 1024, 7, 0, nullptr, nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

}  // namespace

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
  void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (nccl == nullptr) {
    std::fprintf(stderr, "trace_overhead: %s\n", dlerror());
    return 77;
  }
  auto direct = reinterpret_cast<AllReduceFn>(dlsym(nccl, "ncclAllReduce"));
  auto traced = reinterpret_cast<AllReduceFn>(dlsym(RTLD_DEFAULT, "ncclAllReduce"));
  if (direct == nullptr || traced == nullptr) return 77;
  if (direct == traced) std::fprintf(stderr, "trace_overhead: recorder not preloaded; both columns are direct calls\n");
  ns_per_call(direct, calls / 10);  // warm-up: first-call initialisation in NCCL and the recorder
  ns_per_call(traced, calls / 10);
  double d = ns_per_call(direct, calls);
  double t = ns_per_call(traced, calls);
  std::printf("calls %ld\ndirect %.1f ns/call\ntraced %.1f ns/call\noverhead %.1f ns/call\n", calls, d, t, t - d);
  return 0;
}
