#include "compare/terminal_text.h"

#include <fmt/format.h>

namespace denpex {

namespace {

// Length of the valid UTF-8 sequence at `s[i]` and its code point; 0 when the bytes there are
// not one (overlong forms, surrogates and values above U+10FFFF included).
size_t utf8_at(std::string_view s, size_t i, unsigned* cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  unsigned v, min;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xc2 && c <= 0xdf) { n = 2; v = c & 0x1fu; min = 0x80; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; v = c & 0x0fu; min = 0x800; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; v = c & 0x07u; min = 0x10000; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0u) != 0x80u) return 0;
    v = (v << 6) | (d & 0x3fu);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

bool bidi_format(unsigned cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string terminal_text(std::string_view text, LineBreaks breaks) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    unsigned cp = 0;
    size_t n = utf8_at(text, i, &cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    bool keep_break = breaks == LineBreaks::keep && (cp == '\n' || cp == '\t');
    if ((cp < 0x20 && !keep_break) || cp == 0x7f) out += fmt::format("\\x{:02x}", cp);
    else if ((cp >= 0x80 && cp <= 0x9f) || bidi_format(cp)) out += fmt::format("\\u{:04x}", cp);
    else out.append(text.data() + i, n);
    i += n;
  }
  return out;
}

bool terminal_safe_word(std::string_view word) {
  size_t i = 0;
  while (i < word.size()) {
    unsigned cp = 0;
    size_t n = utf8_at(word, i, &cp);
    if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || bidi_format(cp)) return false;
    i += n;
  }
  return true;
}

}  // namespace denpex
