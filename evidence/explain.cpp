#include "evidence/explain.h"

#include <algorithm>
#include <cstring>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/finding_codes.h"
#include "evidence/log_reader.h"

namespace denpex::evidence {

namespace {

constexpr size_t kWidth = 100;    // text lines wrap here
constexpr size_t kLabel = 14;     // the value column of "  label       value"
// A line to explain is a paste, not a log: what is past this is not read.
constexpr size_t kMaxExplainedBytes = 64 * 1024;

// "  label       value", the value wrapped at kWidth with continuation lines under it. A word
// longer than the line (a command, an example) is never broken.
std::string labelled(const std::string& label, const std::string& value, size_t column = kLabel) {
  std::string out = "  " + label;
  out.resize(std::max(column, out.size() + 1), ' ');
  size_t col = out.size();
  size_t at = 0;
  bool first = true;
  while (at < value.size()) {
    size_t end = value.find(' ', at);
    if (end == std::string::npos) end = value.size();
    std::string word = value.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!first && col + 1 + word.size() > kWidth) {
      out += "\n" + std::string(column, ' ');
      col = column;
      first = true;
    }
    if (!first) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    first = false;
  }
  return out + "\n";
}

bool env_name_start(const std::string& word) {
  if (word.size() < 3 || !std::isupper(static_cast<unsigned char>(word[0]))) return false;
  for (char c : word) {
    if (c == '=') return true;
    if (!std::isupper(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) &&
        c != '_')
      return false;
  }
  return word.find('_') != std::string::npos;
}

// The value column for a list of ids shown as "    id  text".
// An index line's width: its summary is cut to fit.
constexpr size_t kIndexWidth = 120;

// The first clause of `text` (to its first ". ", "; " or ": "), without Markdown's backticks,
// cut at a word to at most `width` characters ("..." where cut): one line of an index.
std::string first_clause(const std::string& text, size_t width) {
  std::string plain;
  for (char c : text)
    if (c != '`') plain += c;
  size_t end = plain.size();
  for (const char* stop : {". ", "; ", ": "}) end = std::min(end, plain.find(stop));
  plain.resize(end);
  if (plain.size() <= width) return plain;
  size_t cut = plain.rfind(' ', width - 3);
  return plain.substr(0, cut == std::string::npos ? width - 3 : cut) + "...";
}

size_t id_column(const std::vector<const Signal*>& sigs) {
  size_t w = 0;
  for (const Signal* s : sigs) w = std::max(w, s->id.size());
  return std::min<size_t>(w + 6, 48);
}

// "  label       value" with the value at `column`, on one line, never wrapped.
std::string verbatim_at(const std::string& label, const std::string& value, size_t column) {
  std::string out = "  " + label;
  out.resize(std::max(column, out.size() + 1), ' ');
  return out + value + "\n";
}

// "  label       value" on one line, never wrapped: a command or a log line to copy whole.
std::string verbatim(const std::string& label, const std::string& value) {
  std::string out = "  " + label;
  out.resize(kLabel, ' ');
  return out + value + "\n";
}

nlohmann::json code_json(const FindingCodeInfo& row) {
  return {{"code", row.code},
          {"severity", to_string(row.severity)},
          {"severity_note", row.severity_note},
          {"mode", to_string(row.mode)},
          {"origin", row.origin == CodeOrigin::contract ? "contract" : "extension"},
          {"meaning", row.meaning},
          {"since", row.since}};
}

std::string code_line(const FindingCodeInfo& row) {
  std::string sev = to_string(row.severity);
  if (*row.severity_note) sev += std::string(" (") + row.severity_note + ")";
  return fmt::format("severity {}; mode {}; {}; since {}", sev, to_string(row.mode),
                     row.origin == CodeOrigin::contract ? "in the contract" : "an extension",
                     row.since);
}

Explanation explain_signal(const Signal& s) {
  Explanation e;
  e.status = ExplainStatus::signature;
  e.json = signal_json(s);
  e.json["kind"] = "signature";
  std::string t = fmt::format("{}: a signature of the {} family (the line's role: {})\n", s.id,
                              s.family, s.role);
  t += labelled("indicates", s.summary);
  if (!s.implicates.empty()) t += labelled("implicates", s.implicates);
  if (!s.tells_apart.empty()) t += labelled("tells apart", s.tells_apart);
  std::vector<std::string> vars = rerun_variables(s.tells_apart);
  if (!vars.empty()) t += labelled("rerun with", fmt::format("{}", fmt::join(vars, " ")));
  t += labelled("fix", s.fix);
  t += verbatim("verify", expand_verify(s.verify));
  const FindingCodeInfo* row = find_finding_code(s.code);
  t += labelled("code", row ? s.code + " (" + code_line(*row) + ")" : s.code);
  t += verbatim("example", s.examples.front());
  e.text = t;
  return e;
}

Explanation explain_code(const FindingCodeInfo& row, const SignalTable& table) {
  Explanation e;
  e.status = ExplainStatus::code;
  e.json = code_json(row);
  e.json["kind"] = "code";
  std::vector<const Signal*> sigs = signals_with_code(table, row.code);
  nlohmann::json ids = nlohmann::json::array();
  for (const Signal* s : sigs) ids.push_back(s->id);
  e.json["signatures"] = ids;
  std::string t = fmt::format("{}: a finding code ({})\n", row.code, code_line(row));
  t += labelled("meaning", row.meaning);
  if (sigs.empty()) {
    t += labelled("signatures", "none: no line of a log gives this code; it comes from the " +
                                    std::string(to_string(row.mode)) + " mode's rules");
  } else {
    t += labelled("signatures", fmt::format("{} in the signal library give this code "
                                            "(denpex-probe explain ID for one):",
                                            sigs.size()));
    const size_t col = id_column(sigs);
    for (const Signal* s : sigs) t += labelled("  " + s->id, s->summary, col);
  }
  e.text = t;
  return e;
}

Explanation explain_family(const std::string& family, const SignalTable& table) {
  Explanation e;
  e.status = ExplainStatus::family;
  e.json = {{"kind", "family"}, {"family", family}, {"signatures", nlohmann::json::array()}};
  std::string t = fmt::format("{}: a family of the signal library\n", family);
  std::vector<const Signal*> sigs;
  for (const Signal& s : table.signals)
    if (s.family == family) sigs.push_back(&s);
  const size_t col = id_column(sigs);
  for (const Signal* s : sigs) {
    e.json["signatures"].push_back({{"id", s->id}, {"code", s->code}, {"summary", s->summary}});
    t += labelled(s->id, s->summary, col);
  }
  e.text = t;
  return e;
}

Explanation explain_index(const SignalTable& table) {
  Explanation e;
  e.status = ExplainStatus::index;
  e.json = {{"kind", "index"}, {"signatures", nlohmann::json::array()},
            {"codes", nlohmann::json::array()}};
  std::string t = fmt::format("Signatures ({}), by family, with what each reads (explain NAME gives its finding code):\n",
                              table.signals.size());
  std::vector<const Signal*> all;
  for (const Signal& s : table.signals) all.push_back(&s);
  const size_t col = id_column(all);
  for (const std::string& family : family_order(table)) {
    t += "  " + family + "\n";
    for (const Signal& s : table.signals)
      if (s.family == family) {
        e.json["signatures"].push_back({{"id", s.id}, {"family", s.family}, {"code", s.code}, {"summary", s.summary}});
        t += verbatim_at("  " + s.id, first_clause(s.summary, kIndexWidth - col), col);
      }
  }
  t += fmt::format("Finding codes ({}), with what each means:\n", finding_codes().size());
  size_t code_col = 0;
  for (const FindingCodeInfo& row : finding_codes()) code_col = std::max(code_col, std::strlen(row.code) + 6);
  for (const FindingCodeInfo& row : finding_codes()) {
    e.json["codes"].push_back({{"code", row.code}, {"mode", to_string(row.mode)}, {"meaning", row.meaning}});
    t += verbatim_at(row.code, first_clause(row.meaning, kIndexWidth - code_col), code_col);
  }
  t += "denpex-probe explain NAME says what one of them means.\n";
  e.text = t;
  return e;
}

}  // namespace

