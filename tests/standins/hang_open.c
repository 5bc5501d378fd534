/* A file system on which opening some files never returns (a hung NFS server, a dead FUSE
 * daemon), for the --timeout watchdog tests. Preloaded into the probe:
 * open()/openat() of a path containing $DENPEX_HANG_OPEN blocks forever, as the kernel call
 * would; every other open goes to libc. Not a stand-in for a real library: a fault injector. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int should_hang(const char* path) {
  const char* pattern = getenv("DENPEX_HANG_OPEN");
  return pattern && *pattern && path && strstr(path, pattern) != NULL;
}

static void hang(void) {
  for (;;) pause();
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define FORWARD_OPEN(name)                                              \
  int name(const char* path, int flags, ...) {                          \
    va_list ap;                                                         \
    va_start(ap, flags);                                                \
    mode_t mode = mode_arg(flags, ap);                                  \
    va_end(ap);                                                         \
    if (should_hang(path)) hang();                                      \
    int (*real)(const char*, int, ...) = dlsym(RTLD_NEXT, #name);       \
    return real(path, flags, mode);                                     \
  }

#define FORWARD_OPENAT(name)                                            \
  int name(int dirfd, const char* path, int flags, ...) {               \
    va_list ap;                                                         \
    va_start(ap, flags);                                                \
    mode_t mode = mode_arg(flags, ap);                                  \
    va_end(ap);                                                         \
    if (should_hang(path)) hang();                                      \
    int (*real)(int, const char*, int, ...) = dlsym(RTLD_NEXT, #name);  \
    return real(dirfd, path, flags, mode);                              \
  }

FORWARD_OPEN(open)
FORWARD_OPEN(open64)
FORWARD_OPENAT(openat)
FORWARD_OPENAT(openat64)
