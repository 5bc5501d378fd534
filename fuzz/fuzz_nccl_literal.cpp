// libFuzzer target: the NCCL version literal parser and version comparison (probe/nccl_version.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "probe/nccl_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string s(reinterpret_cast<const char*>(data), size);
  denpex::NcclVersion v = denpex::parse_nccl_literal(s);
  (void)denpex::nccl_version_code(v);
  // The same bytes as several literals (NUL-separated, as find_strings returns them).
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('\0', start);
    if (end == std::string::npos) end = s.size();
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  (void)denpex::pick_nccl_literal(parts);
  return 0;
}
