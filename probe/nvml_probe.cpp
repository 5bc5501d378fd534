#include "probe/nvml_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

namespace {

// nvml.h's values: nvmlReturn_t NVML_SUCCESS 0, NVML_ERROR_INVALID_ARGUMENT 2,
// NVML_ERROR_NOT_SUPPORTED 3, NVML_ERROR_GPU_IS_LOST 15; nvmlComputeMode_t 0-3;
// nvmlEnableState_t and NVML_DEVICE_MIG_ENABLE 1 for enabled; NVML_MEMORY_ERROR_TYPE_UNCORRECTED
// 1, NVML_VOLATILE_ECC 0; the fabric probe's states NVML_GPU_FABRIC_STATE_NOT_SUPPORTED 0 to
// _COMPLETED 3. A GPU has at most 96 bytes of name (NVML_DEVICE_NAME_V2_BUFFER_SIZE) and 36
// NVLink links (NVML_NVLINK_MAX_LINKS); hosts have at most a few dozen GPUs.
constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kGpuIsLost = 15;
constexpr int kEnabled = 1;
constexpr int kUncorrected = 1;
constexpr int kVolatile = 0;
constexpr unsigned kMaxGpus = 256;
constexpr unsigned kNameBytes = 96;
constexpr unsigned kMaxNvlinks = 36;

// nvml.h's nvmlPciInfo_t (the _v3 call's layout): busId is "00000000:0A:00.0".
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvml.h's nvmlGpuFabricInfo_v2_t, the version every driver with nvmlDeviceGetGpuFabricInfoV
// takes (v3 only adds a summary at the end), and nvmlGpuFabricInfo_t, the older call's.
struct FabricInfoV2 {
  unsigned version;
  unsigned char cluster_uuid[16];
  int status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
};
struct FabricInfoV1 {
  unsigned char cluster_uuid[16];
  int status;
  unsigned clique_id;
  unsigned char state;
};
// NVML_STRUCT_VERSION(GpuFabricInfo, 2): the struct's size, the version in the top byte.
constexpr unsigned kFabricInfoV2 = static_cast<unsigned>(sizeof(FabricInfoV2)) | (2u << 24);

using InitFn = int (*)();
using CountFn = int (*)(unsigned*);
using HandleFn = int (*)(unsigned, void**);
using NameFn = int (*)(void*, char*, unsigned);
using ComputeFn = int (*)(void*, int*);
using MigFn = int (*)(void*, unsigned*, unsigned*);
using ErrorFn = const char* (*)(int);
using PciFn = int (*)(void*, PciInfo*);
using EccModeFn = int (*)(void*, int*, int*);
using EccCountFn = int (*)(void*, int, int, unsigned long long*);
using PendingFn = int (*)(void*, int*);
using RemapFn = int (*)(void*, unsigned*, unsigned*, unsigned*, unsigned*);
using LinkFn = int (*)(void*, unsigned, int*);
using FabricV2Fn = int (*)(void*, FabricInfoV2*);
using FabricV1Fn = int (*)(void*, FabricInfoV1*);

struct Nvml {
  InitFn init = nullptr;
  InitFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn handle = nullptr;
  NameFn name = nullptr;
  ComputeFn compute = nullptr;
  MigFn mig = nullptr;
  ErrorFn error = nullptr;
  PciFn pci = nullptr;
  EccModeFn ecc_mode = nullptr;
  EccCountFn ecc_count = nullptr;
  PendingFn retired_pending = nullptr;
  RemapFn remapped = nullptr;
  LinkFn link = nullptr;
  FabricV2Fn fabric_v2 = nullptr;
  FabricV1Fn fabric_v1 = nullptr;

  // NVML's words for a return code: "Driver Not Loaded (9)".
  std::string text_of(int rc) const {
    const char* text = error ? error(rc) : nullptr;
    return fmt::format("{} ({})", text ? text : "error", rc);
  }
  std::string say(const char* call, int rc) const { return fmt::format("{}: {}", call, text_of(rc)); }
};

template <typename Fn>
void bind(void* lib, const char* symbol, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(lib, symbol));
}

