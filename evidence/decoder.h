// One streaming decompressor (gzip, zstd or xz) behind one small interface, so that
// decode.cpp's source drives all three the same way. Each implementation lives in its own file
// (decoder_gzip.cpp, decoder_zstd.cpp, decoder_xz.cpp) and wraps the library that does the work:
// zlib, libzstd, liblzma.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace denpex::evidence {

struct DecodeStep {
  enum class Result {
    progress,  // consumed and/or produced something; call again
    end,       // the compressed data is complete (every member or frame); nothing more follows
    error,     // `error` says what; the decoder is finished
  };
  Result result = Result::progress;
  size_t consumed = 0;  // bytes of `in` used
  size_t produced = 0;  // bytes written to `out`
  std::string error;    // for Result::error: what is wrong, without the file's name
};

class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Decodes from `in` into `out`. `last` says that no input follows `in`: a stream that is not
  // complete by then is truncated (Result::error, "ends early ..."). A call with input and room
  // that neither consumes nor produces is a decoder fault the caller treats as an error.
  virtual DecodeStep step(const unsigned char* in, size_t in_len, char* out, size_t out_cap,
                          bool last) = 0;
};

// Each returns nullptr when the library cannot set up a decoder (out of memory).
// gzip: members concatenated one after another are read as one stream (as gunzip does); bytes
// after the last member that do not start another member are an error.
std::unique_ptr<StreamDecoder> make_gzip_decoder();
// zstd: frames one after another (and skippable frames) as one stream. A frame that needs a
// window over 128 MiB (made with --long=28 and up) is refused with the command that reads it.
std::unique_ptr<StreamDecoder> make_zstd_decoder();
// xz: concatenated .xz streams (and their padding) as one stream; at most 256 MiB of decoder
// memory (xz -9 needs 65 MiB).
std::unique_ptr<StreamDecoder> make_xz_decoder();

}  // namespace denpex::evidence
