/* Test shim, preloaded after libdenpex-trace.so, that makes the real NCCL block inside a call:
 * without a GPU, every NCCL call on the null communicator formats its error message with
 * vsnprintf (libnccl.so.2 imports it from libc), so a vsnprintf that never returns stops the
 * real ncclAllReduce half way through, the way a rank stuck inside NCCL looks.
 *
 * The driver (trace_driver.c, DRIVER_BLOCK_AT) calls denpex_test_block_next_vsnprintf() right
 * before the call that must block; the next vsnprintf in that thread then waits forever. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

static __thread int armed;

__attribute__((visibility("default"))) void denpex_test_block_next_vsnprintf(void) { armed = 1; }

__attribute__((visibility("default"))) int vsnprintf(char* buf, size_t size, const char* fmt, va_list ap) {
  static int (*real)(char*, size_t, const char*, va_list);
  if (armed)
    for (;;) pause();
  if (real == NULL) real = (int (*)(char*, size_t, const char*, va_list))dlsym(RTLD_NEXT, "vsnprintf");
  return real(buf, size, fmt, ap);
}
