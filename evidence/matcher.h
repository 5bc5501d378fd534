// The engine over the signal library: a literal pre-filter over every line (one pass of an
// RE2::Set of all literals of a scope), then, for the candidate entries only and in table order,
// the entry's RE2 pattern; the first that matches gives a Hit with its named fields.
// Immutable once built: one Matcher serves every reader thread.
#pragma once

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "evidence/signal_table.h"

namespace re2 {
class RE2;
}

namespace denpex::evidence {

struct Hit {
  const Signal* signal = nullptr;
  int index = -1;                 // the entry's place in the table
  std::string_view text;          // what was matched (a line, or an NCCL record's body)
  std::array<std::string_view, static_cast<size_t>(Field::kCount)> fields{};
  std::array<bool, static_cast<size_t>(Field::kCount)> present{};
  bool has(Field f) const { return present[static_cast<size_t>(f)]; }
  std::string_view get(Field f) const { return fields[static_cast<size_t>(f)]; }
};

class Matcher {
 public:
  // Builds the engine over `table` (which must outlive it and be valid).
  explicit Matcher(const SignalTable& table);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // The first entry of `scope` that matches `text`; false (and *hit untouched) when none does.
  bool match(Scope scope, std::string_view text, Hit* hit) const;
  // Whether entry `index` matches `text` (fills *hit). For tests and readers of one entry.
  bool match_entry(int index, std::string_view text, Hit* hit) const;
  // Index of the entry with this id, -1 when absent.
  int index_of(std::string_view id) const;
  // Index of the first entry read by `reader`, -1 when none.
  int first_of_reader(std::string_view reader) const;
  const SignalTable& table() const { return table_; }

 private:
  struct Compiled;
  struct ScopeSet;
  const SignalTable& table_;
  std::vector<std::unique_ptr<Compiled>> compiled_;
  std::vector<std::unique_ptr<ScopeSet>> scopes_;
};

// The engine over builtin_signals(), built on first use.
const Matcher& builtin_matcher();

}  // namespace denpex::evidence
