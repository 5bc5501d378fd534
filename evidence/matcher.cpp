#include "evidence/matcher.h"

#include <algorithm>

#include <re2/re2.h>
#include <re2/set.h>

namespace denpex::evidence {

namespace {

constexpr int kScopes = 3;

// Named groups of `re` as (group number, field).
std::vector<std::pair<int, Field>> groups_of(const RE2& re) {
  std::vector<std::pair<int, Field>> out;
  for (const auto& [name, index] : re.NamedCapturingGroups()) {
    Field f;
    if (field_from_name(name, &f)) out.emplace_back(index, f);
  }
  return out;
}

// Runs `re` unanchored over `text` and stores its named groups in *hit. False when no match.
bool run(const RE2& re, const std::vector<std::pair<int, Field>>& groups, std::string_view text, Hit* hit) {
  re2::StringPiece sub[16];
  int n = std::min(re.NumberOfCapturingGroups() + 1, 16);
  if (!re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED, sub, n)) return false;
  for (const auto& [index, field] : groups) {
    if (index >= n || sub[index].data() == nullptr) continue;
    size_t i = static_cast<size_t>(field);
    hit->fields[i] = std::string_view(sub[index].data(), sub[index].size());
    hit->present[i] = true;
  }
  return true;
}

}  // namespace

struct Matcher::Compiled {
  std::unique_ptr<RE2> pattern;
  std::vector<std::pair<int, Field>> groups;
  std::vector<std::unique_ptr<RE2>> fields;
  std::vector<std::vector<std::pair<int, Field>>> field_groups;
};

// All literals of one scope in one RE2::Set: one pass over a line says which entries are
// candidates. `owners[i]` are the entries (ascending) that literal i belongs to.
struct Matcher::ScopeSet {
  std::unique_ptr<RE2::Set> set;
  std::vector<std::vector<int>> owners;
  bool empty = true;
};

Matcher::Matcher(const SignalTable& table) : table_(table) {
  RE2::Options lit;
  lit.set_literal(true);
  lit.set_log_errors(false);
  for (int s = 0; s < kScopes; ++s) {
    scopes_.push_back(std::make_unique<ScopeSet>());
    scopes_.back()->set = std::make_unique<RE2::Set>(lit, RE2::UNANCHORED);
  }
  for (size_t i = 0; i < table.signals.size(); ++i) {
    const Signal& sig = table.signals[i];
    auto c = std::make_unique<Compiled>();
    c->pattern = std::make_unique<RE2>(sig.pattern, RE2::Quiet);
    c->groups = groups_of(*c->pattern);
    for (const auto& f : sig.fields) {
      c->fields.push_back(std::make_unique<RE2>(f, RE2::Quiet));
      c->field_groups.push_back(groups_of(*c->fields.back()));
    }
    compiled_.push_back(std::move(c));
    ScopeSet& sc = *scopes_[static_cast<size_t>(sig.scope)];
    for (const auto& l : sig.literals) {
      int k = sc.set->Add(l, nullptr);
      if (k < 0) continue;
      if (static_cast<size_t>(k) >= sc.owners.size()) sc.owners.resize(static_cast<size_t>(k) + 1);
      sc.owners[static_cast<size_t>(k)].push_back(static_cast<int>(i));
      sc.empty = false;
    }
  }
  for (auto& sc : scopes_)
    if (!sc->empty) sc->set->Compile();
}

Matcher::~Matcher() = default;

bool Matcher::match_entry(int index, std::string_view text, Hit* hit) const {
  if (index < 0 || static_cast<size_t>(index) >= compiled_.size()) return false;
  const Compiled& c = *compiled_[static_cast<size_t>(index)];
  Hit h;
  if (!run(*c.pattern, c.groups, text, &h)) return false;
  for (size_t f = 0; f < c.fields.size(); ++f) run(*c.fields[f], c.field_groups[f], text, &h);
  h.signal = &table_.signals[static_cast<size_t>(index)];
  h.index = index;
  h.text = text;
  *hit = h;
  return true;
}

bool Matcher::match(Scope scope, std::string_view text, Hit* hit) const {
  const ScopeSet& sc = *scopes_[static_cast<size_t>(scope)];
  if (sc.empty) return false;
  std::vector<int> lits;
  if (!sc.set->Match(re2::StringPiece(text.data(), text.size()), &lits)) return false;
  // Candidate entries in table order; the first whose pattern matches wins.
  std::vector<int> cand;
  for (int k : lits) {
    const auto& o = sc.owners[static_cast<size_t>(k)];
    cand.insert(cand.end(), o.begin(), o.end());
  }
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  for (int i : cand)
    if (match_entry(i, text, hit)) return true;
  return false;
}

int Matcher::index_of(std::string_view id) const {
  for (size_t i = 0; i < table_.signals.size(); ++i)
    if (table_.signals[i].id == id) return static_cast<int>(i);
  return -1;
}

int Matcher::first_of_reader(std::string_view reader) const {
  for (size_t i = 0; i < table_.signals.size(); ++i)
    if (table_.signals[i].reader == reader) return static_cast<int>(i);
  return -1;
}

const Matcher& builtin_matcher() {
  static const Matcher m(builtin_signals());
  return m;
}

}  // namespace denpex::evidence
