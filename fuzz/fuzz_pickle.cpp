// libFuzzer target: the safe pickle reader (evidence/pickle.h) and the Flight Recorder dump
// reader and judge behind it (evidence/fr_dump.h, fr_analyse.h): any input is refused or read,
// never run, within the limits; the JSON form read from memory and streamed alike. Seeds: real
// torch 2.8.0 dumps, Python and torch pickler output, the hostile set (numbers out of range,
// empty tensors past the bound on what is kept).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "evidence/fr_analyse.h"
#include "evidence/input_source.h"
#include "evidence/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  denpex::evidence::PickleLimits limits;
  limits.max_values = 200000;
  denpex::evidence::PickleResult r = denpex::evidence::read_pickle(bytes, limits);
  if (r.status != denpex::evidence::PickleResult::Status::ok && r.message.empty()) std::abort();
  // The count that crossed the limit may overshoot it by one step (a memo slot range is at most
  // max_values + 1), never by more.
  if (r.values > 2 * limits.max_values + 2) std::abort();
  denpex::evidence::FrDump d = denpex::evidence::read_fr_dump(bytes, "nccl_trace_rank_0", limits);
  denpex::evidence::FrDump d2 = denpex::evidence::read_fr_dump(bytes, "nccl_trace_rank_1", limits);
  (void)denpex::evidence::analyse_fr_dumps(std::vector<denpex::evidence::FrDump>{d, d2});
  // The JSON form streamed from a source (the SAX reader's other input) reads as from memory.
  auto source = denpex::evidence::memory_source(bytes);
  denpex::evidence::FrDump d3 = denpex::evidence::read_fr_dump(source.get(), "nccl_trace_rank_0", limits);
  if (d.status == denpex::evidence::FrDump::Status::ok && d3.status == denpex::evidence::FrDump::Status::ok &&
      (d.entries.size() != d3.entries.size() || d.unreadable != d3.unreadable))
    std::abort();
  return 0;
}
