// compare/terminal_text: input text on its way to a terminal is shown, never obeyed.
#include "compare/terminal_text.h"

#include <string>

#include <catch2/catch.hpp>

using denpex::LineBreaks;
using denpex::terminal_text;

TEST_CASE("plain text and UTF-8 pass unchanged") {
  CHECK(terminal_text("rank 3 on node02: NCCL WARN") == "rank 3 on node02: NCCL WARN");
  CHECK(terminal_text("h\xc3\xa9llo \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x94\xa5") == "h\xc3\xa9llo \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x94\xa5");
  CHECK(terminal_text("a\nb\tc", LineBreaks::keep) == "a\nb\tc");
  CHECK(denpex::terminal_safe_word("node01.example"));
}

TEST_CASE("escape sequences, NUL, C1, bidi overrides and stray bytes are shown escaped") {
  CHECK(terminal_text("\x1b[2J\x1b]0;pwned\x07" "x") == "\\x1b[2J\\x1b]0;pwned\\x07x");
  CHECK(terminal_text(std::string("before\0after", 12)) == "before\\x00after");
  CHECK(terminal_text("a\x7f") == "a\\x7f");
  CHECK(terminal_text("\xc2\x9b" "2J") == "\\u009b2J");
  CHECK(terminal_text("file\xe2\x80\xae" "txt.exe") == "file\\u202etxt.exe");
  CHECK(terminal_text("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069");
  CHECK(terminal_text("bad\xff\xfe") == "bad\\xff\\xfe");
  CHECK(terminal_text("\xc0\xaf") == "\\xc0\\xaf");              // overlong '/'
  CHECK(terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");      // a surrogate
  CHECK(terminal_text("cut\xe4\xb8") == "cut\\xe4\\xb8");         // a sequence cut short
  CHECK(terminal_text("a\r\nb") == "a\\x0d\\x0ab");
  CHECK(terminal_text("a\r\nb", LineBreaks::keep) == "a\\x0d\nb");
  CHECK_FALSE(denpex::terminal_safe_word("a\tb"));
  CHECK_FALSE(denpex::terminal_safe_word("\xe2\x80\x8f"));
}

TEST_CASE("the escaped text holds no byte a terminal acts on, whatever the input") {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  std::string out = terminal_text(all + all.substr(0x80) + "\xe2\x80\xae", LineBreaks::escape);
  for (unsigned char c : out) CHECK((c >= 0x20 && c != 0x7f));
  CHECK(out.find("\xe2\x80\xae") == std::string::npos);
  CHECK(denpex::terminal_safe_word(out));
}
