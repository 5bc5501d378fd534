#include "evidence/decode.h"


#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "compare/shell_command.h"
#include "evidence/decoder.h"

namespace denpex::evidence {
namespace {

enum class Compression { none, gzip, zstd, xz };

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    case Compression::xz: return "xz";
    case Compression::none: break;
  }
  return "text";
}

bool starts_with(const std::string& s, const char* lit, size_t n) {
  return s.size() >= n && std::memcmp(s.data(), lit, n) == 0;
}

Compression sniff_compression(const std::string& head) {
  if (starts_with(head, "\x1f\x8b", 2)) return Compression::gzip;
  // A zstd frame, or a skippable frame (magic 0x184D2A50..5F, little-endian) before one.
  if (starts_with(head, "\x28\xb5\x2f\xfd", 4)) return Compression::zstd;
  if (head.size() >= 4 && (static_cast<unsigned char>(head[0]) & 0xf0) == 0x50 &&
      std::memcmp(head.data() + 1, "\x2a\x4d\x18", 3) == 0)
    return Compression::zstd;
  if (starts_with(head, "\xfd" "7zXZ\x00", 6)) return Compression::xz;
  return Compression::none;
}

std::unique_ptr<StreamDecoder> make_decoder(Compression c) {
  switch (c) {
    case Compression::gzip: return make_gzip_decoder();
    case Compression::zstd: return make_zstd_decoder();
    case Compression::xz: return make_xz_decoder();
    case Compression::none: break;
  }
  return nullptr;
}

class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::string head, std::unique_ptr<ByteSource> rest, std::string pending_error)
      : head_(std::move(head)), rest_(std::move(rest)), pending_(std::move(pending_error)) {}
  long read(char* buf, size_t cap, std::string* error) override {
    if (pos_ < head_.size()) {
      size_t n = std::min(cap, head_.size() - pos_);
      std::memcpy(buf, head_.data() + pos_, n);
      pos_ += n;
      return static_cast<long>(n);
    }
    if (!pending_.empty()) {
      *error = pending_;
      return -1;
    }
    return rest_ ? rest_->read(buf, cap, error) : 0;
  }
  InputCut cut() const override { return rest_ ? rest_->cut() : InputCut{}; }

 private:
  std::string head_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
  std::string pending_;  // the error that ended the read of `head`, given once `head` is out
};

std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

const char* tool_of(Compression c) {
  return c == Compression::gzip ? "gzip" : c == Compression::zstd ? "zstd" : "xz";
}

// Decodes a compressed stream as it is read. Damage or a limit ends it (read returns 0) with
// cut() saying why and where; only a failing raw read returns -1.
class DecodingSource : public ByteSource {
 public:
  DecodingSource(std::unique_ptr<ByteSource> raw, std::unique_ptr<StreamDecoder> dec,
                 std::string name, Compression kind, const DecodeLimits& limits)
      : raw_(std::move(raw)), dec_(std::move(dec)), name_(std::move(name)), kind_(kind),
        limits_(limits), in_(kInBytes) {}

  long read(char* buf, size_t cap, std::string* error) override {
    if (!error_.empty()) {
      *error = error_;
      return -1;
    }
    if (done_ || cap == 0) return 0;
    for (;;) {
      if (in_pos_ == in_len_ && !raw_eof_ && !fill()) break;
      DecodeStep s = dec_->step(in_.data() + in_pos_, in_len_ - in_pos_, buf, cap, raw_eof_);
      in_pos_ += s.consumed;
      consumed_ += s.consumed;
      size_t n = within_limits(buf, s.produced);
      if (s.result == DecodeStep::Result::error) damaged(s.error);
      if (s.result == DecodeStep::Result::end) done_ = true;
      if (n > 0) return static_cast<long>(n);
      if (!error_.empty() || done_) break;
      if (s.consumed == 0) {
        if (raw_eof_ || in_len_ - in_pos_ == in_.size()) {
          damaged(fmt::format("the {} decoder stopped making progress", compression_name(kind_)));
          break;
        }
        if (!fill()) break;
      }
    }
    if (!error_.empty()) {
      *error = error_;
      return -1;
    }
    return 0;
  }