std::vector<std::string> rerun_variables(const std::string& tells_apart) {
  std::vector<std::string> out;
  const std::string key = "rerun with ";
  size_t at = tells_apart.find(key);
  while (at != std::string::npos) {
    at += key.size();
    while (at < tells_apart.size()) {
      size_t end = tells_apart.find(' ', at);
      if (end == std::string::npos) end = tells_apart.size();
      std::string word = tells_apart.substr(at, end - at);
      while (!word.empty() && (word.back() == ',' || word.back() == ';' || word.back() == '.' ||
                               word.back() == ')'))
        word.pop_back();
      if (!env_name_start(word) && !(word.size() > 2 && env_name_start(word + "="))) break;
      if (std::find(out.begin(), out.end(), word) == out.end()) out.push_back(word);
      at = end + 1;
    }
    at = tells_apart.find(key, at);
  }
  return out;
}

std::vector<const Signal*> signals_with_code(const SignalTable& table, const std::string& code) {
  std::vector<const Signal*> out;
  for (const Signal& s : table.signals)
    if (s.code == code) out.push_back(&s);
  return out;
}

std::vector<std::string> family_order(const SignalTable& table) {
  std::vector<std::string> out = {"pytorch", "launcher", "horovod", "nccl", "cuda", "install"};
  std::vector<std::string> present;
  for (const std::string& f : out)
    for (const Signal& s : table.signals)
      if (s.family == f) {
        present.push_back(f);
        break;
      }
  for (const Signal& s : table.signals)
    if (std::find(present.begin(), present.end(), s.family) == present.end())
      present.push_back(s.family);
  return present;
}

