#include "evidence/line_feed.h"

#include <algorithm>
#include <cstring>

namespace denpex::evidence {

namespace {

// A batch ends at this many lines or bytes of text, whichever comes first: large enough that
// handing one over costs nothing next to reading it, small enough to stay in cache.
constexpr size_t kBatchLines = 1024;
constexpr size_t kBatchChars = 256 * 1024;
constexpr size_t kCutChars = 120;

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

// Where the NCCL record whose " NCCL " is at k starts ("host:pid:tid [dev] "), npos if k is no
// record header. A glued header starts right after the other record's last character: the
// longest host-like run (letters, digits, '-', '.', '_') before the first ':' is taken.
size_t record_start(std::string_view text, size_t k) {
  std::string_view level = text.substr(k + 6, 5);
  if (!(starts(level, "INFO") || starts(level, "WARN") || starts(level, "ERROR"))) return std::string_view::npos;
  size_t close = std::string_view::npos;
  if (k > 0 && text[k - 1] == ']') {
    close = k - 1;
  } else {
    // "[4] bootstrap.cc:77 NCCL WARN": skip the source location.
    size_t sp = k == 0 ? std::string_view::npos : text.rfind(' ', k - 1);
    if (sp != std::string_view::npos && sp > 0 && text[sp - 1] == ']' && k - sp < 64) close = sp - 1;
  }
  size_t open = close == std::string_view::npos ? std::string_view::npos : text.rfind('[', close);
  if (open == std::string_view::npos || close - open > 6 || open < 2 || text[open - 1] != ' ') return std::string_view::npos;
  size_t e = open - 1, s0 = e;
  int colons = 0;
  while (s0 > 0 && !is_space(text[s0 - 1]) && e - s0 < 256) {
    if (text[s0 - 1] == ':') ++colons;
    --s0;
  }
  if (colons < 2) return std::string_view::npos;
  std::string_view tok = text.substr(s0, e - s0);
  size_t h = tok.find(':');
  while (h > 0) {
    char c = tok[h - 1];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c);
    if (!(alnum || c == '-' || c == '.' || c == '_')) break;
    --h;
  }
  return s0 + h;
}

}  // namespace

// memchr for the 'N' (rare in NCCL and PyTorch records) beats memmem on the hot path of a COLL
// log.
size_t find_nccl(std::string_view s, size_t from) {
  const char* base = s.data();
  const char* end = base + s.size();
  const char* p = base + std::min(from + 1, s.size());
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, 'N', static_cast<size_t>(end - p)));
    if (p == nullptr) return std::string_view::npos;
    if (end - p >= 5 && p[-1] == ' ' && p[1] == 'C' && p[2] == 'C' && p[3] == 'L' && p[4] == ' ')
      return static_cast<size_t>(p - 1 - base);
    ++p;
  }
  return std::string_view::npos;
}

size_t nccl_record_starts(std::string_view text, size_t* starts) {
  size_t n = 0;
  for (size_t k = find_nccl(text); k != std::string_view::npos && n < kMaxRecordStarts; k = find_nccl(text, k + 6)) {
    size_t b = record_start(text, k);
    if (b != std::string_view::npos && (n == 0 || b > starts[n - 1])) starts[n++] = b;
  }
  return n;
}

LineFeed::LineFeed(ByteSource* source, bool threaded) : lines_(source, kMaxLine), threaded_(threaded) {
  if (threaded_) thread_ = std::thread([this] { produce(); });
}

LineFeed::~LineFeed() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// Fills *b with the next lines. False once the input has ended (b may still hold lines).
bool LineFeed::fill(FedBatch* b) {
  b->chars.clear();
  b->starts.clear();
  b->lines.clear();
  bool cut = false;
  size_t at[kMaxRecordStarts];
  while (b->lines.size() < kBatchLines && b->chars.size() < kBatchChars) {
    if (!lines_.next(&raw_, &cut)) {
      error_ = lines_.error();
      return false;
    }
    b->lines.emplace_back();
    FedLine& l = b->lines.back();
    l.line_no = lines_.line_number();
    l.cut = cut;
    if (cut) {
      l.cut_at = static_cast<std::uint32_t>(b->chars.size());
      l.cut_size = static_cast<std::uint32_t>(std::min(raw_.size(), kCutChars));
      b->chars.append(raw_, 0, l.cut_size);
    }
    std::string_view text = repair_line(&raw_, &l.label, &labels_);
    l.indented = !raw_.empty() && is_space(raw_[0]);
    l.text_at = static_cast<std::uint32_t>(b->chars.size());
    l.text_size = static_cast<std::uint32_t>(text.size());
    b->chars.append(text.data(), text.size());
    size_t n = nccl_record_starts(text, at);
    l.starts_at = static_cast<std::uint32_t>(b->starts.size());
    l.nstarts = static_cast<std::uint8_t>(n);
    b->starts.insert(b->starts.end(), at, at + n);
  }
  return true;
}

void LineFeed::produce() {
  try {
    for (;;) {
      FedBatch* b = nullptr;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || produced_ - released_ < kSlots; });
        if (stop_) return;
        b = &slots_[produced_ % kSlots];
      }
      bool more = fill(b);
      {
        std::lock_guard<std::mutex> lk(mu_);
        ++produced_;
        finished_ = !more;
      }
      cv_.notify_all();
      if (!more) return;
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      failure_ = std::current_exception();
      finished_ = true;
    }
    cv_.notify_all();
  }
}

const FedBatch* LineFeed::next() {
  if (!threaded_) {
    if (finished_) return nullptr;
    finished_ = !fill(&own_);
    return own_.lines.empty() && finished_ ? nullptr : &own_;
  }
  std::unique_lock<std::mutex> lk(mu_);
  if (holding_) {
    ++released_;
    holding_ = false;
    cv_.notify_all();
  }
  cv_.wait(lk, [&] { return consumed_ < produced_ || finished_; });
  if (consumed_ < produced_) {
    holding_ = true;
    return &slots_[consumed_++ % kSlots];
  }
  if (failure_) std::rethrow_exception(failure_);
  return nullptr;
}

}  // namespace denpex::evidence
