#include "compare/text_paint.h"

#include <cstring>
#include <vector>

namespace denpex {

namespace {

std::string sgr(const std::string& s, const char* code) { return std::string("\x1b[") + code + "m" + s + "\x1b[0m"; }

bool starts(const std::string& line, const char* prefix) { return line.rfind(prefix, 0) == 0; }

// The verdict word of a verdict line ("denpex-probe: REJECT ...", "denpex-probe diagnose: REJECT (...").
std::string paint_verdict(const std::string& line) {
  struct Word { const char* word; const char* code; };
  static const Word words[] = {{"PASS", "1;32"}, {"REJECT", "1;31"}, {"INCONCLUSIVE", "1;33"}};
  std::size_t colon = line.find(": ");
  if (colon == std::string::npos) return line;
  for (const auto& w : words) {
    std::size_t n = std::strlen(w.word);
    if (line.compare(colon + 2, n, w.word) == 0)
      return line.substr(0, colon + 2) + sgr(w.word, w.code) + line.substr(colon + 2 + n);
  }
  return line;
}

// "error  nccl-version-mismatch ...": the severity and the code.
std::string paint_finding(const std::string& line, const char* severity, const char* code) {
  std::size_t n = std::strlen(severity);
  std::size_t start = line.find_first_not_of(' ', n);
  if (start == std::string::npos) return sgr(line, code);
  std::size_t end = line.find(' ', start);
  if (end == std::string::npos) end = line.size();
  return sgr(line.substr(0, start), code) + sgr(line.substr(start, end - start), "1") + line.substr(end);
}

std::string paint_label(const std::string& line, std::size_t label_end, const char* code) {
  return sgr(line.substr(0, label_end), code) + line.substr(label_end);
}

std::string paint_line(const std::string& line) {
  if (starts(line, "denpex-probe")) return paint_verdict(line);
  if (starts(line, "error ")) return paint_finding(line, "error", "1;31");
  if (starts(line, "warning ")) return paint_finding(line, "warning", "1;33");
  struct Label { const char* text; const char* code; };
  static const Label labels[] = {{"Started by:", "1;31"}, {"Followed:", "1;33"}, {"Launcher:", "1"},
                                 {"could not decide:", "1;33"}, {"  fix:", "32"}, {"  verify:", "36"},
                                 {"  evidence:", "2"}};
  for (const auto& l : labels)
    if (starts(line, l.text)) {
      std::string out = paint_label(line, std::strlen(l.text), l.code);
      std::size_t wrong = out.find("-- WRONG:");
      if (wrong != std::string::npos) out = out.substr(0, wrong) + sgr("-- WRONG:", "1;31") + out.substr(wrong + 9);
      return out;
    }
  if (!line.empty() && line.back() == ':' && line.find("configuration") != std::string::npos) return sgr(line, "1");
  return line;
}

}  // namespace

std::string paint_report(const std::string& text) {
  if (text.find('\x1b') != std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    std::size_t end = nl == std::string::npos ? text.size() : nl;
    out += paint_line(text.substr(start, end - start));
    if (nl != std::string::npos) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace denpex
