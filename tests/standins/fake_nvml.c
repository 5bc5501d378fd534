/* Stand-in for NVIDIA's management library, libnvidia-ml.so.1, which cannot answer on a machine
 * without a GPU. The entry points, struct layouts and values are NVML's (nvml.h: the _v2/_v3
 * names, nvmlReturn_t, nvmlComputeMode_t, nvmlEnableState_t, the MIG mode constants,
 * nvmlPciInfo_t, nvmlGpuFabricInfo_v2_t with its version word); the GPUs it reports come from the
 * text file named by DENPEX_STANDIN_NVML, one GPU a line:
 *   "<name>\t<compute mode 0-3>\t<MIG 0|1|->\t<lost 0|1>[\t<key>=<value>...]"
 * with optional keys bus=00000000:0A:00.0, ecc=0|1 (current ECC mode), ecc_unc=N (volatile
 * uncorrected errors), retired=0|1 (pages pending retirement), remap=0|1 (rows pending remapping;
 * remap_failed=1 too), nvlink=UP/TOTAL (links, the first UP active), fabric=STATE[/STATUS] (the
 * fabric probe's state 0-3 and, once completed, its nvmlReturn_t). A key not given makes its call
 * answer NVML_ERROR_NOT_SUPPORTED, as NVML does for a GPU without the feature.
 * No such variable or file: nvmlInit_v2 answers NVML_ERROR_DRIVER_NOT_LOADED (9), as NVML does on
 * a host without the driver. A stand-in, named as one: never a real NVML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct { int index; } * nvmlDevice_t;

enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, DRIVER_NOT_LOADED = 9,
       INSUFFICIENT_SIZE = 7, GPU_IS_LOST = 15, ARGUMENT_VERSION_MISMATCH = 25 };
#define MAX_GPUS 16

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

typedef struct {
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
} nvmlGpuFabricInfo_v2_t;
#define FABRIC_INFO_V2 ((unsigned)(sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24)))

/* -1 in a field: the key was not given, the call answers NOT_SUPPORTED. */
static struct {
  char name[96];
  int compute, mig, lost;
  char bus[32];
  int ecc, retired, remap, remap_failed, nvlink_up, nvlink_total, fabric, fabric_status;
  long long ecc_unc;
} gpus[MAX_GPUS];
static struct { int index; } handles[MAX_GPUS];
static int count = -1;

static void read_keys(int i, char* rest) {
  gpus[i].bus[0] = 0;
  gpus[i].ecc = gpus[i].retired = gpus[i].remap = gpus[i].nvlink_total = gpus[i].fabric = -1;
  gpus[i].ecc_unc = -1;
  gpus[i].remap_failed = gpus[i].nvlink_up = gpus[i].fabric_status = 0;
  for (char* kv = strtok(rest, "\t\n"); kv; kv = strtok(NULL, "\t\n")) {
    if (sscanf(kv, "bus=%31s", gpus[i].bus) == 1) continue;
    if (sscanf(kv, "ecc=%d", &gpus[i].ecc) == 1) continue;
    if (sscanf(kv, "ecc_unc=%lld", &gpus[i].ecc_unc) == 1) continue;
    if (sscanf(kv, "retired=%d", &gpus[i].retired) == 1) continue;
    if (sscanf(kv, "remap_failed=%d", &gpus[i].remap_failed) == 1) continue;
    if (sscanf(kv, "remap=%d", &gpus[i].remap) == 1) continue;
    if (sscanf(kv, "nvlink=%d/%d", &gpus[i].nvlink_up, &gpus[i].nvlink_total) == 2) continue;
    sscanf(kv, "fabric=%d/%d", &gpus[i].fabric, &gpus[i].fabric_status);
  }
}

nvmlReturn_t nvmlInit_v2(void) {
  const char* path = getenv("DENPEX_STANDIN_NVML");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return DRIVER_NOT_LOADED;
  char line[512];
  count = 0;
  while (count < MAX_GPUS && fgets(line, sizeof line, f)) {
    char mig[8] = "-";
    int compute = 0, lost = 0, used = 0;
    char* tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    snprintf(gpus[count].name, sizeof gpus[count].name, "%s", line);
    if (sscanf(tab + 1, "%d\t%7s\t%d%n", &compute, mig, &lost, &used) < 1) continue;
    gpus[count].compute = compute;
    gpus[count].mig = mig[0] == '-' ? -1 : atoi(mig);
    gpus[count].lost = lost;
    read_keys(count, tab + 1 + used);
    handles[count].index = count;
    ++count;
  }
  fclose(f);
  return OK;
}

nvmlReturn_t nvmlShutdown(void) { count = -1; return OK; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  if (count < 0) return UNINITIALIZED;
  *n = (unsigned)count;
  return OK;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (count < 0) return UNINITIALIZED;
  if (i >= (unsigned)count) return INVALID_ARGUMENT;
  if (gpus[i].lost) return GPU_IS_LOST;
  *d = (nvmlDevice_t)&handles[i];
  return OK;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  if (strlen(gpus[d->index].name) + 1 > length) return INSUFFICIENT_SIZE;
  strcpy(name, gpus[d->index].name);
  return OK;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) {
  *mode = gpus[d->index].compute;
  return OK;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  if (gpus[d->index].mig < 0) return NOT_SUPPORTED;
  *current = *pending = (unsigned)gpus[d->index].mig;
  return OK;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  if (!gpus[d->index].bus[0]) return NOT_SUPPORTED;
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busId, sizeof pci->busId, "%s", gpus[d->index].bus);
  return OK;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) {
  if (gpus[d->index].ecc < 0) return NOT_SUPPORTED;
  *current = *pending = gpus[d->index].ecc;
  return OK;
}

/* Only the volatile (0) uncorrected (1) count is kept; the others read 0. */
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long* n) {
  if (gpus[d->index].ecc_unc < 0) return NOT_SUPPORTED;
  *n = type == 1 && counter == 0 ? (unsigned long long)gpus[d->index].ecc_unc : 0;
  return OK;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  if (gpus[d->index].retired < 0) return NOT_SUPPORTED;
  *pending = gpus[d->index].retired;
  return OK;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr, unsigned* unc,
                                       unsigned* pending, unsigned* failed) {
  if (gpus[d->index].remap < 0) return NOT_SUPPORTED;
  *corr = 0;
  *unc = (unsigned)gpus[d->index].remap;
  *pending = (unsigned)gpus[d->index].remap;
  *failed = (unsigned)gpus[d->index].remap_failed;
  return OK;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  if (gpus[d->index].nvlink_total < 0) return NOT_SUPPORTED;
  if (link >= (unsigned)gpus[d->index].nvlink_total) return INVALID_ARGUMENT;
  *active = link < (unsigned)gpus[d->index].nvlink_up;
  return OK;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v2_t* info) {
  if (info->version != FABRIC_INFO_V2) return ARGUMENT_VERSION_MISMATCH;
  if (gpus[d->index].fabric < 0) return NOT_SUPPORTED;
  info->state = (unsigned char)gpus[d->index].fabric;
  info->status = gpus[d->index].fabric_status;
  return OK;
}

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case OK: return "Success";
    case DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case GPU_IS_LOST: return "GPU is lost";
    case NOT_SUPPORTED: return "Not Supported";
    case ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}
