#include "evidence/json_source.h"

#include <algorithm>

namespace denpex::evidence {

JsonSourceBuf::JsonSourceBuf(ByteSource* source, uint64_t max_bytes, std::string head)
    : source_(source), max_(max_bytes), buf_(std::max<size_t>(64 * 1024, head.size())) {
  if (head.empty()) return;
  if (head.size() > max_) {
    done_ = over_ = true;
    return;
  }
  std::copy(head.begin(), head.end(), buf_.begin());
  bytes_ = head.size();
  setg(buf_.data(), buf_.data(), buf_.data() + head.size());
}

JsonSourceBuf::int_type JsonSourceBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  if (done_) return traits_type::eof();
  long n = source_->read(buf_.data(), buf_.size(), &error_);
  if (n <= 0) {
    done_ = true;
    return traits_type::eof();
  }
  if (static_cast<uint64_t>(n) > max_ - bytes_) {
    // Past the cap: nothing more is handed on (the parser then sees a truncated document).
    done_ = over_ = true;
    return traits_type::eof();
  }
  bytes_ += static_cast<uint64_t>(n);
  setg(buf_.data(), buf_.data(), buf_.data() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace denpex::evidence
