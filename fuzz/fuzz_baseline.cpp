// libFuzzer target: the baseline loader (compare/baseline.h parse_baseline).
#include <cstddef>
#include <cstdint>
#include <string>

#include "compare/baseline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  denpex::BaselineLoad load = denpex::parse_baseline(text, "fuzz.json");
  (void)denpex::to_string(load.status);
  return 0;
}
