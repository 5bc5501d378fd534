#include "compare/shell_command.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "compare/terminal_text.h"

namespace denpex {

namespace {

bool plain_byte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '@' ||
         c == '%' || c == '+' || c == '=' || c == ':' || c == ',' || c == '.' || c == '/' || c == '-';
}

// NAME= at the start of an assignment word: the shell reads it as one only unquoted.
size_t assignment_name_end(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return 0;
  for (size_t i = 1; i < word.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(word[i]);
    if (c == '=') return i + 1;
    if (!(std::isalnum(c) || c == '_')) return 0;
  }
  return 0;
}

bool shell_syntax_byte(char c) {
  switch (c) {
    case '$': case '`': case ';': case '&': case '|': case '<': case '>': case '(': case ')': case '*':
    case '?': case '[': case ']': case '{': case '}': case '~': case '#': case '!': case '\n':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<std::string> shell_quote(std::string_view word) {
  if (!terminal_safe_word(word)) return std::nullopt;
  // A leading '=' is zsh's command-path expansion (=ls is /bin/ls): quoted.
  bool plain = !word.empty() && word[0] != '=';
  for (unsigned char c : word) plain = plain && plain_byte(c);
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  out += '\'';
  return out;
}

CommandStatus make_command(std::vector<std::string> argv, ShellCommand* out, std::string* bad_word) {
  *out = ShellCommand{};
  if (argv.empty()) return CommandStatus::empty;
  std::string text;
  bool in_assignments = true;
  for (const auto& w : argv) {
    size_t name_end = in_assignments ? assignment_name_end(w) : 0;
    in_assignments = name_end > 0;
    std::optional<std::string> q = shell_quote(std::string_view(w).substr(name_end));
    // An empty value after NAME= is an assignment of "" and needs no quotes.
    if (name_end > 0 && name_end == w.size()) q = std::string();
    if (!q) {
      if (bad_word) *bad_word = terminal_text(w);
      return CommandStatus::unsafe;
    }
    if (!text.empty()) text += ' ';
    text += w.substr(0, name_end) + *q;
  }
  out->argv = std::move(argv);
  out->text = std::move(text);
  return CommandStatus::ok;
}

namespace {

bool variable_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_')) return false;
  return true;
}

}  // namespace

CommandStatus make_command_with(std::vector<std::pair<std::string, std::string>> vars, std::vector<std::string> argv,
                                ShellCommand* out, std::string* bad_word) {
  *out = ShellCommand{};
  if (argv.empty()) return CommandStatus::empty;
  std::string head;
  auto bad = [&](const std::string& w) {
    if (bad_word) *bad_word = terminal_text(w);
    return CommandStatus::unsafe;
  };
  for (const auto& [name, value] : vars) {
    std::optional<std::string> q = shell_quote(value);
    if (!variable_name(name) || !q) return bad(name + "=" + value);
    head += name + "=" + (value.empty() ? std::string("''") : *q) + "\n";
  }
  // "$NAME" words are put aside so the renderer quotes the rest as it always does.
  std::vector<std::string> plain = argv;
  std::vector<size_t> refs;
  for (size_t i = 0; i < plain.size(); ++i) {
    if (plain[i].size() < 2 || plain[i][0] != '$') continue;
    std::string name = plain[i].substr(1);
    bool known = std::any_of(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
    if (!known) return bad(plain[i]);
    plain[i] = "@@denpex-var-" + std::to_string(i) + "@@";
    refs.push_back(i);
  }
  ShellCommand body;
  CommandStatus st = make_command(plain, &body, bad_word);
  if (st != CommandStatus::ok) return st;
  std::string text = body.text;
  // The placeholders are plain words: put each reference back where it stood.
  for (auto it = refs.rbegin(); it != refs.rend(); ++it) {
    std::string mark = "@@denpex-var-" + std::to_string(*it) + "@@";
    size_t at = text.rfind(mark);
    if (at != std::string::npos) text.replace(at, mark.size(), "\"" + argv[*it] + "\"");
  }
  out->argv = std::move(argv);
  out->vars = std::move(vars);
  out->text = head + text;
  return CommandStatus::ok;
}

ShellCommand command_or(std::vector<std::string> argv, const std::string& fallback) {
  ShellCommand c;
  if (make_command(std::move(argv), &c) != CommandStatus::ok) c.text = fallback;
  return c;
}

ShellCommand authored_command(const std::string& text, const std::string& recorder) {
  std::vector<std::string> words;
  size_t at = 0;
  bool plain = !text.empty();
  while (plain && at <= text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string w = text.substr(at, end - at);
    if (w.empty()) plain = false;
    for (char c : w) plain = plain && !shell_syntax_byte(c) && c != '\'' && c != '"' && c != '\\';
    const std::string token = "@RECORDER@";
    for (size_t p = w.find(token); p != std::string::npos; p = w.find(token, p + recorder.size()))
      w.replace(p, token.size(), recorder);
    words.push_back(w);
    at = end + 1;
  }
  ShellCommand c;
  if (plain && make_command(words, &c) == CommandStatus::ok) return c;
  c = ShellCommand{};
  c.text = text;
  const std::string token = "@RECORDER@";
  for (size_t p = c.text.find(token); p != std::string::npos; p = c.text.find(token, p + recorder.size()))
    c.text.replace(p, token.size(), recorder);
  return c;
}

std::optional<std::vector<std::string>> shell_words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool have = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ' ' || c == '\t') {
      if (have) words.push_back(cur);
      cur.clear();
      have = false;
      ++i;
    } else if (c == '\'') {
      size_t end = text.find('\'', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      cur += text.substr(i + 1, end - i - 1);
      have = true;
      i = end + 1;
    } else if (c == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) return std::nullopt;
        char d = text[i];
        if (d == '"') break;
        if (d == '$' || d == '`') return std::nullopt;
        if (d == '\\' && i + 1 < text.size() &&
            (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$' || text[i + 1] == '`')) {
          cur += text[i + 1];
          i += 2;
          continue;
        }
        cur += d;
        ++i;
      }
      have = true;
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= text.size() || text[i + 1] == '\n') return std::nullopt;
      cur += text[i + 1];
      have = true;
      i += 2;
    } else if (shell_syntax_byte(c)) {
      return std::nullopt;
    } else {
      cur += c;
      have = true;
      ++i;
    }
  }
  if (have) words.push_back(cur);
  return words;
}

nlohmann::json command_json(const ShellCommand& c) {
  nlohmann::json j = {{"text", c.text}, {"argv", c.argv.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.argv)}};
  if (!c.vars.empty()) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& [name, value] : c.vars) v[name] = value;
    j["vars"] = v;
  }
  return j;
}

}  // namespace denpex
