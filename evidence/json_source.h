// A ByteSource as the std::istream nlohmann's SAX parser reads from, so that a recorder's JSON
// (a Flight Recorder dump, NCCL RAS output) is parsed as it is read, 64 KiB at a time, and never
// held whole; and the depth cap every SAX reader here applies.
#pragma once

#include <cstdint>
#include <istream>
#include <streambuf>
#include <string>
#include <vector>

#include "evidence/input_source.h"

namespace denpex::evidence {

// The nesting a recorder's JSON may have (a dump nests 5 deep, RAS output 4): as
// compare/bounded_json.h's kMaxJsonDepth, so the two kinds of reader refuse alike.
constexpr size_t kMaxSaxDepth = 64;

class JsonSourceBuf : public std::streambuf {
 public:
  // Reads `head` (what the caller read already to look at the start), then `source` (not
  // owned), up to `max_bytes` in all; past them the stream ends and over() is true.
  JsonSourceBuf(ByteSource* source, uint64_t max_bytes, std::string head = {});
  // Bytes handed to the parser so far (a reference: a reader's bound follows it as it grows).
  const uint64_t& bytes_read() const { return bytes_; }
  bool over() const { return over_; }          // the input passed max_bytes
  const std::string& error() const { return error_; }  // the source broke off (its message)
  // The source's own account of an early end, once it ended (InputCut::Why::none: whole).
  InputCut cut() const { return source_->cut(); }

 protected:
  int_type underflow() override;

 private:
  ByteSource* source_;
  uint64_t max_;
  std::vector<char> buf_;
  uint64_t bytes_ = 0;
  bool done_ = false, over_ = false;
  std::string error_;
};

}  // namespace denpex::evidence
