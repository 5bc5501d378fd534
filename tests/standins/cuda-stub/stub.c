/* Stand-in for the CUDA toolkit's stub driver (lib/stubs/libcuda.so, soname libcuda.so.1): what
 * programs link against on a machine without a GPU. NVIDIA builds it from a file named stub.c,
 * whose name stays in its symbol table; every entry point returns CUDA_ERROR_STUB_LIBRARY (34)
 * and leaves its outputs untouched. This file keeps that name so the stand-in carries the same
 * mark. */
typedef int CUresult;
#define CUDA_ERROR_STUB_LIBRARY 34

CUresult cuDriverGetVersion(int* v) { (void)v; return CUDA_ERROR_STUB_LIBRARY; }
CUresult cuInit(unsigned flags) { (void)flags; return CUDA_ERROR_STUB_LIBRARY; }