  InputCut cut() const override { return cut_; }

 private:
  static constexpr size_t kInBytes = 256 * 1024;

  // Moves what is left of the input to the front and reads more after it. False after an error.
  bool fill() {
    if (in_pos_ > 0) {
      std::memmove(in_.data(), in_.data() + in_pos_, in_len_ - in_pos_);
      in_len_ -= in_pos_;
      in_pos_ = 0;
    }
    if (in_len_ == in_.size()) return true;  // the decoder holds a full buffer: let it work
    std::string err;
    long n = raw_->read(reinterpret_cast<char*>(in_.data()) + in_len_, in_.size() - in_len_, &err);
    if (n < 0) {
      error_ = err;  // already names the file
      return false;
    }
    if (n == 0) raw_eof_ = true;
    in_len_ += static_cast<size_t>(n);
    return true;
  }

  // The decoded bytes allowed now: the size limit, and the ratio limit past its free bytes.
  uint64_t allowed(InputCut::Why* which) const {
    uint64_t size = limits_.max_decoded_bytes;
    *which = InputCut::Why::size_limit;
    if (limits_.max_ratio == 0) return size;
    // Saturating: a ratio or a free part near 2^64 (an option given as "no limit") never wraps.
    uint64_t by_ratio = consumed_ > UINT64_MAX / limits_.max_ratio ? UINT64_MAX : consumed_ * limits_.max_ratio;
    by_ratio = by_ratio > UINT64_MAX - limits_.ratio_free_bytes ? UINT64_MAX : by_ratio + limits_.ratio_free_bytes;
    if (by_ratio < size) *which = InputCut::Why::ratio_limit;
    return std::min(size, by_ratio);
  }

  // How many of the `produced` new bytes at `buf` stay within the limits; past them the
  // stream is cut there and ends.
  size_t within_limits(const char* buf, size_t produced) {
    if (done_ || produced == 0) return 0;
    InputCut::Why which = InputCut::Why::none;
    uint64_t room = allowed(&which) - std::min(allowed(&which), decoded_);
    size_t n = produced <= room ? produced : static_cast<size_t>(room);
    lines_ += static_cast<uint64_t>(std::count(buf, buf + n, '\n'));
    decoded_ += n;
    if (n < produced) limited(which);
    return n;
  }

  void start_cut(InputCut::Why why) {
    cut_.why = why;
    cut_.file = name_;
    cut_.compressed_offset = consumed_;
    cut_.decoded_bytes = decoded_;
    cut_.line = lines_ + 1;
    done_ = true;
  }

  void limited(InputCut::Why which) {
    start_cut(which);
    if (which == InputCut::Why::ratio_limit) {
      cut_.message = fmt::format(
          "{}: decodes to more than {} bytes per compressed byte (after its first {}): {} bytes "
          "from {} compressed bytes; a decompression bomb, or a log more compressible than real "
          "ones: what came before decoded byte {} (line {}) was read, the rest was not (raise "
          "--max-decoded-ratio to read it)",
          name_, limits_.max_ratio, size_text(limits_.ratio_free_bytes), decoded_, consumed_, decoded_, cut_.line);
    } else {
      cut_.message = fmt::format(
          "{}: decodes to more than {} ({} compressed bytes read), the most read from one "
          "compressed input: the first {} (to line {}) were read, the rest was not (raise "
          "--max-decoded-size to read it, or give the ranks' logs one file each)",
          name_, size_text(limits_.max_decoded_bytes), consumed_, size_text(decoded_), cut_.line);
    }
  }