nlohmann::json signal_json(const Signal& s) {
  return {{"id", s.id},
          {"family", s.family},
          {"role", s.role},
          {"code", s.code},
          {"summary", s.summary},
          {"implicates", s.implicates},
          {"tells_apart", s.tells_apart},
          {"rerun_with", rerun_variables(s.tells_apart)},
          {"fix", s.fix},
          {"verify", expand_verify(s.verify)},
          {"verify_argv", command_json(verify_command(s.verify))["argv"]},
          {"example", s.examples.empty() ? std::string() : s.examples.front()}};
}

Explanation explain(const std::string& name, const SignalTable& table) {
  Explanation e;
  if (!table.error.empty()) {
    e.status = ExplainStatus::table_error;
    e.text = "the signal library does not parse: " + table.error + "\n";
    e.json = {{"error", e.text.substr(0, e.text.size() - 1)}};
    return e;
  }
  if (name.empty()) return explain_index(table);
  for (const Signal& s : table.signals)
    if (s.id == name) return explain_signal(s);
  if (const FindingCodeInfo* row = find_finding_code(name)) return explain_code(*row, table);
  for (const Signal& s : table.signals)
    if (s.family == name) return explain_family(name, table);
  e.status = ExplainStatus::unknown;
  e.text = fmt::format("'{}' is neither a signature nor a finding code (denpex-probe explain "
                       "lists them)\n",
                       name);
  e.json = {{"error", "unknown name"}, {"name", name}};
  return e;
}

std::vector<const Signal*> signatures_reading(const std::string& text) {
  // The engine itself, not the matcher alone: an NCCL line is matched in its record's scope
  // after its header, a pasted line after its launcher prefix, as in a log.
  LogReader reader;
  reader.set_read_threads(1);
  reader.read_text(text.size() > kMaxExplainedBytes ? text.substr(0, kMaxExplainedBytes) : text, "line");
  reader.finish();
  const SignalTable& table = builtin_signals();
  std::vector<const Signal*> out;
  for (size_t i = 0; i < reader.hits.size() && i < table.signals.size(); ++i)
    if (reader.hits[i] > 0) out.push_back(&table.signals[i]);
  return out;
}

bool looks_like_line(const std::string& name) {
  // Names (ids, codes, families) are single words; a log line has words.
  return name.find_first_of(" \t\n") != std::string::npos;
}

Explanation explain_line(const std::string& text, const SignalTable& table) {
  Explanation e;
  std::vector<const Signal*> sigs = table.error.empty() ? signatures_reading(text) : std::vector<const Signal*>{};
  e.json = {{"line", text}, {"signatures", nlohmann::json::array()}};
  if (sigs.empty()) {
    e.status = ExplainStatus::unread;
    e.text = "no signature of the signal library reads this line (denpex-probe explain lists them)\n";
    e.json["error"] = "no signature reads this line";
    return e;
  }
  e.status = ExplainStatus::line;
  std::vector<std::string> ids;
  for (const Signal* s : sigs) ids.push_back(s->id);
  e.text = fmt::format("read by {}\n", fmt::join(ids, ", "));
  for (const Signal* s : sigs) {
    Explanation one = explain_signal(*s);
    e.text += "\n" + one.text;
    e.json["signatures"].push_back(one.json);
  }
  return e;
}

std::vector<std::string> explain_names(const SignalTable& table) {
  std::vector<std::string> out;
  for (const Signal& s : table.signals) out.push_back(s.id);
  for (const FindingCodeInfo& row : finding_codes()) out.push_back(row.code);
  for (const std::string& f : family_order(table)) out.push_back(f);
  return out;
}

void add_suggestion(Explanation* e, const std::string& suggestion) {
  if (e->status != ExplainStatus::unknown || suggestion.empty()) return;
  e->suggestion = suggestion;
  e->json["did_you_mean"] = suggestion;
  e->text = fmt::format("'{}' is neither a signature nor a finding code; did you mean '{}'? "
                        "(denpex-probe explain lists them)\n",
                        e->json["name"].get<std::string>(), suggestion);
}

}  // namespace denpex::evidence
