/* Stand-in for libnccl.so.2, for versions that cannot be installed beside the real NCCL 2.28.9
 * on the test machine. Built with the real soname (libnccl.so.2), the real version literal
 * ("NCCL version X.Y.Z+cudaA.B", as init.cc embeds it) and the real ncclGetVersion contract
 * (NCCL_VERSION_CODE: major*10000+minor*100+patch since 2.9, major*1000+minor*100+patch before).
 *
 * Compile-time knobs: NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH, NCCL_CUDA ("12.4"),
 * WITH_COMM_REGISTER (export ncclCommRegister/ncclCommDeregister, added in NCCL 2.19),
 * CTOR_CRASH, CTOR_HANG, GETVERSION_HANG, NO_GETVERSION, CTOR_MARKER ("path": the constructor
 * writes this file, to prove a library was never loaded). */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define STR2(x) #x
#define STR(x) STR2(x)

#if NCCL_MINOR < 9 && NCCL_MAJOR <= 2
#define VERSION_CODE (NCCL_MAJOR * 1000 + NCCL_MINOR * 100 + NCCL_PATCH)
#else
#define VERSION_CODE (NCCL_MAJOR * 10000 + NCCL_MINOR * 100 + NCCL_PATCH)
#endif

/* `used` keeps the literal in .rodata even though nothing reads it, as in NCCL. */
__attribute__((used)) static const char version_literal[] =
    "NCCL version " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH) "+cuda" NCCL_CUDA;

#if defined(CTOR_CRASH) || defined(CTOR_HANG) || defined(CTOR_MARKER)
__attribute__((constructor)) static void on_load(void) {
#ifdef CTOR_MARKER
  FILE* f = fopen(CTOR_MARKER, "w");
  if (f) { fputs("loaded\n", f); fclose(f); }
#endif
#ifdef CTOR_CRASH
  raise(SIGSEGV);
#endif
#ifdef CTOR_HANG
  for (;;) pause();
#endif
}
#endif

typedef int ncclResult_t;
typedef struct ncclComm* ncclComm_t;

#ifndef NO_GETVERSION
ncclResult_t ncclGetVersion(int* version) {
#ifdef GETVERSION_HANG
  for (;;) pause();
#endif
  *version = VERSION_CODE;
  return 0;
}
#endif

ncclResult_t ncclGetUniqueId(void* id) { (void)id; return 0; }
ncclResult_t ncclCommInitRank(ncclComm_t* c, int n, char id[128], int r) {
  (void)c; (void)n; (void)id; (void)r; return 0; }
ncclResult_t ncclCommDestroy(ncclComm_t c) { (void)c; return 0; }
ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, int t, int op, ncclComm_t c, void* st) {
  (void)s; (void)r; (void)n; (void)t; (void)op; (void)c; (void)st; return 0; }
ncclResult_t ncclGroupStart(void) { return 0; }
ncclResult_t ncclGroupEnd(void) { return 0; }
#ifdef WITH_COMM_REGISTER
ncclResult_t ncclCommRegister(ncclComm_t c, void* b, size_t s, void** h) {
  (void)c; (void)b; (void)s; (void)h; return 0; }
ncclResult_t ncclCommDeregister(ncclComm_t c, void* h) { (void)c; (void)h; return 0; }
#endif
