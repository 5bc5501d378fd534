#include "probe/nvml_probe.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace denpex {

namespace {

// nvml.h's values: nvmlReturn_t NVML_SUCCESS 0, NVML_ERROR_GPU_IS_LOST 15; nvmlComputeMode_t
// 0-3; NVML_DEVICE_MIG_ENABLE 1. A GPU has at most 96 bytes of name
// (NVML_DEVICE_NAME_V2_BUFFER_SIZE); hosts have at most a few dozen GPUs.
constexpr int kSuccess = 0;
constexpr int kGpuIsLost = 15;
constexpr unsigned kMaxGpus = 256;
constexpr unsigned kNameBytes = 96;

using InitFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, void**);
using NameFn = int (*)(void*, char*, unsigned);
using ComputeFn = int (*)(void*, int*);
using MigFn = int (*)(void*, unsigned*, unsigned*);
using ErrorFn = const char* (*)(int);

struct Nvml {
  InitFn init = nullptr;
  InitFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  NameFn name = nullptr;
  ComputeFn compute = nullptr;
  MigFn mig = nullptr;
  ErrorFn error = nullptr;

  std::string say(const char* call, int rc) const {
    const char* text = error ? error(rc) : nullptr;
    return fmt::format("{}: {} ({})", call, text ? text : "error", rc);
  }
};

template <typename Fn>
void bind(void* lib, const char* symbol, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
}

const char* compute_mode_name(int mode) {
  switch (mode) {
    case 0: return "default";
    case 1: return "exclusive-thread";
    case 2: return "prohibited";
    case 3: return "exclusive-process";
  }
  return "";
}

NvmlGpu read_gpu(const Nvml& n, unsigned index) {
  NvmlGpu g;
  void* h = nullptr;
  int rc = n.handle(index, &h);
  if (rc == kGpuIsLost) {
    g.lost = true;
    return g;
  }
  if (rc != kSuccess) return g;
  char name[kNameBytes + 1] = {};
  if (n.name && n.name(h, name, kNameBytes) == kSuccess) g.name = name;
  int mode = -1;
  if (n.compute && n.compute(h, &mode) == kSuccess) g.compute_mode = compute_mode_name(mode);
  unsigned current = 0, pending = 0;
  // NOT_SUPPORTED (a GPU without MIG) leaves it "": the same as disabled for the job.
  if (n.mig && n.mig(h, &current, &pending) == kSuccess) g.mig = current == 1 ? "enabled" : "disabled";
  return g;
}

}  // namespace

NvmlFacts read_nvml(const std::string& host_path) {
  NvmlFacts f;
  f.library = host_path;
  void* lib = ::dlopen(host_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    f.why = fmt::format("{} could not be loaded: {}", host_path, e ? e : "dlopen failed");
    return f;
  }
  Nvml n;
  bind(lib, "nvmlInit_v2", &n.init);
  bind(lib, "nvmlShutdown", &n.shutdown);
  bind(lib, "nvmlDeviceGetCount_v2", &n.count);
  bind(lib, "nvmlDeviceGetHandleByIndex_v2", &n.handle);
  bind(lib, "nvmlDeviceGetName", &n.name);
  bind(lib, "nvmlDeviceGetComputeMode", &n.compute);
  bind(lib, "nvmlDeviceGetMigMode", &n.mig);
  bind(lib, "nvmlErrorString", &n.error);
  if (!n.init || !n.count || !n.handle) {
    f.why = fmt::format("{} lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or "
                        "nvmlDeviceGetHandleByIndex_v2", host_path);
    return f;  // the child exits: nothing to close
  }
  int rc = n.init();
  if (rc != kSuccess) {
    f.why = n.say("nvmlInit_v2", rc);
    return f;
  }
  unsigned count = 0;
  rc = n.count(&count);
  if (rc != kSuccess) {
    f.why = n.say("nvmlDeviceGetCount_v2", rc);
  } else {
    for (unsigned i = 0; i < count && i < kMaxGpus; ++i) f.gpus.push_back(read_gpu(n, i));
    f.status = FactStatus::ok;
    if (count > kMaxGpus) f.why = fmt::format("listing cut at {} GPUs", kMaxGpus);
  }
  if (n.shutdown) n.shutdown();
  return f;
}

}  // namespace denpex
