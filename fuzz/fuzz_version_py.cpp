// libFuzzer target: the torch/version.py reader (probe/torch_probe.h parse_version_py).
#include <cstddef>
#include <cstdint>
#include <string>

#include "probe/torch_probe.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)denpex::parse_version_py(text);
  return 0;
}
