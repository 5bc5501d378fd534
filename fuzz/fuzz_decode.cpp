// libFuzzer target: the decoders behind open_input (evidence/decode.h): gzip, zstd and xz
// streams (the seeds are real files made by the real programs), text and binary sniffing. The
// first byte picks the read size, so the decoders see their input and output split at many
// points. A small cap on decoded bytes keeps bombs short; more than the cap is a bug, and so is a
// cut (damage, a limit) that does not say how much was handed on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "evidence/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t chunk = 1 + data[0] % 64 * 997;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  denpex::evidence::DecodeLimits limits;
  limits.max_decoded_bytes = 8u << 20;
  limits.sniff_bytes = 1 + data[0] % 7 * 9000;
  denpex::evidence::OpenedInput in =
      denpex::evidence::open_decoded(denpex::evidence::memory_source(bytes), "fuzz", limits);
  if (in.status != denpex::evidence::OpenedInput::Status::ok) {
    if (in.message.empty() || in.source) std::abort();  // a failure always says why, and gives no source
    return 0;
  }
  std::string buf(chunk, '\0');
  std::string error;
  uint64_t total = 0;
  for (;;) {
    long n = in.source->read(&buf[0], buf.size(), &error);
    if (n < 0) {
      if (error.empty()) std::abort();
      break;
    }
    if (n == 0) {
      // An input cut short says why, where, and how much it handed on: all that was read.
      denpex::evidence::InputCut cut = in.source->cut();
      if (cut.why != denpex::evidence::InputCut::Why::none && (cut.message.empty() || cut.decoded_bytes != total))
        std::abort();
      break;
    }
    total += static_cast<uint64_t>(n);
    if (total > limits.max_decoded_bytes + 65536) std::abort();
  }
  return 0;
}
