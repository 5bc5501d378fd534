#include "report/html_escape.h"

namespace denpex {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    auto c = static_cast<unsigned char>(ch);
    // A bidirectional formatting character (U+061C, U+200E/F, U+202A-E, U+2066-9) would reorder
    // the text around it on the page: it is shown by name instead.
    if ((c == 0xe2 || c == 0xd8) && i + 1 < s.size()) {
      auto b1 = static_cast<unsigned char>(s[i + 1]);
      auto b2 = i + 2 < s.size() ? static_cast<unsigned char>(s[i + 2]) : 0;
      unsigned cp = 0;
      if (c == 0xd8 && b1 == 0x9c) cp = 0x061c;
      else if (c == 0xe2 && b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae))) cp = 0x2000 + (b2 - 0x80);
      else if (c == 0xe2 && b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9) cp = 0x2040 + (b2 - 0x80);
      if (cp != 0) {
        static const char kHex[] = "0123456789abcdef";
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xfu];
        i += cp == 0x061c ? 1 : 2;
        continue;
      }
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n': out += ch; break;
      default:
        if (c < 0x20) {
          // U+2400 + c, UTF-8 encoded: E2 90 80+c.
          out += '\xe2';
          out += '\x90';
          out += static_cast<char>(0x80 + c);
        } else if (c == 0x7f) {
          out += "\xe2\x90\xa1";  // U+2421 SYMBOL FOR DELETE
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace denpex
