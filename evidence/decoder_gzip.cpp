#include <zlib.h>

#include <algorithm>

#include <fmt/format.h>

#include "evidence/decoder.h"

namespace denpex::evidence {
namespace {

constexpr unsigned char kGzipMagic0 = 0x1f;
constexpr unsigned char kGzipMagic1 = 0x8b;

class GzipDecoder : public StreamDecoder {
 public:
  GzipDecoder() {
    // 16 + MAX_WBITS: gzip framing only (a zlib or raw deflate stream is not what we sniffed).
    ok_ = inflateInit2(&zs_, 16 + MAX_WBITS) == Z_OK;
  }
  ~GzipDecoder() override {
    if (ok_) inflateEnd(&zs_);
  }
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;
  bool ok() const { return ok_; }

  DecodeStep step(const unsigned char* in, size_t in_len, char* out, size_t out_cap,
                  bool last) override {
    DecodeStep s;
    if (between_members_) return next_member(in, in_len, last);
    // zlib counts in uInt: hand it at most 1 GiB at a time.
    size_t given = std::min<size_t>(in_len, size_t{1} << 30);
    zs_.next_in = const_cast<unsigned char*>(in);  // zlib's API is not const-correct
    zs_.avail_in = static_cast<uInt>(given);
    zs_.next_out = reinterpret_cast<unsigned char*>(out);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(out_cap, size_t{1} << 30));
    int rc = inflate(&zs_, Z_NO_FLUSH);
    s.consumed = given - zs_.avail_in;
    s.produced = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - out);
    if (rc == Z_STREAM_END) {
      between_members_ = true;
      ++members_;
      return s;
    }
    if (rc == Z_OK || (rc == Z_BUF_ERROR && (s.consumed > 0 || s.produced > 0))) return s;
    if (rc == Z_BUF_ERROR && last && s.consumed == in_len) {
      s.result = DecodeStep::Result::error;
      s.error = "the gzip data ends early (the file is truncated)";
      return s;
    }
    s.result = DecodeStep::Result::error;
    s.error = fmt::format("corrupt gzip data ({})", zs_.msg ? zs_.msg : zError(rc));
    return s;
  }

 private:
  // After a member's trailer: another member, the end, or bytes that are not gzip.
  DecodeStep next_member(const unsigned char* in, size_t in_len, bool last) {
    DecodeStep s;
    if (in_len == 0) {
      if (last) s.result = DecodeStep::Result::end;
      return s;
    }
    if (in_len < 2 && !last) return s;  // wait for the second magic byte
    if (in_len >= 2 && in[0] == kGzipMagic0 && in[1] == kGzipMagic1 && inflateReset(&zs_) == Z_OK) {
      between_members_ = false;
      return s;
    }
    s.result = DecodeStep::Result::error;
    s.error = fmt::format("bytes that are not gzip follow the end of gzip member {}", members_);
    return s;
  }

  z_stream zs_{};
  bool ok_ = false;
  bool between_members_ = false;
  long long members_ = 0;
};

}  // namespace

std::unique_ptr<StreamDecoder> make_gzip_decoder() {
  auto d = std::make_unique<GzipDecoder>();
  if (!d->ok()) return nullptr;
  return d;
}

}  // namespace denpex::evidence
