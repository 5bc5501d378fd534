// libFuzzer target: the one renderer of printed commands (compare/shell_command.h). The input is
// split at NUL-free boundaries into words; whatever they hold, a rendered command is exactly its
// words again to a shell reader, and holds no byte a terminal acts on; a word that cannot be
// quoted safely gives no command at all.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compare/shell_command.h"
#include "compare/terminal_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  // Words are separated by the byte 0x1f (so spaces, quotes and NULs stay inside words).
  std::vector<std::string> words;
  size_t at = 0;
  for (;;) {
    size_t end = in.find('\x1f', at);
    words.push_back(in.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos || words.size() >= 16) break;
    at = end + 1;
  }
  denpex::ShellCommand c;
  switch (denpex::make_command(words, &c)) {
    case denpex::CommandStatus::ok: {
      if (!denpex::terminal_safe_word(c.text)) __builtin_trap();
      auto back = denpex::shell_words(c.text);
      if (!back || *back != words) __builtin_trap();
      break;
    }
    case denpex::CommandStatus::unsafe: {
      bool any_unsafe = false;
      for (const auto& w : words) any_unsafe = any_unsafe || !denpex::shell_quote(w);
      if (!any_unsafe || !c.text.empty() || !c.argv.empty()) __builtin_trap();
      break;
    }
    case denpex::CommandStatus::empty: __builtin_trap();
  }
  // An authored line: whatever it is, its words (when it has them) are its text to a shell.
  denpex::ShellCommand a = denpex::authored_command(in, "/opt/denpex/lib/libdenpex-trace.so");
  if (!a.argv.empty()) {
    auto back = denpex::shell_words(a.text);
    if (!back || *back != a.argv) __builtin_trap();
  }
  (void)denpex::terminal_text(in, denpex::LineBreaks::keep);
  return 0;
}
