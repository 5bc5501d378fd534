// A command printed for a person to paste (a verify line, a rerun hint): kept as words and
// rendered by one quoting rule, so a value read from an input (a host name in a rank record, a
// directory of logs) can never become shell syntax. Every printed command of the project is
// made here; the JSON report gives the words beside the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

struct ShellCommand {
  // The words, program first. Leading NAME=VALUE words are the command's environment
  // assignments (only their VALUE is quoted, so the shell still reads them as assignments).
  // Empty when `text` is prose for a person to complete ("<your launch command>"), not a
  // command that runs as pasted.
  std::vector<std::string> argv;
  // What only the user knows (their launch command, their site-packages), each set on its own
  // line before the command (LAUNCH='torchrun ... train.py'), so the text still parses and a
  // person edits one value instead of text inside the command. A word of argv that is "$NAME"
  // for one of these is printed as "$NAME" in double quotes. Empty for most commands.
  std::vector<std::pair<std::string, std::string>> vars;
  std::string text;  // what is printed: the vars' lines, then argv quoted for a POSIX shell; or the prose
};

// `word` as one word of sh, bash or zsh: as it is when it is not empty and every byte is one of
// A-Z a-z 0-9 _ @ % + = : , . / - and it does not start with '=' (a word needing no quotes in
// any of them); otherwise in single
// quotes, each ' written '\''. Returns nullopt for a word no quoting makes safe to paste into a
// terminal: one holding a control character (C0 including NUL, DEL, C1), a bidirectional
// formatting character (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), or bytes that
// are not UTF-8. Never throws.
std::optional<std::string> shell_quote(std::string_view word);

enum class CommandStatus {
  ok,      // *out holds argv and its quoted text
  unsafe,  // a word cannot be quoted safely (shell_quote): *out is left empty, nothing to print
  empty,   // argv was empty
};

// `argv` as a command: the words kept, the text rendered with shell_quote (assignment words
// quoted after their '='). On unsafe or empty, *out is cleared and *bad_word (when given) names
// the first word that could not be quoted, escaped for display.
CommandStatus make_command(std::vector<std::string> argv, ShellCommand* out, std::string* bad_word = nullptr);

// The same with `vars` set on their own lines before it: each NAME must be a shell variable name
// (letters, digits, '_', not starting with a digit) and each value is quoted as a word. Returns
// unsafe (naming the word) for a bad name, a value or word that cannot be quoted, or a "$NAME"
// word whose NAME is not among `vars`.
CommandStatus make_command_with(std::vector<std::pair<std::string, std::string>> vars, std::vector<std::string> argv,
                                ShellCommand* out, std::string* bad_word = nullptr);

// The command for `argv`, or a ShellCommand with argv empty and `fallback` as its text when argv
// cannot be quoted safely (the fallback must be constant text, never a value from an input).
ShellCommand command_or(std::vector<std::string> argv, const std::string& fallback);

// An authored command (the signal library's verify lines, constant text): when it is plain words
// separated by single spaces, with no shell syntax, it becomes those words, the token `@RECORDER@`
// replaced by `recorder` wherever it stands (the words then quoted as any are). Otherwise it is prose: argv empty, text as
// written. Never throws.
ShellCommand authored_command(const std::string& text, const std::string& recorder);

// The words a POSIX shell would make of `text`, for checking a rendered command: plain words,
// single quotes, double quotes with \ escapes, backslash escapes; nullopt when `text` holds an
// expansion ($, `), a redirection, a pipe, a list operator, a glob or unbalanced quotes (anything
// the renderer never writes). Never throws.
std::optional<std::vector<std::string>> shell_words(std::string_view text);

// {"text": ..., "argv": [...] or null} for a JSON report, and "vars": {NAME: value} when it has any.
nlohmann::json command_json(const ShellCommand& c);

}  // namespace denpex
