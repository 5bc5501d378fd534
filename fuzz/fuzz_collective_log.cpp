// libFuzzer target: the collectives inputs: NCCL_DEBUG=INFO / PyTorch watchdog logs read through
// the room (evidence/collective_log.h) and libdenpex-trace.so traces (evidence/collective_trace.h),
// then the sequence analysis that runs on what they produce (compare/collectives.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compare/collectives.h"
#include "evidence/collective_log.h"
#include "evidence/collective_trace.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto src = denpex::evidence::memory_source(text);
  denpex::CollectiveInput log = denpex::evidence::read_collective_log(src.get(), "fuzz.log");
  (void)denpex::analyse_sequences(log.sequences);
  (void)denpex::analyse_watchdog(log.watchdog);
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  denpex::CollectiveInput trace = denpex::read_collective_trace(f.path());
  (void)denpex::analyse_sequences(trace.sequences);
  return 0;
}
