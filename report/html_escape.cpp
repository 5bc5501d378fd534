#include "report/html_escape.h"

namespace denpex {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
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
