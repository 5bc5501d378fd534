// Where every input read after the fact enters: a file or standard input, opened once and
// handed on as bytes. Decoding (compressed files, told by their content rather than their name)
// and refusing what is not text happen here, so the readers behind it see plain text only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace denpex::evidence {

// A stream of decoded bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `cap` bytes into `buf`. Returns the number read, 0 at the end of the input, or
  // -1 with *error set when the input breaks off (a read error, a corrupt or truncated
  // compressed stream); the source is then finished.
  virtual long read(char* buf, size_t cap, std::string* error) = 0;
};

struct OpenedInput {
  enum class Status {
    ok,          // `source` is set
    missing,     // no such file
    unreadable,  // permission, a directory, a special file, an I/O error
    binary,      // not text (and not a compressed text the reader knows)
    corrupt,     // a compressed stream whose header is already broken
  };
  Status status = Status::unreadable;
  std::string message;   // one line naming the input and what to do; empty when ok
  std::string encoding;  // "text", or the compression that was undone ("gzip", ...)
  std::unique_ptr<ByteSource> source;
};

// Opens `path` ("-" is standard input). Never throws; every failure is a status with its message.
OpenedInput open_input(const std::string& path);

// An in-memory input, for tests and fuzz targets.
std::unique_ptr<ByteSource> memory_source(std::string bytes);

}  // namespace denpex::evidence
