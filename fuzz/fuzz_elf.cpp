// libFuzzer target: the ELF reader (probe/elf_file.h) and the version literal search on the
// same bytes, as the probe uses them on a libnccl.so.2 it must not load.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_util.h"
#include "probe/elf_file.h"
#include "probe/nccl_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  denpex::ElfInfo info = denpex::read_elf(f.path(), true);
  (void)denpex::to_string(info.status);
  (void)denpex::machine_name(info.machine);
  // A small max_scan keeps the fallback scan and its chunk overlap logic in play.
  auto found = denpex::find_strings(f.path(), "NCCL version ", 1 + size % 8192);
  denpex::NcclVersion v = denpex::pick_nccl_literal(found);
  (void)denpex::nccl_version_code(v);
  return 0;
}
