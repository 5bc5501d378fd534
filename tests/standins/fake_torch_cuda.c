/* Stand-in for PyTorch's torch/lib/libtorch_cuda.so. Two builds:
 *  - dynamic (default): linked against libnccl.so.2 with a forced DT_RPATH to
 *    $ORIGIN/../../nvidia/nccl/lib, as the PyTorch wheels are, importing the nccl* symbols
 *    below (ncclCommRegister only with WITH_COMM_REGISTER);
 *  - STATIC_NCCL: no libnccl dependency; carries NCCL's version literal, as a build with
 *    USE_STATIC_NCCL=1 does. */
#include <stddef.h>

#ifdef STATIC_NCCL
#define STR2(x) #x
#define STR(x) STR2(x)
__attribute__((used)) static const char nccl_literal[] =
    "NCCL version " STATIC_NCCL "+cuda" NCCL_CUDA;
int torch_cuda_marker(void) { return 1; }
#else
typedef int ncclResult_t;
ncclResult_t ncclGetVersion(int*);
ncclResult_t ncclAllReduce(const void*, void*, size_t, int, int, void*, void*);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
#ifdef WITH_COMM_REGISTER
ncclResult_t ncclCommRegister(void*, void*, size_t, void**);
#endif
int torch_cuda_marker(void) {
  int v = 0;
  ncclGetVersion(&v);
  ncclGroupStart();
  ncclAllReduce(NULL, NULL, 0, 0, 0, NULL, NULL);
  ncclGroupEnd();
#ifdef WITH_COMM_REGISTER
  ncclCommRegister(NULL, NULL, 0, NULL);
#endif
  return v;
}
#endif
