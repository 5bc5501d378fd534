#include <zstd.h>
#include <zstd_errors.h>

#include <fmt/format.h>

#include "evidence/decoder.h"

namespace denpex::evidence {
namespace {

// libzstd's own default limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT): 128 MiB of window. Said here
// because the message below names it; frames made with `zstd --long=28` or more exceed it.
constexpr int kWindowLogMax = 27;

class ZstdDecoder : public StreamDecoder {
 public:
  ZstdDecoder() : dctx_(ZSTD_createDCtx()) {
    if (dctx_) ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kWindowLogMax);
  }
  ~ZstdDecoder() override { ZSTD_freeDCtx(dctx_); }
  ZstdDecoder(const ZstdDecoder&) = delete;
  ZstdDecoder& operator=(const ZstdDecoder&) = delete;
  bool ok() const { return dctx_ != nullptr; }

  DecodeStep step(const unsigned char* in, size_t in_len, char* out, size_t out_cap,
                  bool last) override {
    DecodeStep s;
    ZSTD_inBuffer ib{in, in_len, 0};
    ZSTD_outBuffer ob{out, out_cap, 0};
    size_t rc = ZSTD_decompressStream(dctx_, &ob, &ib);
    s.consumed = ib.pos;
    s.produced = ob.pos;
    if (ZSTD_isError(rc)) {
      s.result = DecodeStep::Result::error;
      if (ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge) {
        s.error = fmt::format(
            "a zstd frame needs more than {} MiB of window (it was made with --long): "
            "decompress it first with zstd -d --long=31",
            (1 << kWindowLogMax) >> 20);
      } else {
        s.error = fmt::format("corrupt zstd data ({})", ZSTD_getErrorName(rc));
      }
      return s;
    }
    // 0: a frame is complete and flushed; another may follow. A call that did nothing (no input
    // left) answers with the next frame's header size instead: it says nothing about the last.
    if (s.consumed > 0 || s.produced > 0) {
      frame_done_ = rc == 0;
      return s;
    }
    if (last && s.consumed == in_len) {
      if (frame_done_) {
        s.result = DecodeStep::Result::end;
      } else {
        s.result = DecodeStep::Result::error;
        s.error = "the zstd data ends early (the file is truncated)";
      }
    }
    return s;
  }

 private:
  ZSTD_DCtx* dctx_;
  bool frame_done_ = false;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_zstd_decoder() {
  auto d = std::make_unique<ZstdDecoder>();
  if (!d->ok()) return nullptr;
  return d;
}

}  // namespace denpex::evidence