  void damaged(const std::string& what) {
    if (!error_.empty() || cut_.why != InputCut::Why::none) return;
    start_cut(InputCut::Why::damaged);
    if (decoded_ == 0) {
      cut_.message = fmt::format("{}: {}-compressed, but {} at compressed byte {}: nothing could be "
                                 "decoded; check the copy ({} -t {})", name_, compression_name(kind_),
                                 what, consumed_, tool_of(kind_), name_);
    } else {
      cut_.message = fmt::format("{}: {} at compressed byte {}, after {} decoded bytes (line {}): "
                                 "the text before it was read, the rest of this file was not; copy "
                                 "the file again from where the job wrote it ({} -t {} shows the damage)",
                                 name_, what, consumed_, decoded_, cut_.line, tool_of(kind_), name_);
    }
  }

  std::unique_ptr<ByteSource> raw_;
  std::unique_ptr<StreamDecoder> dec_;
  std::string name_;
  Compression kind_;
  DecodeLimits limits_;
  std::vector<unsigned char> in_;
  size_t in_pos_ = 0, in_len_ = 0;
  bool raw_eof_ = false;
  bool done_ = false;
  uint64_t decoded_ = 0, consumed_ = 0, lines_ = 0;
  InputCut cut_;
  std::string error_;  // a raw read failed
};

// Reads until `want` bytes, the end or an error. Returns false on an error (then *error is set
// and *out holds what came before it).
bool read_up_to(ByteSource* src, size_t want, std::string* out, std::string* error) {
  out->resize(want);
  size_t have = 0;
  bool ok = true;
  while (have < want) {
    long n = src->read(&(*out)[have], want - have, error);
    if (n < 0) {
      ok = false;
      break;
    }
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  out->resize(have);
  return ok;
}

}  // namespace

namespace {

// The binary contents that a reader behind the room takes: "" for anything else.
const char* known_binary(const std::string& head) {
  // PROTO 2..5: what Python's pickle and PyTorch's C++ pickler write first.
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 &&
      head[1] <= 5)
    return "pickle";
  static constexpr char kTrace[] = "{\"schema\":\"denpex.trace.v2\"";
  if (starts_with(head, kTrace, sizeof kTrace - 1)) return "denpex-trace";
  return "";
}

// Why `block` is not text, or "" when it reads as text.
std::string binary_reason(const std::string& block) {
  if (block.empty()) return "";
  if (std::memchr(block.data(), '\0', block.size()))
    return fmt::format("NUL bytes in its first {} KiB", (block.size() + 1023) / 1024);
  size_t control = 0;
  for (unsigned char c : block) {
    // Text uses tab, newline, carriage return, form feed, backspace and ESC (colour codes).
    bool allowed = c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\b' || c == 0x1b;
    if ((c < 0x20 && !allowed) || c == 0x7f) ++control;
  }
  if (control * 20 > block.size())
    return fmt::format("{} control characters in its first {} bytes", control, block.size());
  return "";
}

// What a binary start looks like, and what to give instead.
std::string what_binary_is(const std::string& head, const std::string& file_name) {
  // The file's name goes into the commands suggested as one quoted word (FILE when it cannot be).
  const std::string name = shell_quote(file_name).value_or("FILE");
  if (starts_with(head, "\x7f" "ELF", 4))
    return "an ELF program or library, not a log: give the text logs the job wrote";
  if (starts_with(head, "PK\x03\x04", 4))
    return fmt::format("a zip archive (a torch.save file is one too): unpack it (unzip -d DIR "
                       "{}) and give the logs inside", name);
  if (starts_with(head, "BZh", 3))
    return fmt::format("bzip2-compressed (gzip, zstd and xz are read): decompress it first "
                       "(bunzip2 -k {})", name);
  if (starts_with(head, "\x04\x22\x4d\x18", 4))
    return fmt::format("lz4-compressed (gzip, zstd and xz are read): decompress it first "
                       "(lz4 -d {})", name);
  if (head.size() > 262 && std::memcmp(head.data() + 257, "ustar", 5) == 0)
    return fmt::format("a tar archive: unpack it (tar -xf {}) and give the logs inside", name);
  if (starts_with(head, "\xff\xfe", 2) || starts_with(head, "\xfe\xff", 2))
    return fmt::format("UTF-16 text: convert it first (iconv -f UTF-16 -t UTF-8 {})", name);
  return "";
}

