/* Stand-in for the NVIDIA user-space driver, libcuda.so.1 -> libcuda.so.<driver version>, which
 * cannot exist on a machine without a GPU. cuDriverGetVersion answers DRIVER_CUDA (e.g. 12040 =
 * CUDA 12.4) like the real one, without needing cuInit. DRIVER_HANG makes it never return. */
#include <unistd.h>

typedef int CUresult;

CUresult cuDriverGetVersion(int* v) {
#ifdef DRIVER_HANG
  for (;;) pause();
#endif
  *v = DRIVER_CUDA;
  return 0;
}
CUresult cuInit(unsigned flags) { (void)flags; return 0; }
