#include "compare/evidence_cut.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "compare/fold.h"

namespace denpex {

namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool token_char(char c) { return alnum(c) || c == '.' || c == '_' || c == '+' || c == '-'; }
bool value_char(char c) { return alnum(c) || c == '.' || c == '_'; }

// Tokens of a value (runs of letters, digits, '.' and '_'), trailing dots dropped.
std::set<std::string> value_tokens(std::string_view s) {
  std::set<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (!value_char(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && value_char(s[j])) ++j;
    std::string t(s.substr(i, j - i));
    while (!t.empty() && t.back() == '.') t.pop_back();
    if (!t.empty()) out.insert(t);
    i = j;
  }
  return out;
}

// The first occurrence of `token` in `line` not glued to a letter or digit (a line that repeats
// a value in its summary needs it shown once).
void first_occurrence(std::string_view line, const std::string& token, std::vector<Span>* out) {
  for (std::size_t at = line.find(token); at != std::string_view::npos; at = line.find(token, at + 1)) {
    std::size_t end = at + token.size();
    bool left = at == 0 || !alnum(line[at - 1]);
    bool right = end == line.size() || !alnum(line[end]);
    if (left && right) {
      out->push_back({at, end});
      return;
    }
  }
}

std::vector<Span> merged(std::vector<Span> spans, std::size_t gap) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<Span> out;
  for (const auto& s : spans) {
    if (s.empty()) continue;
    if (!out.empty() && s.start <= out.back().end + gap) out.back().end = std::max(out.back().end, s.end);
    else out.push_back(s);
  }
  return out;
}

// The window [from, to) moved inwards to word boundaries, never into [keep_from, keep_to).
Span snap(std::string_view line, std::size_t from, std::size_t to, std::size_t keep_from, std::size_t keep_to) {
  Span w{from, to};
  if (from > 0) {
    std::size_t space = line.find(' ', from);
    if (space != std::string_view::npos && space < keep_from) w.start = space + 1;
  }
  if (to < line.size()) {
    std::size_t space = line.rfind(' ', to);
    if (space != std::string_view::npos && space >= keep_to) w.end = space;
  }
  return w;
}

std::string head(std::string_view line, std::size_t width) {
  std::size_t cut = line.rfind(' ', width);
  if (cut == std::string_view::npos || cut < width / 2) cut = width;
  return std::string(line.substr(0, cut)) + " ...";
}

// The span widened to the comma-separated field(s) it falls in: "NumelIn=51123456" rather than
// "51123456".
Span field_of(std::string_view s, Span sp) {
  while (sp.start > 0 && s[sp.start - 1] != '(' && !(s[sp.start - 1] == ' ' && sp.start > 1 && s[sp.start - 2] == ','))
    --sp.start;
  while (sp.end < s.size() && s[sp.end] != ',' && s[sp.end] != ')') ++sp.end;
  return sp;
}

std::string subject(const Finding& f) {
  if (!f.ranks.empty()) return rank_phrase(f.ranks, f.hosts);
  if (!f.hosts.empty()) return "a rank on " + fold_hosts(f.hosts);
  return "one side";
}

// What two messages share before they name their own side: up to the last ": " of the common
// prefix.
std::string shared_context(const Finding& a, const Finding& b) {
  std::size_t n = 0;
  while (n < a.message.size() && n < b.message.size() && a.message[n] == b.message[n]) ++n;
  std::size_t colon = a.message.rfind(": ", n);
  if (colon == std::string::npos || colon < 10) return code_name(a.code);
  return a.message.substr(0, colon);
}

// A note in parentheses both messages end with (an assumption the finding rests on, said the
// same way on both sides): kept when the two are merged. "" when they share none.
std::string shared_note(const Finding& a, const Finding& b) {
  std::size_t n = 0;
  while (n < a.message.size() && n < b.message.size() &&
         a.message[a.message.size() - 1 - n] == b.message[b.message.size() - 1 - n])
    ++n;
  std::string_view tail = std::string_view(a.message).substr(a.message.size() - n);
  for (std::size_t p = tail.find(" ("); p != std::string_view::npos; p = tail.find(" (", p + 1)) {
    int depth = 0;
    bool closed_early = false;
    for (std::size_t i = p + 1; i < tail.size(); ++i) {
      depth += tail[i] == '(' ? 1 : tail[i] == ')' ? -1 : 0;
      if (depth == 0 && i + 1 < tail.size()) closed_early = true;
      if (depth == 0) break;
    }
    if (!closed_early && depth == 0 && tail.back() == ')') return std::string(tail.substr(p));
  }
  return "";
}

bool mirrors(const Finding& a, const Finding& b) {
  if (a.code != b.code || a.severity != b.severity || a.comm != b.comm || a.seq != b.seq) return false;
  if (a.found.empty() || a.found == a.expected || a.found != b.expected || a.expected != b.found) return false;
  for (int r : a.ranks)
    if (std::find(b.ranks.begin(), b.ranks.end(), r) != b.ranks.end()) return false;
  return !(a.ranks.empty() && b.ranks.empty() && a.hosts == b.hosts);
}

Finding merge_pair(const Finding& a, const Finding& b) {
  Finding m = a;
  m.ranks.insert(m.ranks.end(), b.ranks.begin(), b.ranks.end());
  std::sort(m.ranks.begin(), m.ranks.end());
  m.hosts.insert(m.hosts.end(), b.hosts.begin(), b.hosts.end());
  std::sort(m.hosts.begin(), m.hosts.end());
  m.hosts.erase(std::unique(m.hosts.begin(), m.hosts.end()), m.hosts.end());
  Span da = difference_span(a.found, b.found), db = difference_span(b.found, a.found);
  std::string va = da.empty() ? a.found : a.found.substr(field_of(a.found, da).start, field_of(a.found, da).end - field_of(a.found, da).start);
  std::string vb = db.empty() ? b.found : b.found.substr(field_of(b.found, db).start, field_of(b.found, db).end - field_of(b.found, db).start);
  m.message = fmt::format("{}: {} has {}, {} has {} (no majority){}", shared_context(a, b), subject(a), va, subject(b), vb,
                          shared_note(a, b));
  m.found = fmt::format("{}: {}; {}: {}", subject(a), a.found, subject(b), b.found);
  m.expected.clear();
  return m;
}

}  // namespace