OpenedInput binary_input(const std::string& name, Compression c, const std::string& block,
                         const std::string& why) {
  OpenedInput out;
  out.status = OpenedInput::Status::binary;
  out.encoding = compression_name(c);
  std::string what = what_binary_is(block, name);
  std::string packed = c == Compression::none ? "" : fmt::format("{}-compressed ", compression_name(c));
  if (!what.empty()) {
    out.message = fmt::format("{}: {}{}", name, packed, what);
  } else {
    out.message = fmt::format(
        "{}: {}binary data ({}), not a text log: not read; give the job's text logs, a Flight "
        "Recorder dump, NCCL RAS output or a libdenpex-trace.so trace",
        name, packed, why);
  }
  return out;
}

// Names what the decoded start is: a text input, a known binary content, or binary.
OpenedInput judge_content(const std::string& name, Compression c, const std::string& block,
                          std::unique_ptr<ByteSource> source) {
  std::string encoding = compression_name(c);
  if (const char* kind = known_binary(block); *kind) {
    encoding = c == Compression::none ? kind : encoding + "+" + kind;
  } else if (std::string why = binary_reason(block); !why.empty()) {
    return binary_input(name, c, block, why);
  } else if (!what_binary_is(block, name).empty()) {
    return binary_input(name, c, block, "");
  }
  OpenedInput out;
  out.status = OpenedInput::Status::ok;
  out.encoding = encoding;
  out.source = std::move(source);
  return out;
}

}  // namespace

OpenedInput open_decoded(std::unique_ptr<ByteSource> raw, const std::string& name,
                         const DecodeLimits& limits) {
  OpenedInput out;
  // Enough for every magic number, the tar header's and a few lines.
  const size_t sniff = std::max<size_t>(limits.sniff_bytes, 512);
  std::string head, error;
  bool raw_ok = read_up_to(raw.get(), sniff, &head, &error);
  if (!raw_ok && head.empty()) {
    out.status = OpenedInput::Status::unreadable;
    out.message = error;
    return out;
  }
  Compression c = sniff_compression(head);
  if (c == Compression::none) {
    std::string block = head;
    return judge_content(name, c, block,
                         std::make_unique<PrefixedSource>(std::move(head), std::move(raw),
                                                          raw_ok ? "" : error));
  }
  std::unique_ptr<StreamDecoder> dec = make_decoder(c);
  if (!dec) {
    out.status = OpenedInput::Status::unreadable;
    out.message = fmt::format("{}: cannot set up the {} decoder (out of memory)", name,
                              compression_name(c));
    return out;
  }
  auto decoding = std::make_unique<DecodingSource>(
      std::make_unique<PrefixedSource>(std::move(head), std::move(raw), raw_ok ? "" : error),
      std::move(dec), name, c, limits);
  std::string first;
  bool read_ok = read_up_to(decoding.get(), sniff, &first, &error);
  if (first.empty() && (!read_ok || decoding->cut().why == InputCut::Why::damaged)) {
    out.status = read_ok ? OpenedInput::Status::corrupt : OpenedInput::Status::unreadable;
    out.encoding = compression_name(c);
    out.cut = decoding->cut();
    out.message = read_ok ? out.cut.message : error;
    return out;
  }
  std::string block = first;
  return judge_content(name, c, block,
                       std::make_unique<PrefixedSource>(std::move(first), std::move(decoding), ""));
}

std::unique_ptr<ByteSource> prefixed_source(std::string head, std::unique_ptr<ByteSource> rest) {
  return std::make_unique<PrefixedSource>(std::move(head), std::move(rest), "");
}

}  // namespace denpex::evidence
