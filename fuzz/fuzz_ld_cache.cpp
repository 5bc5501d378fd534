// libFuzzer target: the ld.so.cache reader (probe/ld_cache.h).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "probe/ld_cache.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  denpex::LdCache c = denpex::read_ld_cache(f.path());
  (void)denpex::find_in_cache(c, "libnccl.so.2");
  return 0;
}
