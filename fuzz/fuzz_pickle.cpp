// libFuzzer target: the safe pickle reader (evidence/pickle.h) and the Flight Recorder dump
// reader and judge behind it (evidence/fr_dump.h, fr_analyse.h): any input is refused or read,
// never run, within the limits. Seeds: real torch 2.8.0 dumps, Python and torch pickler output,
// the hostile set.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "evidence/fr_analyse.h"
#include "evidence/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  denpex::evidence::PickleLimits limits;
  limits.max_values = 200000;
  denpex::evidence::PickleResult r = denpex::evidence::read_pickle(bytes, limits);
  if (r.status != denpex::evidence::PickleResult::Status::ok && r.message.empty()) std::abort();
  if (r.values > limits.max_values + 1) std::abort();
  denpex::evidence::FrDump d = denpex::evidence::read_fr_dump(bytes, "nccl_trace_rank_0", limits);
  denpex::evidence::FrDump d2 = denpex::evidence::read_fr_dump(bytes, "nccl_trace_rank_1", limits);
  (void)denpex::evidence::analyse_fr_dumps(std::vector<denpex::evidence::FrDump>{d, d2});
  return 0;
}
