// libFuzzer target: the rank record loader (probe/record.h record_from_json). The saved-report
// loader `compare` runs on files is fuzz_saved_job.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

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
  return 0;
}
