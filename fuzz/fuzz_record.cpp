// libFuzzer target: the rank record loader (probe/record.h record_from_json) and the saved
// report loader of `compare` (collect/saved_reports.h load_saved_records).
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "collect/saved_reports.h"
#include "fuzz/fuzz_util.h"
#include "probe/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    denpex::RankRecord r;
    std::string error;
    if (denpex::record_from_json(j, &r, &error)) {
      // What compare does next with an accepted record: group it by its configuration text and
      // write it back out.
      (void)denpex::configuration_digest(r);
      (void)nlohmann::json(r).dump(2);
    }
  }
  denpex_fuzz::MemFile f(data, size);
  if (!f.ok()) return 0;
  int renumbered = 0;
  denpex::SavedRecords saved = denpex::load_saved_records({f.path()}, &renumbered);
  for (const auto& r : saved.records) (void)denpex::configuration_digest(r);
  return 0;
}
