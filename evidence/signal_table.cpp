#include "evidence/signal_table.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>

#include "compare/finding_codes.h"
#include "evidence/families.h"

namespace denpex::evidence {

// The table's text, generated at build time from evidence/signals.txt (evidence/CMakeLists.txt).
extern const char kSignalsText[];
extern const unsigned long kSignalsTextSize;

namespace {

constexpr const char* kFieldNames[] = {
    "rank", "local_rank", "group_rank", "pid", "host", "device", "op", "seq", "count", "sizes",
    "dtype", "version", "cuda", "symbol", "library", "exit_code", "signal", "time", "ranks",
    "group", "what", "path", "name", "value", "numel_in", "numel_out", "last_enqueued",
    "last_completed", "nranks", "comm", "comm_id", "parent", "split", "color", "world",
    "expected", "found", "peer"};
static_assert(sizeof(kFieldNames) / sizeof(kFieldNames[0]) == static_cast<size_t>(Field::kCount),
              "one name per field");

const std::set<std::string>& known_roles() {
  static const std::set<std::string> roles = {"initiating", "collateral", "report", "installation",
                                              "launcher", "calls", "context", "fault", "fabric", "build", "cause", "hang"};
  return roles;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Every named group of `pattern` is a field; RE2 compiles it. "" when fine.
std::string check_pattern(const std::string& pattern, bool one_group) {
  RE2 re(pattern, RE2::Quiet);
  if (!re.ok()) return fmt::format("pattern does not compile: {}", re.error());
  for (const auto& [name, index] : re.NamedCapturingGroups()) {
    (void)index;
    Field f;
    if (!field_from_name(name, &f)) return fmt::format("unknown field name '{}'", name);
  }
  if (one_group && re.NamedCapturingGroups().empty()) return "a field pattern needs a named group";
  return {};
}

std::string check_signal(const Signal& s) {
  if (s.reader.empty() || s.kind.empty() || s.role.empty() || s.code.empty()) return "needs reader, kind, role and code";
  if (!known_roles().count(s.role)) return fmt::format("unknown role '{}'", s.role);
  if (!find_finding_code(s.code))
    return fmt::format("unknown finding code '{}' (compare/finding_codes.cpp lists them)", s.code);
  if (std::string k = unknown_kind(s.reader, s.kind); !k.empty()) return k;
  if (s.literals.empty()) return "needs at least one literal";
  for (const auto& l : s.literals)
    if (l.empty()) return "empty literal";
  if (s.pattern.empty()) return "needs a pattern";
  if (s.fix.empty() || s.verify.empty() || s.summary.empty()) return "needs summary, fix and verify";
  if (s.examples.empty()) return "needs an example";
  std::string e = check_pattern(s.pattern, false);
  if (!e.empty()) return e;
  for (const auto& f : s.fields)
    if (!(e = check_pattern(f, true)).empty()) return "field " + e;
  return {};
}

// Sets one key of `s`; false for an unknown key.
bool set_key(Signal* s, const std::string& key, const std::string& value) {
  std::map<std::string, std::string*> one = {
      {"family", &s->family}, {"reader", &s->reader}, {"kind", &s->kind}, {"role", &s->role},
      {"code", &s->code}, {"pattern", &s->pattern}, {"summary", &s->summary},
      {"implicates", &s->implicates}, {"tells_apart", &s->tells_apart}, {"fix", &s->fix},
      {"verify", &s->verify}};
  auto it = one.find(key);
  if (it != one.end()) {
    *it->second = value;
    return true;
  }
  if (key == "literal") s->literals.push_back(value);
  else if (key == "field") s->fields.push_back(value);
  else if (key == "example") s->examples.push_back(value);
  else if (key == "scope" && value == "line") s->scope = Scope::line;
  else if (key == "scope" && value == "nccl-info") s->scope = Scope::nccl_info;
  else if (key == "scope" && value == "nccl-warn") s->scope = Scope::nccl_warn;
  else return false;
  return true;
}

// Ends the block in `cur`: checks it and appends it. False with out->error set on a problem.
bool close_block(Signal* cur, std::set<std::string>* ids, SignalTable* out) {
  if (cur->id.empty()) return true;
  std::string e = check_signal(*cur);
  if (e.empty() && !ids->insert(cur->id).second) e = "duplicate id";
  if (!e.empty()) {
    out->error = fmt::format("signal table line {}: [{}]: {}", cur->line, cur->id, e);
    return false;
  }
  cur->finding = find_finding_code(cur->code)->id;
  out->signals.push_back(std::move(*cur));
  *cur = Signal();
  return true;
}

}  // namespace

bool field_from_name(const std::string& name, Field* out) {
  for (size_t i = 0; i < static_cast<size_t>(Field::kCount); ++i)
    if (name == kFieldNames[i]) {
      *out = static_cast<Field>(i);
      return true;
    }
  return false;
}

const char* field_name(Field f) { return kFieldNames[static_cast<size_t>(f)]; }

SignalTable parse_signal_table(const std::string& text) {
  SignalTable out;
  std::set<std::string> ids;
  Signal cur;
  size_t at = 0;
  int line_no = 0;
  while (at <= text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(at, nl - at);
    at = nl + 1;
    ++line_no;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t.front() == '[' && t.back() == ']') {
      if (!close_block(&cur, &ids, &out)) return out;
      cur.id = t.substr(1, t.size() - 2);
      cur.line = line_no;
      continue;
    }
    size_t colon = line.find(": ");
    if (cur.id.empty() || colon == std::string::npos) {
      out.error = fmt::format("signal table line {}: expected '[id]' or 'key: value'", line_no);
      return out;
    }
    // Values keep their inner spaces; a literal may end in a space, so only the key is trimmed.
    std::string key = trim(line.substr(0, colon));
    std::string value = line.substr(colon + 2);
    if (key != "literal" && key != "example") value = trim(value);
    if (!set_key(&cur, key, value)) {
      out.error = fmt::format("signal table line {}: unknown key or value '{}'", line_no, key);
      return out;
    }
  }
  close_block(&cur, &ids, &out);
  if (out.error.empty() && out.signals.empty()) out.error = "signal table is empty";
  return out;
}

const std::string& builtin_signal_text() {
  static const std::string text(kSignalsText, kSignalsTextSize);
  return text;
}

const SignalTable& builtin_signals() {
  static const SignalTable table = parse_signal_table(builtin_signal_text());
  return table;
}

ShellCommand verify_command(const std::string& verify) { return authored_command(verify, DENPEX_RECORDER_PATH); }

std::string expand_verify(const std::string& verify) { return verify_command(verify).text; }

}  // namespace denpex::evidence
