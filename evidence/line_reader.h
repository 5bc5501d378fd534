// The one bounded line reader for everything read after the fact: lines from a ByteSource
// (input_source.h), each cut at a fixed length without holding the rest of a longer line, so a
// 2 GB file without a newline costs one buffer and one cut line.
#pragma once

#include <cstddef>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "evidence/input_source.h"

namespace denpex::evidence {

// Longest line handed on; real records are a few hundred bytes, a stack trace line a few KiB.
constexpr size_t kMaxLine = 64 * 1024;

class LineReader {
 public:
  // Reads from `source` (not owned; it must outlive the reader).
  explicit LineReader(ByteSource* source, size_t max_line = kMaxLine);

  // Next line without its break into *line. LF, CR and CRLF each end a line, and line numbers
  // count them so (a log redrawn with CR has more lines here than `grep -c ''` counts).
  // *cut is set when the line was longer than max_line: the first max_line bytes are kept and
  // the rest skipped. False at the end of input or when the source breaks off (then error() is
  // set).
  bool next(std::string* line, bool* cut);

  long long line_number() const { return line_no_; }
  const std::string& error() const { return error_; }

 private:
  bool fill();
  ByteSource* source_;
  size_t max_line_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  bool after_cr_ = false;  // the last read ended on a CR: an LF first in the next is its pair
  long long line_no_ = 0;
  std::string error_;
};

// A ByteSource over an open stream (not owned), for readers of our own file formats that also
// seek (recorder traces).
std::unique_ptr<ByteSource> stream_source(std::istream* in);

}  // namespace denpex::evidence