Span difference_span(std::string_view line, std::string_view other) {
  std::size_t n = std::min(line.size(), other.size());
  std::size_t p = 0;
  while (p < n && line[p] == other[p]) ++p;
  if (p == line.size() && p == other.size()) return {};
  std::size_t q = 0;
  while (q < n - p && line[line.size() - 1 - q] == other[other.size() - 1 - q]) ++q;
  Span s{p, line.size() - q};
  while (s.start > 0 && token_char(line[s.start - 1])) --s.start;
  while (s.end < line.size() && token_char(line[s.end])) ++s.end;
  if (s.end > line.size()) s.end = line.size();
  return s;
}

std::vector<Span> value_spans(std::string_view line, std::string_view a, std::string_view b, std::size_t max_spans) {
  std::set<std::string> ta = value_tokens(a), tb = value_tokens(b);
  std::vector<Span> spans;
  for (const auto* pair : {&ta, &tb}) {
    const std::set<std::string>& mine = *pair;
    const std::set<std::string>& theirs = pair == &ta ? tb : ta;
    for (const auto& t : mine)
      if (!theirs.count(t) && (t.size() >= 2 || mine.size() == 1)) first_occurrence(line, t, &spans);
  }
  spans = merged(std::move(spans), 0);
  if (spans.size() > max_spans) spans.resize(max_spans);
  return spans;
}

std::string cut_around(std::string_view line, std::vector<Span> keep, std::size_t width) {
  if (line.size() <= width) return std::string(line);
  for (auto& s : keep) s.end = std::min(s.end, line.size());
  keep = merged(std::move(keep), 0);
  if (keep.empty()) return head(line, width);
  std::size_t total = 0;
  for (const auto& s : keep) total += s.end - s.start;
  // Three quarters of the context before a span: what a value belongs to is said before it.
  std::size_t ctx = std::max<std::size_t>(24, (width > total ? width - total : 0) / keep.size());
  std::size_t before = ctx * 3 / 4, after = ctx - before;
  std::vector<Span> windows;
  for (const auto& s : keep) {
    std::size_t from = s.start > before ? s.start - before : 0;
    std::size_t to = std::min(line.size(), s.end + after);
    windows.push_back(snap(line, from, to, s.start, s.end));
  }
  windows = merged(std::move(windows), 5);
  std::string out = windows.front().start > 0 ? "... " : "";
  for (std::size_t i = 0; i < windows.size(); ++i) {
    if (i > 0) out += " ... ";
    out += line.substr(windows[i].start, windows[i].end - windows[i].start);
  }
  if (windows.back().end < line.size()) out += " ...";
  return out;
}

std::string cut_around_difference(std::string_view line, std::string_view other, std::size_t width) {
  return cut_around(line, {difference_span(line, other)}, width);
}

std::vector<EvidenceLine> cut_evidence(const std::vector<EvidenceLine>& lines, std::string_view found,
                                       std::string_view expected, std::size_t width) {
  std::vector<EvidenceLine> out;
  std::set<std::pair<std::string, long long>> seen_at;
  std::set<std::string> seen_text;
  for (const auto& e : lines) {
    bool placed = e.line > 0 && !seen_at.insert({e.file, e.line}).second;
    if (placed || !seen_text.insert(e.text).second) continue;
    out.push_back(e);
  }
  std::vector<std::string> texts;
  for (const auto& e : out) texts.push_back(e.text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::vector<Span> spans = value_spans(texts[i], found, expected);
    if (spans.empty() && out.size() > 1) {
      Span d = difference_span(texts[i], texts[i == 0 ? 1 : 0]);
      // Lines of different kinds differ everywhere: nothing to centre on.
      if (!d.empty() && (d.end - d.start) * 10 < texts[i].size() * 6) spans.push_back(d);
    }
    out[i].text = cut_around(texts[i], spans, width);
  }
  return out;
}

std::vector<MergedFinding> merge_mirror_images(const std::vector<Finding>& findings) {
  std::vector<MergedFinding> out;
  std::vector<bool> used(findings.size(), false);
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    std::size_t mate = findings.size();
    for (std::size_t j = i + 1; j < findings.size() && mate == findings.size(); ++j)
      if (!used[j] && mirrors(findings[i], findings[j])) mate = j;
    if (mate == findings.size()) {
      out.push_back({findings[i], {i}});
      continue;
    }
    used[mate] = true;
    out.push_back({merge_pair(findings[i], findings[mate]), {i, mate}});
  }
  return out;
}

bool merged_sides(std::string_view found, std::string* a, std::string* b) {
  if (found.substr(0, 4) != "rank") return false;
  std::size_t colon = found.find(": ");
  std::size_t second = found.find("; rank", colon == std::string_view::npos ? 0 : colon);
  if (colon == std::string_view::npos || second == std::string_view::npos) return false;
  std::size_t colon2 = found.find(": ", second + 2);
  if (colon2 == std::string_view::npos) return false;
  *a = std::string(found.substr(colon + 2, second - colon - 2));
  *b = std::string(found.substr(colon2 + 2));
  return !a->empty() && !b->empty();
}

}  // namespace denpex
