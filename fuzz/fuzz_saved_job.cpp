// libFuzzer target: what `denpex-probe compare` runs on saved reports (collect/saved_reports.h
// load_saved_job): one file that may be a rank record, a cluster report, or anything else.
#include <cstddef>
#include <cstdint>

#include "collect/saved_reports.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  denpex::SavedJob job = denpex::load_saved_job({f.path(), f.path()}, 2);
  if (job.status == denpex::SavedStatus::ok && job.kept.size() > 2) __builtin_trap();
  if (job.status != denpex::SavedStatus::ok && job.error.empty()) __builtin_trap();
  return 0;
}
