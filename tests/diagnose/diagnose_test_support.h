// What the diagnose tests share: finding a diagnosis's finding by code, and checking that a
// set of signal-library entries each read their own examples (so that an entry's examples
// cannot silently be matched by another entry placed before it).
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

#include "diagnose/diagnosis.h"
#include "evidence/log_reader.h"
#include "evidence/matcher.h"

namespace denpex::diag::test {

// `text` read whole as one file, "t.log", and finished.
inline evidence::LogReader read_log(const std::string& text) {
  evidence::LogReader r;
  r.read_text(text, "t.log");
  r.finish();
  return r;
}

// The first finding of `d` with `code`; nullptr when there is none.
inline const DxFinding* find(const Diagnosis& d, const std::string& code) {
  for (const auto& x : d.findings)
    if (code_name(x.f.code) == code) return &x;
  return nullptr;
}

// Every example of every entry `ids` names is matched, at line scope, by that entry itself.
inline void check_examples_read_by_own_entry(std::initializer_list<const char*> ids) {
  const evidence::Matcher& m = evidence::builtin_matcher();
  for (const char* id : ids) {
    int i = m.index_of(id);
    REQUIRE(i >= 0);
    for (const auto& ex : m.table().signals[static_cast<size_t>(i)].examples) {
      INFO(id << ": " << ex);
      evidence::Hit hit;
      REQUIRE(m.match(evidence::Scope::line, ex, &hit));
      CHECK(hit.signal->id == id);
    }
  }
}

}  // namespace denpex::diag::test
