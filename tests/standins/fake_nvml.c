/* Stand-in for NVIDIA's management library, libnvidia-ml.so.1, which cannot answer on a machine
 * without a GPU. The entry points and values are NVML's (nvml.h: the _v2 names, nvmlReturn_t,
 * nvmlComputeMode_t, the MIG mode constants); the GPUs it reports come from the text file named
 * by DENPEX_STANDIN_NVML, one GPU a line: "<name>\t<compute mode 0-3>\t<MIG 0|1|->\t<lost 0|1>".
 * No such variable or file: nvmlInit_v2 answers NVML_ERROR_DRIVER_NOT_LOADED (9), as NVML does on
 * a host without the driver. A stand-in, named as one: never a real NVML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct { int index; } * nvmlDevice_t;

enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, DRIVER_NOT_LOADED = 9,
       INSUFFICIENT_SIZE = 7, GPU_IS_LOST = 15 };
#define MAX_GPUS 16

static struct { char name[96]; int compute; int mig; int lost; } gpus[MAX_GPUS];
static struct { int index; } handles[MAX_GPUS];
static int count = -1;

nvmlReturn_t nvmlInit_v2(void) {
  const char* path = getenv("DENPEX_STANDIN_NVML");
  FILE* f = path ? fopen(path, "r") : NULL;
  if (!f) return DRIVER_NOT_LOADED;
  char line[256];
  count = 0;
  while (count < MAX_GPUS && fgets(line, sizeof line, f)) {
    char mig[8] = "-";
    int compute = 0, lost = 0;
    char* tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    snprintf(gpus[count].name, sizeof gpus[count].name, "%s", line);
    if (sscanf(tab + 1, "%d\t%7s\t%d", &compute, mig, &lost) < 1) continue;
    gpus[count].compute = compute;
    gpus[count].mig = mig[0] == '-' ? -1 : atoi(mig);
    gpus[count].lost = lost;
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

const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case OK: return "Success";
    case DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case GPU_IS_LOST: return "GPU is lost";
    case NOT_SUPPORTED: return "Not Supported";
    default: return "Unknown Error";
  }
}
