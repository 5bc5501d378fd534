#include "evidence/line_reader.h"

#include <cstring>

namespace denpex::evidence {

namespace {

constexpr size_t kChunk = 1 << 16;

class StreamSource : public ByteSource {
 public:
  explicit StreamSource(std::istream* in) : in_(in) {}
  long read(char* buf, size_t cap, std::string* error) override {
    in_->read(buf, static_cast<std::streamsize>(cap));
    long n = static_cast<long>(in_->gcount());
    if (n == 0 && in_->bad()) {
      *error = "read error";
      return -1;
    }
    return n;
  }

 private:
  std::istream* in_;
};

}  // namespace

LineReader::LineReader(ByteSource* source, size_t max_line)
    : source_(source), max_line_(max_line), buf_(kChunk) {}

bool LineReader::fill() {
  if (eof_) return false;
  long n = source_->read(buf_.data(), buf_.size(), &error_);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  pos_ = 0;
  end_ = static_cast<size_t>(n);
  return true;
}

bool LineReader::next(std::string* line, bool* cut) {
  line->clear();
  *cut = false;
  bool any = false;
  for (;;) {
    if (pos_ == end_ && !fill()) {
      if (any) ++line_no_;
      return any;
    }
    // The LF of a CRLF whose CR ended the previous read: the same break, counted once.
    if (after_cr_) {
      after_cr_ = false;
      if (buf_[pos_] == '\n') {
        ++pos_;
        continue;
      }
    }
    any = true;
    const char* start = buf_.data() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    size_t len = nl ? static_cast<size_t>(nl - start) : end_ - pos_;
    // A CR inside the line ends it too: a CR-only log has lines, and what a progress bar
    // printed after redrawing itself is a line of its own.
    const char* cr = static_cast<const char*>(std::memchr(start, '\r', len));
    if (cr) len = static_cast<size_t>(cr - start);
    size_t room = max_line_ - std::min(max_line_, line->size());
    if (len > room) *cut = true;
    line->append(start, std::min(len, room));
    pos_ += len;
    if (nl || cr) {
      ++pos_;
      if (cr && pos_ == end_) after_cr_ = true;
      else if (cr && buf_[pos_] == '\n') ++pos_;
      ++line_no_;
      return true;
    }
  }
}

std::unique_ptr<ByteSource> stream_source(std::istream* in) { return std::make_unique<StreamSource>(in); }

}  // namespace denpex::evidence
