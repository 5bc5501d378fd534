/* Stand-in for a library a root-run probe must never load (tests/hostile/): its constructor
 * creates the file named by $DENPEX_HOSTILE_MARKER, so a test can prove it was never loaded.
 * The path comes from the environment (the probe passes its environment to anything it loads)
 * so parallel tests each watch their own marker.
 *
 * AS_NCCL: libnccl.so.2 with the version literal of NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH+cudaNCCL_CUDA
 * and ncclGetVersion. AS_CUDA: libcuda.so.1 with cuDriverGetVersion answering DRIVER_CUDA. */
#include <stdio.h>
#include <stdlib.h>

#define STR2(x) #x
#define STR(x) STR2(x)

__attribute__((constructor)) static void on_load(void) {
  const char* marker = getenv("DENPEX_HOSTILE_MARKER");
  if (!marker || !*marker) return;
  FILE* f = fopen(marker, "a");
  if (f) {
    fputs("loaded\n", f);
    fclose(f);
  }
}

#ifdef AS_NCCL
__attribute__((used)) static const char version_literal[] =
    "NCCL version " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH) "+cuda" NCCL_CUDA;

int ncclGetVersion(int* version) {
  *version = NCCL_MAJOR * 10000 + NCCL_MINOR * 100 + NCCL_PATCH;
  return 0;
}
#endif

#ifdef AS_CUDA
int cuDriverGetVersion(int* v) {
  *v = DRIVER_CUDA;
  return 0;
}
int cuInit(unsigned flags) { (void)flags; return 0; }
#endif
