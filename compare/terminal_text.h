// Text from an input (a log line, a host name in a record, a path, a torch/version.py) on its way
// to a person's terminal: shown, never obeyed. A raw ESC or OSC sequence could clear the screen,
// set the window title or hide the lines after it; a right-to-left override could make a line
// read as something it is not; a NUL would cut a C string. All of them are written as visible
// escapes instead. The tool's own colours (compare/text_paint) are added after this step.
#pragma once

#include <string>
#include <string_view>

namespace denpex {

enum class LineBreaks {
  keep,    // a report of many lines: '\n' and '\t' pass through
  escape,  // one line (a message on stderr): '\n', '\r' and '\t' escaped too
};

// `text` with every control character (C0 including NUL and ESC, DEL, C1 such as U+009B CSI),
// every bidirectional formatting character (U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069) and every byte that is not part of valid UTF-8 written as an escape: "\x1b",
// "\x00", "\u202e", "\xff". Line breaks and tabs as `breaks` says. Valid text without such
// characters comes back unchanged. Never throws.
std::string terminal_text(std::string_view text, LineBreaks breaks = LineBreaks::escape);

// True when terminal_text(word, LineBreaks::escape) would change nothing: valid UTF-8 without
// control or bidirectional formatting characters.
bool terminal_safe_word(std::string_view word);

}  // namespace denpex
