/* Floor for benchmark 1: the least a local probe must do to learn the NCCL version this process
 * gets: dlopen("libnccl.so.2") + ncclGetVersion, nothing else (no isolation, no scanning).
 * Prints the version code; exit 0 on success, 1 when NCCL cannot be loaded. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*get_version_fn)(int*);

int main(void) {
  void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "floor_nccl_version: %s\n", dlerror());
    return 1;
  }
  get_version_fn f = (get_version_fn)dlsym(h, "ncclGetVersion");
  int v = 0;
  if (!f || f(&v) != 0) return 1;
  printf("%d\n", v);
  return 0;
}