void bind_all(void* lib, Nvml* n) {
  bind(lib, "nvmlInit_v2", &n->init);
  bind(lib, "nvmlShutdown", &n->shutdown);
  bind(lib, "nvmlDeviceGetCount_v2", &n->count);
  bind(lib, "nvmlDeviceGetHandleByIndex_v2", &n->handle);
  bind(lib, "nvmlDeviceGetName", &n->name);
  bind(lib, "nvmlDeviceGetComputeMode", &n->compute);
  bind(lib, "nvmlDeviceGetMigMode", &n->mig);
  bind(lib, "nvmlErrorString", &n->error);
  bind(lib, "nvmlDeviceGetPciInfo_v3", &n->pci);
  bind(lib, "nvmlDeviceGetEccMode", &n->ecc_mode);
  bind(lib, "nvmlDeviceGetTotalEccErrors", &n->ecc_count);
  bind(lib, "nvmlDeviceGetRetiredPagesPendingStatus", &n->retired_pending);
  bind(lib, "nvmlDeviceGetRemappedRows", &n->remapped);
  bind(lib, "nvmlDeviceGetNvLinkState", &n->link);
  bind(lib, "nvmlDeviceGetGpuFabricInfoV", &n->fabric_v2);
  bind(lib, "nvmlDeviceGetGpuFabricInfo", &n->fabric_v1);
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

const char* yes_no(bool b) { return b ? "yes" : "no"; }

// The probe state and, once completed, the registration's own status; "" where the GPU has no
// fabric (NOT_SUPPORTED, or the state says so) or the call failed.
std::string fabric_state(const Nvml& n, void* h) {
  int rc = -1;
  unsigned char state = 0;
  int status = kSuccess;
  if (n.fabric_v2) {
    FabricInfoV2 info{};
    info.version = kFabricInfoV2;
    rc = n.fabric_v2(h, &info);
    state = info.state;
    status = info.status;
  } else if (n.fabric_v1) {
    FabricInfoV1 info{};
    rc = n.fabric_v1(h, &info);
    state = info.state;
    status = info.status;
  }
  if (rc != kSuccess) return "";
  switch (state) {
    case 1: return "not-started";
    case 2: return "in-progress";
    case 3: return status == kSuccess ? "completed" : "failed: " + n.text_of(status);
  }
  return "";
}

// "0000:0a:00.0" from NVML's "00000000:0A:00.0": the driver's procfs names its directories with
// a 4-digit domain, lower case.
std::string procfs_bus_location(const char* bus_id) {
  std::string id(bus_id, ::strnlen(bus_id, sizeof(PciInfo::bus_id)));
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t colon = id.find(':');
  if (colon == std::string::npos || colon <= 4) return id;
  const std::string extra = id.substr(0, colon - 4);
  if (extra.find_first_not_of('0') != std::string::npos) return id;  // a domain past 0xffff
  return id.substr(colon - 4);
}

// ECC mode and counts, pending page retirement and row remapping, NVLink and the fabric: each
// left unknown where NVML has no such call or answers NOT_SUPPORTED.
void read_health(const Nvml& n, void* h, NvmlGpu* g) {
  int current = 0, pending = 0;
  if (n.ecc_mode && n.ecc_mode(h, &current, &pending) == kSuccess)
    g->ecc = current == kEnabled ? "enabled" : "disabled";
  unsigned long long errors = 0;
  if (n.ecc_count && n.ecc_count(h, kUncorrected, kVolatile, &errors) == kSuccess)
    g->ecc_uncorrected = static_cast<long long>(std::min<unsigned long long>(errors, LLONG_MAX));
  int retired = 0;
  if (n.retired_pending && n.retired_pending(h, &retired) == kSuccess)
    g->retired_pending = yes_no(retired == kEnabled);
  unsigned corrected = 0, uncorrected = 0, remap = 0, failed = 0;
  if (n.remapped && n.remapped(h, &corrected, &uncorrected, &remap, &failed) == kSuccess) {
    g->remap_pending = yes_no(remap != 0);
    g->remap_failed = failed != 0;
  }
  // Only answers count. Each call asks the driver, so the loop stops where NVML says there are
  // no more links (INVALID_ARGUMENT past the GPU's last), or none at all (NOT_SUPPORTED for the
  // first: a GPU without NVLink); a link in between that NVML does not support is skipped.
  for (unsigned link = 0; n.link && link < kMaxNvlinks; ++link) {
    int active = 0;
    const int rc = n.link(h, link, &active);
    if (rc == kInvalidArgument || (rc == kNotSupported && link == 0)) break;
    if (rc != kSuccess) continue;
    ++g->nvlink_links;
    if (active == kEnabled) ++g->nvlink_up;
  }
  g->fabric = fabric_state(n, h);
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
  PciInfo pci{};
  if (n.pci && n.pci(h, &pci) == kSuccess) g.bus_location = procfs_bus_location(pci.bus_id);
  read_health(n, h, &g);
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
  bind_all(lib, &n);
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
