#include "probe/wheel_metadata.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "probe/text.h"

namespace denpex {

namespace {

constexpr size_t kMaxMetadata = 1024 * 1024;
constexpr size_t kMaxRecord = 4 * 1024 * 1024;
constexpr size_t kMaxSiteEntries = 100000;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The release segments of a version ("2.26.2.post1" -> {2, 26, 2}); `wildcard` is set for a
// trailing ".*". Empty when it does not start with a number.
std::vector<long> release_of(const std::string& v, bool* wildcard) {
  std::vector<long> out;
  *wildcard = false;
  size_t i = 0;
  if (i < v.size() && (v[i] == 'v' || v[i] == 'V')) ++i;
  while (i < v.size()) {
    if (v[i] == '*') {
      *wildcard = true;
      break;
    }
    if (!std::isdigit(static_cast<unsigned char>(v[i]))) break;
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) && n < 100000000)
      n = n * 10 + (v[i++] - '0');
    out.push_back(n);
    if (i < v.size() && v[i] == '.') ++i; else break;
  }
  return out;
}

// -1, 0, 1 comparing release segments, missing segments as 0; with `prefix_len` > 0 only that
// many segments count (== with a wildcard).
int compare_release(std::vector<long> a, std::vector<long> b, size_t prefix_len) {
  if (prefix_len) {
    a.resize(prefix_len, 0);
    b.resize(prefix_len, 0);
  }
  size_t n = std::max(a.size(), b.size());
  a.resize(n, 0);
  b.resize(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

SpecMatch one_clause(const std::vector<long>& have, const std::string& clause) {
  static const char* const ops[] = {"===", "~=", "==", "!=", ">=", "<=", ">", "<"};
  std::string op;
  for (const char* o : ops)
    if (clause.compare(0, std::string(o).size(), o) == 0) {
      op = o;
      break;
    }
  if (op.empty() || op == "===" || op == "~=") return SpecMatch::unknown;
  bool wildcard = false;
  std::vector<long> want = release_of(trim(clause.substr(op.size())), &wildcard);
  if (want.empty()) return SpecMatch::unknown;
  if (wildcard && op != "==" && op != "!=") return SpecMatch::unknown;
  int c = compare_release(have, want, wildcard ? want.size() : 0);
  bool ok = op == "==" ? c == 0 : op == "!=" ? c != 0 : op == ">=" ? c >= 0
          : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c < 0;
  return ok ? SpecMatch::yes : SpecMatch::no;
}

// "platform_machine == 'x86_64'" on this machine; true for what it does not evaluate.
bool clause_holds(const std::string& clause, const std::string& machine) {
  std::string op;
  size_t at = std::string::npos;
  for (const char* o : {"==", "!="}) {
    at = clause.find(o);
    if (at != std::string::npos) {
      op = o;
      break;
    }
  }
  if (op.empty()) return true;
  auto unquote = [](std::string s) {
    s = trim(s);
    if (s.size() >= 2 && (s[0] == '"' || s[0] == '\'') && s.back() == s[0])
      return std::make_pair(true, s.substr(1, s.size() - 2));
    return std::make_pair(false, s);
  };
  auto lhs = unquote(clause.substr(0, at));
  auto rhs = unquote(clause.substr(at + 2));
  if (lhs.first == rhs.first) return true;  // both literals or both variables: not ours
  const std::string& var = lhs.first ? rhs.second : lhs.second;
  const std::string& value = lhs.first ? lhs.second : rhs.second;
  std::string have;
  if (var == "platform_system") have = "Linux";
  else if (var == "sys_platform") have = "linux";
  else if (var == "platform_machine") have = machine;
  else if (var == "extra") return op == "!=";  // no extra is requested
  else return true;
  return (have == value) == (op == "==");
}

std::vector<std::string> split_words(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    out.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

std::string normalize_project(const std::string& name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<DistInfo> list_dist_infos(const FsView& fs, const std::string& site,
                                      const std::string& prefix) {
  const std::string want = normalize_project(prefix);
  const std::string suffix = ".dist-info";
  std::vector<std::string> names = list_dir(fs, site, kMaxSiteEntries, nullptr);
  std::sort(names.begin(), names.end());
  std::vector<DistInfo> out;
  for (const auto& n : names) {
    if (!ends_with(n, suffix) || n.size() == suffix.size()) continue;
    std::string stem = n.substr(0, n.size() - suffix.size());
    // Neither field of <name>-<version> contains a dash (the wheel format escapes them).
    size_t dash = stem.find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == stem.size()) continue;
    std::string project = normalize_project(stem.substr(0, dash));
    if (project.compare(0, want.size(), want) != 0) continue;
    out.push_back({join_path(site, n), project, stem.substr(dash + 1)});
  }
  return out;
}

bool parse_requirement(const std::string& value, Requirement* out) {
  Requirement r;
  r.text = trim(value);
  size_t semi = r.text.find(';');
  std::string req = trim(r.text.substr(0, semi));
  if (semi != std::string::npos) r.marker = trim(r.text.substr(semi + 1));
  size_t i = 0;
  while (i < req.size() && is_name_char(req[i])) ++i;
  if (i == 0) return false;
  r.project = normalize_project(req.substr(0, i));
  std::string rest = req.substr(i);
  size_t extras_end = rest.find(']');
  if (!rest.empty() && trim(rest)[0] == '[' && extras_end != std::string::npos)
    rest = rest.substr(extras_end + 1);
  if (trim(rest).rfind("@", 0) == 0) rest.clear();  // a direct URL: no version to compare
  for (char c : rest)
    if (c != ' ' && c != '(' && c != ')' && c != '\t') r.spec += c;
  *out = std::move(r);
  return true;
}

bool read_requirements(const FsView& fs, const std::string& dist_info,
                       std::vector<Requirement>* out, std::string* error) {
  std::string text;
  bool truncated = false;
  std::string why;
  std::string path = join_path(dist_info, "METADATA");
  if (!read_small_file(fs, path, kMaxMetadata, &text, &truncated, &why)) {
    if (error) *error = path + ": " + why;
    return false;
  }
  if (truncated) {
    if (error) *error = path + " is larger than 1 MiB: not wheel metadata";
    return false;
  }
  const std::string key = "Requires-Dist:";
  for (const std::string& raw : split_lines(text)) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // end of the headers
    if (line.compare(0, key.size(), key) != 0) continue;
    Requirement r;
    if (parse_requirement(line.substr(key.size()), &r)) out->push_back(std::move(r));
  }
  return true;
}

bool marker_applies(const std::string& marker, const std::string& machine) {
  if (trim(marker).empty()) return true;
  if (marker.find('(') != std::string::npos) return true;
  for (const std::string& alternative : split_words(marker, " or ")) {
    bool all = true;
    for (const std::string& clause : split_words(alternative, " and "))
      all = all && clause_holds(clause, machine);
    if (all) return true;
  }
  return false;
}

SpecMatch spec_matches(const std::string& version, const std::string& spec) {
  bool wildcard = false;
  std::vector<long> have = release_of(version, &wildcard);
  if (have.empty() || wildcard) return SpecMatch::unknown;
  SpecMatch result = SpecMatch::yes;
  for (const std::string& clause : split_nonempty(spec, ',')) {
    SpecMatch m = one_clause(have, trim(clause));
    if (m == SpecMatch::no) return SpecMatch::no;
    if (m == SpecMatch::unknown) result = SpecMatch::unknown;
  }
  return result;
}

long long record_size(const FsView& fs, const std::string& dist_info, const std::string& file) {
  std::string text;
  bool truncated = false;
  if (!read_small_file(fs, join_path(dist_info, "RECORD"), kMaxRecord, &text, &truncated) ||
      truncated)
    return -1;
  // RECORD is CSV: path,sha256=...,size. Wheel paths have no commas or quotes in practice;
  // a quoted path is compared without its quotes.
  for (const std::string& raw : split_lines(text)) {
    size_t last = raw.rfind(',');
    size_t first = raw.find(',');
    if (first == std::string::npos || last == first) continue;
    std::string path = raw.substr(0, first);
    if (path.size() >= 2 && path.front() == '"' && path.back() == '"')
      path = path.substr(1, path.size() - 2);
    if (path != file) continue;
    std::string size = trim(raw.substr(last + 1));
    if (size.empty() || !std::all_of(size.begin(), size.end(), ::isdigit) || size.size() > 15)
      return -1;
    return std::strtoll(size.c_str(), nullptr, 10);
  }
  return -1;
}

}  // namespace denpex
