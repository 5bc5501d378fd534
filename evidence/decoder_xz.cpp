#include <lzma.h>

#include <fmt/format.h>

#include "evidence/decoder.h"

namespace denpex::evidence {
namespace {

// xz -9 (the most any preset uses) needs 65 MiB to decode; a custom dictionary can ask for up to
// 1.5 GiB, more than a log reader should take on a shared login node.
constexpr uint64_t kMemLimit = uint64_t{256} << 20;

const char* lzma_problem(lzma_ret rc) {
  switch (rc) {
    case LZMA_FORMAT_ERROR: return "not a valid .xz stream";
    case LZMA_OPTIONS_ERROR: return "unsupported .xz options";
    case LZMA_DATA_ERROR: return "corrupt .xz data";
    case LZMA_BUF_ERROR: return "the .xz data ends early (the file is truncated)";
    case LZMA_MEM_ERROR: return "out of memory while decoding .xz";
    default: return "the .xz decoder failed";
  }
}

class XzDecoder : public StreamDecoder {
 public:
  XzDecoder() { ok_ = lzma_stream_decoder(&zs_, kMemLimit, LZMA_CONCATENATED) == LZMA_OK; }
  ~XzDecoder() override { lzma_end(&zs_); }
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;
  bool ok() const { return ok_; }

  DecodeStep step(const unsigned char* in, size_t in_len, char* out, size_t out_cap,
                  bool last) override {
    DecodeStep s;
    zs_.next_in = in;
    zs_.avail_in = in_len;
    zs_.next_out = reinterpret_cast<uint8_t*>(out);
    zs_.avail_out = out_cap;
    // LZMA_FINISH once the input is all there: with LZMA_CONCATENATED that is how the decoder
    // learns that no further stream follows.
    lzma_ret rc = lzma_code(&zs_, last ? LZMA_FINISH : LZMA_RUN);
    // liblzma says LZMA_BUF_ERROR only on the second call in a row that can make no progress:
    // at the end of the input, make that second call here, so a truncated stream is named.
    if (rc == LZMA_OK && last && zs_.avail_in == in_len && zs_.avail_out == out_cap)
      rc = lzma_code(&zs_, LZMA_FINISH);
    s.consumed = in_len - zs_.avail_in;
    s.produced = out_cap - zs_.avail_out;
    if (rc == LZMA_OK) return s;
    if (rc == LZMA_STREAM_END) {
      s.result = DecodeStep::Result::end;
      return s;
    }
    if (rc == LZMA_BUF_ERROR && !last) return s;  // no progress yet: wants more input
    s.result = DecodeStep::Result::error;
    if (rc == LZMA_MEMLIMIT_ERROR) {
      s.error = fmt::format(
          "the .xz data needs more than {} MiB of memory to decode: decompress it first (xz -dk)",
          kMemLimit >> 20);
    } else {
      s.error = lzma_problem(rc);
    }
    return s;
  }

 private:
  lzma_stream zs_ = LZMA_STREAM_INIT;
  bool ok_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_xz_decoder() {
  auto d = std::make_unique<XzDecoder>();
  if (!d->ok()) return nullptr;
  return d;
}

}  // namespace denpex::evidence
