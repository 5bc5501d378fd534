// Where every input read after the fact enters: a file or standard input, opened once and
// handed on as bytes. Decoding (compressed files, told by their content rather than their name)
// and refusing what is not text happen here, so the readers behind it see plain text only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace denpex::evidence {

// Why a decoded input ended before its compressed data did: the decoder met damage (a truncated
// or corrupt stream, bytes after its end that are not part of it), or the decoded bytes passed a
// limit (evidence/decode.h: DecodeLimits). What was decoded before it is read as the input; the
// rest is not, and a report says so.
struct InputCut {
  enum class Why { none, damaged, size_limit, ratio_limit };
  Why why = Why::none;
  std::string file;                // the input's name, as in messages
  uint64_t compressed_offset = 0;  // the compressed byte the damage starts at, or that was reached
  uint64_t decoded_bytes = 0;      // decoded bytes handed on before the cut
  uint64_t line = 0;               // the decoded line the cut falls in (1 for the first)
  std::string message;             // one line naming the input, where, why and what to do
};

// "damaged", "size-limit", "ratio-limit" ("" for none): the JSON reports' words.
const char* to_string(InputCut::Why why);

// A stream of decoded bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `cap` bytes into `buf`. Returns the number read, 0 at the end of the input, or
  // -1 with *error set when the input breaks off (a read error, a corrupt or truncated
  // compressed stream); the source is then finished.
  virtual long read(char* buf, size_t cap, std::string* error) = 0;
  // Once read() has returned 0: why the input ended early (why none: it ended whole). A source
  // that decodes keeps what it decoded before damage or a limit, then ends (0), never -1.
  virtual InputCut cut() const { return InputCut{}; }
};

struct OpenedInput {
  enum class Status {
    ok,          // `source` is set
    missing,     // no such file
    unreadable,  // permission, a directory, a special file, an I/O error
    binary,      // not text (and not a compressed text the reader knows)
    corrupt,     // a compressed stream damaged before any byte of text decoded (`cut` says where)
  };
  Status status = Status::unreadable;
  std::string message;   // one line naming the input and what to do; empty when ok
  std::string encoding;  // "text", or the compression that was undone ("gzip", ...)
  std::unique_ptr<ByteSource> source;
  InputCut cut;          // corrupt: where the damage starts (why damaged, nothing decoded)
};

// How much a compressed input may decode to. Decoding streams (nothing held grows with the
// size), so these bound time, and the memory of the readers behind that keep what they read.
//
// Real logs compress far less than bombs do: the benchmark's 64-rank NCCL_DEBUG=INFO COLL log
// (bench/gen_coll_log, more regular than a real job's: no clock, no other output) is 44:1 with
// gzip -9, 98:1 with zstd -19 and 112:1 with xz -9; the real pastes kept for the tests are 4:1
// to 5:1. A stream of one repeated byte is 1030:1 with gzip (deflate cannot do better than
// 1032:1) and 30,000:1 and more with zstd and xz. 500:1 is four times the most regular log
// measured and half of gzip's best: a gzip bomb is cut after about 32 MB (about 2 s), a zstd
// or xz one after about 16 MiB; the first 16 MiB are free of the ratio, so that a small file of
// repeated lines is read whole.
//
// The size limit is on one input: 8 GiB is twice the NCCL_DEBUG=INFO COLL log of a 1,000-rank
// job written to one file (about 4 GB, from the 245 MB of the benchmark's 64-rank log); a rank's
// own log is a thousandth of that. Reading 8 GiB takes minutes (a reader takes tens of MB/s of
// log lines), which is what a bomb that stays under the ratio can cost. Both limits are raised
// with `diagnose`'s and `collectives`' --max-decoded-size and --max-decoded-ratio.
struct DecodeLimits {
  uint64_t max_decoded_bytes = uint64_t{8} << 30;  // decoded bytes of one compressed input
  // Decoded bytes per compressed byte consumed, beyond the first ratio_free_bytes; 0: no limit.
  uint64_t max_ratio = 500;
  uint64_t ratio_free_bytes = uint64_t{16} << 20;
  // How much of the (decoded) start is looked at to tell text from binary (at least 512).
  size_t sniff_bytes = 64 * 1024;
};

// Opens `path` ("-" is standard input), decoding it within `limits` (evidence/decode.h). Never
// throws; every failure is a status with its message.
OpenedInput open_input(const std::string& path, const DecodeLimits& limits = DecodeLimits{});

// An in-memory input, for tests and fuzz targets.
std::unique_ptr<ByteSource> memory_source(std::string bytes);

}  // namespace denpex::evidence
