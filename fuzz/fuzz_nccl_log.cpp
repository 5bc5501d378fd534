// libFuzzer target: the collectives inputs: NCCL_DEBUG=INFO / PyTorch watchdog logs
// (collect/nccl_log.h) and libdenpex-trace.so traces (collect/collective_trace.h), then the
// sequence analysis that runs on what they produce (compare/collectives.h).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "collect/collective_trace.h"
#include "collect/nccl_log.h"
#include "compare/collectives.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  denpex::CollectiveInput log = denpex::parse_nccl_log("fuzz.log", in);
  (void)denpex::analyse_sequences(log.sequences);
  (void)denpex::analyse_watchdog(log.watchdog);
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  denpex::CollectiveInput trace = denpex::read_collective_trace(f.path());
  (void)denpex::analyse_sequences(trace.sequences);
  return 0;
}
