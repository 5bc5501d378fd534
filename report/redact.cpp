#include "report/redact.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/fold.h"

namespace denpex {

using nlohmann::json;

namespace {

bool is_word(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool all_digits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool is_ipv4(const std::string& w) {
  auto parts = split(w, '.');
  if (parts.size() != 4) return false;
  for (const auto& p : parts)
    if (!all_digits(p) || p.size() > 3 || std::stoi(p) > 255) return false;
  return true;
}

// Addresses that name no machine of anyone's: kept as they are.
bool kept_ipv4(const std::string& w) { return w.rfind("127.", 0) == 0 || w == "0.0.0.0"; }

// File name endings that make a dotted word a file, not a domain.
bool file_extension(const std::string& label) {
  static const std::set<std::string> ext = {
      "log", "out", "err", "txt", "json", "jsonl", "py", "pyc", "pyx", "cc", "cpp", "cxx", "c", "h", "hpp", "cu",
      "cuh", "so", "a", "o", "gz", "zst", "xz", "bz2", "tar", "tgz", "zip", "whl", "sh", "bash", "yaml", "yml", "toml",
      "ini", "cfg", "conf", "pkl", "pickle", "pt", "pth", "bin", "ckpt", "safetensors", "npz", "npy", "csv", "tsv",
      "parquet", "html", "htm", "md", "rst", "xml", "png", "jpg", "svg", "pdf", "lock", "pid", "sock", "cmake",
      "ipynb", "js", "css", "rs", "go", "java", "sqsh", "sif", "img", "deb", "rpm", "mod", "ko", "dat", "db"};
  return ext.count(label) > 0;
}

bool top_level_domain(const std::string& label) {
  static const std::set<std::string> tld = {
      "com", "net", "org", "edu", "gov", "mil", "int", "io", "ai", "co", "us", "uk", "de", "fr", "ca", "ch", "jp",
      "cn", "kr", "in", "au", "nl", "se", "no", "fi", "it", "es", "ru", "br", "eu", "local", "internal", "lan",
      "localdomain", "intra", "corp", "cluster", "home", "arpa", "cloud", "quebec"};
  return tld.count(label) > 0;
}

// Public sites whose names in a pasted message (PyTorch's documentation links) identify no one.
bool public_domain(const std::string& w) {
  static const char* const kept[] = {"pytorch.org", "github.com", "nvidia.com", "python.org", "huggingface.co",
                                     "readthedocs.io", "docs.nvidia.com"};
  for (const char* k : kept) {
    std::string d(k);
    if (w == d || (w.size() > d.size() && w.compare(w.size() - d.size(), d.size(), d) == 0 &&
                   w[w.size() - d.size() - 1] == '.'))
      return true;
  }
  return false;
}

bool is_domain_name(const std::string& w) {
  if (w.find('.') == std::string::npos || public_domain(w)) return false;
  auto labels = split(w, '.');
  if (labels.size() < 2) return false;
  bool marked = false;
  for (const auto& l : labels) {
    if (l.empty() || l.front() == '-' || l.back() == '-') return false;
    for (char c : l) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
      if (is_digit(c) || c == '-') marked = true;
    }
  }
  const std::string& last = labels.back();
  if (last.size() < 2 || !std::all_of(last.begin(), last.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
    return false;
  if (file_extension(last)) return false;
  return marked || top_level_domain(last);
}

// "ip-10-0-3-17": cloud providers' default host names carry the address.
bool is_ip_host(const std::string& w) {
  if (w.rfind("ip-", 0) != 0) return false;
  auto parts = split(w.substr(3), '-');
  return parts.size() == 4 && std::all_of(parts.begin(), parts.end(), all_digits);
}

// IPv6 at [start, end): "::" once at most with at least one group, or eight groups.
bool is_ipv6(const std::string& s, std::size_t start, std::size_t end) {
  std::string t = s.substr(start, end - start);
  std::size_t dbl = t.find("::");
  if (dbl != std::string::npos && t.find("::", dbl + 1) != std::string::npos) return false;
  auto groups = split(t, ':');
  int nonempty = 0;
  for (const auto& g : groups) {
    if (g.size() > 4) return false;
    if (!g.empty()) ++nonempty;
  }
  if (dbl != std::string::npos) return nonempty >= 1 && t != "::";
  return groups.size() == 8 && nonempty == 8;
}

bool path_boundary(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || std::strchr("'\"`([{=:,;<>", c) != nullptr;
}
bool path_end(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || std::strchr("'\"`)]},;:<>|", c) != nullptr;
}

bool under(const std::string& dir, const char* top) {
  std::size_t n = std::strlen(top);
  return dir.compare(0, n, top) == 0 && (dir.size() == n || dir[n] == '/');
}

// The system's own directories: the same on every machine of a distribution, and what a
// finding about which library was loaded needs.
bool system_dir(const std::string& dir) {
  for (const char* top : {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/proc", "/sys",
                          "/dev", "/run"})
    if (under(dir, top)) return true;
  return dir == "/tmp" || dir == "/" || dir.empty();
}

// One absolute path token found in a string: [start, end).
struct PathToken {
  std::size_t start = 0, end = 0;
};

std::vector<PathToken> path_tokens(const std::string& s) {
  std::vector<PathToken> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '/' || (i > 0 && !path_boundary(s[i - 1]))) continue;
    std::size_t j = i;
    while (j < s.size() && !path_end(s[j])) ++j;
    bool url = i > 0 && s[i - 1] == ':' && i + 1 < s.size() && s[i + 1] == '/';
    while (j > i + 1 && s[j - 1] == '.') --j;  // the full stop of a sentence
    if (!url && j > i + 1) out.push_back({i, j});
    i = j;
  }
  return out;
}

// Splits a path into the part to replace and the part to keep.
void split_path(const std::string& p, std::string* dir, std::string* keep) {
  for (const char* marker : {"/site-packages", "/dist-packages"}) {
    std::size_t at = p.find(marker);
    if (at != std::string::npos) {
      *dir = p.substr(0, at);
      *keep = p.substr(at);
      return;
    }
  }
  std::size_t slash = p.rfind('/', p.size() > 1 && p.back() == '/' ? p.size() - 2 : std::string::npos);
  *dir = slash == std::string::npos ? std::string() : p.substr(0, slash);
  *keep = slash == std::string::npos ? p : p.substr(slash);
}

// "node[001-004,009],...": the host names a folded list stands for; false when `inner` is not
// a fold's bracket (digits, commas, ranges, a trailing ",...").
bool expand_fold(const std::string& prefix, std::string inner, std::vector<std::string>* names, bool* cut) {
  *cut = inner.size() >= 4 && inner.compare(inner.size() - 4, 4, ",...") == 0;
  if (*cut) inner.resize(inner.size() - 4);
  if (inner.empty()) return false;
  for (const auto& item : split(inner, ',')) {
    auto range = split(item, '-');
    if (range.size() > 2 || !std::all_of(range.begin(), range.end(), all_digits)) return false;
    if (range[0].size() > 9 || range.back().size() > 9) return false;
    long a = std::stol(range[0]), b = std::stol(range.back());
    if (b < a || b - a > 100000 || names->size() > 100000) return false;
    std::size_t width = range[0].size();
    for (long n = a; n <= b; ++n) names->push_back(prefix + fmt::format("{:0{}}", n, width));
  }
  return true;
}

}  // namespace

Redactor Redactor::from_report(const json& report) {
  Redactor r;
  r.learn_tree(report, "");
  r.assign();
  return r;
}

std::unordered_map<std::string, std::string>& Redactor::map_of(Kind kind) {
  return kind == Kind::host ? hosts_ : kind == Kind::ip ? ips_ : kind == Kind::user ? users_ : dirs_;
}

void Redactor::note(Kind kind, const std::string& original) {
  if (map_of(kind).emplace(original, "").second) pending_.emplace_back(kind, original);
}

// Placeholders are given once every original of the document is known, so that none equals an
// original, wherever in the document it appears.
void Redactor::assign() {
  auto taken = [&](const std::string& c) {
    return hosts_.count(c) || ips_.count(c) || users_.count(c) || dirs_.count(c) || used_.count(c);
  };
  for (const auto& [kind, original] : pending_) {
    bool v6 = kind == Kind::ip && original.find(':') != std::string::npos;
    std::string placeholder;
    do {
      int n = ++next_[v6 ? "ip6" : kind == Kind::host ? "host" : kind == Kind::user ? "user" : kind == Kind::dir ? "dir" : "ip"];
      placeholder = kind == Kind::host   ? fmt::format("host-{}", n)
                    : kind == Kind::user ? fmt::format("user-{}", n)
                    : kind == Kind::dir  ? fmt::format("/path-{}", n)
                    : v6                 ? fmt::format("fd00::{:x}", n)
                                         : fmt::format("10.0.{}.{}", (n - 1) / 254, (n - 1) % 254 + 1);
    } while (taken(placeholder));
    used_.insert(placeholder);
    map_of(kind)[original] = placeholder;
    order_.emplace_back(original, placeholder);
  }
  pending_.clear();
}

void Redactor::learn_tree(const json& j, const std::string& key) {
  if (j.is_object()) {
    for (const auto& item : j.items()) {
      learn_text(item.key());
      learn_tree(item.value(), item.key());
    }
  } else if (j.is_array()) {
    for (const auto& v : j) learn_tree(v, key);
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    auto named = [](const std::string& h) {
      return h != "localhost" && std::any_of(h.begin(), h.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    };
    if ((key == "host" || key == "hosts") && (named(s) || is_ipv4(s))) {
      if (s.rfind("image ", 0) == 0) learn_paths(s);
      else if (is_ipv4(s) || s.find(':') != std::string::npos) learn_words(s);
      else note(Kind::host, s);
    } else if (key == "processes" && s.rfind(':') != std::string::npos && named(s.substr(0, s.rfind(':')))) {
      note(Kind::host, s.substr(0, s.rfind(':')));
    } else if ((key == "user" || key == "username") && !s.empty()) {
      note(Kind::user, s);
    }
    learn_text(s);
  }
}

void Redactor::learn_text(const std::string& s) {
  learn_paths(s);
  learn_words(s);
}

void Redactor::learn_paths(const std::string& s) {
  for (const auto& t : path_tokens(s)) {
    std::string p = s.substr(t.start, t.end - t.start);
    auto parts = split(p, '/');
    for (std::size_t k = 1; k + 1 < parts.size(); ++k)
      if ((parts[k] == "home" || parts[k] == "Users" || parts[k] == "scratch") && parts[k + 1].size() >= 2)
        note(Kind::user, parts[k + 1]);
    // A directory named on its own ("via LD_LIBRARY_PATH=/opt/x/lib") that is already known as
    // some file's directory keeps that file's placeholder.
    std::string bare = p.size() > 1 && p.back() == '/' ? p.substr(0, p.size() - 1) : p;
    if (dirs_.count(bare)) continue;
    std::string dir, keep;
    split_path(p, &dir, &keep);
    if (!system_dir(dir)) note(Kind::dir, dir);
  }
}

void Redactor::learn_words(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    // IPv6 first: its groups are words of their own.
    if ((is_hex(s[i]) || s[i] == ':') && (i == 0 || !(is_word(s[i - 1]) || s[i - 1] == ':'))) {
      std::size_t j = i;
      while (j < s.size() && (is_hex(s[j]) || s[j] == ':')) ++j;
      if ((j == s.size() || !(is_word(s[j]) && s[j] != '.')) && is_ipv6(s, i, j)) {
        note(Kind::ip, s.substr(i, j - i));
        i = j;
        continue;
      }
    }
    if (!is_word(s[i]) || (i > 0 && is_word(s[i - 1]))) continue;
    std::size_t j = i;
    while (j < s.size() && is_word(s[j])) ++j;
    std::string w = s.substr(i, j - i);
    while (!w.empty() && w.back() == '.') w.pop_back();
    if (is_ipv4(w)) {
      if (!kept_ipv4(w)) note(Kind::ip, w);
    } else if (is_domain_name(w) || is_ip_host(w)) {
      note(Kind::host, w);
    } else if (j + 1 < s.size() && s[j] == ':' && is_digit(s[j + 1])) {
      // "host:pid:tid" at the head of an NCCL line, and "process host:pid" as reports name one.
      std::size_t k = j + 1;
      while (k < s.size() && is_digit(s[k])) ++k;
      bool header = k + 1 < s.size() && s[k] == ':' && is_digit(s[k + 1]);
      bool process = i >= 8 && (s.compare(i - 8, 8, "process ") == 0 || s.compare(i - 8, 8, "rocesses") == 0);
      if ((header || process) && !all_digits(w) &&
          std::any_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
        note(Kind::host, w);
    } else if (j + 1 < s.size() && s[j] == '@' && is_word(s[j + 1]) && std::isalpha(static_cast<unsigned char>(w[0]))) {
      // "user@host" (a shell prompt, an ssh target): both name someone.
      std::size_t k = j + 1;
      while (k < s.size() && is_word(s[k])) ++k;
      std::string h = s.substr(j + 1, k - j - 1);
      while (!h.empty() && h.back() == '.') h.pop_back();
      note(Kind::user, w);
      if (!h.empty() && !is_ipv4(h) && !public_domain(h)) note(Kind::host, h);
      else if (is_ipv4(h) && !kept_ipv4(h)) note(Kind::ip, h);
      j = k;
    }
    i = j;
  }
}

json Redactor::apply(const json& report) {
  learn_tree(report, "");
  assign();
  json out = rewrite_tree(report);
  if (out.is_object()) out["redacted"] = true;
  return out;
}

std::string Redactor::apply(const std::string& text) {
  learn_text(text);
  assign();
  return rewrite(text);
}

json Redactor::rewrite_tree(const json& j) {
  if (j.is_object()) {
    json o = json::object();
    for (const auto& item : j.items()) o[rewrite(item.key())] = rewrite_tree(item.value());
    return o;
  }
  if (j.is_array()) {
    json a = json::array();
    for (const auto& v : j) a.push_back(rewrite_tree(v));
    return a;
  }
  if (j.is_string()) return rewrite(j.get_ref<const std::string&>());
  return j;
}

std::string Redactor::rewrite(const std::string& s) { return rewrite_words(rewrite_paths(s)); }

std::string Redactor::rewrite_paths(const std::string& s) {
  std::string out;
  std::size_t at = 0;
  for (const auto& t : path_tokens(s)) {
    out.append(s, at, t.start - at);
    std::string p = s.substr(t.start, t.end - t.start);
    std::string bare = p.size() > 1 && p.back() == '/' ? p.substr(0, p.size() - 1) : p;
    if (auto whole = dirs_.find(bare); whole != dirs_.end()) {
      out += whole->second + p.substr(bare.size());
      at = t.end;
      continue;
    }
    std::string dir, keep;
    split_path(p, &dir, &keep);
    auto it = dirs_.find(dir);
    out += it != dirs_.end() ? it->second + keep : p;
    at = t.end;
  }
  out.append(s, at, std::string::npos);
  return out;
}

// A word's replacement: an address, a host (or a known host's longer form), a user; else as is.
std::string Redactor::word(const std::string& w) {
  if (auto it = ips_.find(w); it != ips_.end()) return it->second;
  return host_or_word(w);
}

std::string Redactor::host_or_word(const std::string& w) {
  if (auto it = hosts_.find(w); it != hosts_.end()) return it->second;
  if (auto it = users_.find(w); it != users_.end()) return it->second;
  // "node01-ib", "node01.log", "03-node01-rank2.log" (a file name): each known host standing
  // between the word's separators, the rest kept.
  std::string out;
  std::size_t at = 0;
  while (at < w.size()) {
    std::size_t best = 0;
    if (at == 0 || w[at - 1] == '.' || w[at - 1] == '-' || w[at - 1] == '_')
      for (std::size_t k = w.size(); k > at; --k) {
        if (k < w.size() && w[k] != '.' && w[k] != '-' && w[k] != '_') continue;
        if (hosts_.count(w.substr(at, k - at))) {
          best = k;
          break;
        }
      }
    if (best > at) {
      out += hosts_[w.substr(at, best - at)];
      at = best;
      continue;
    }
    std::size_t next = w.find_first_of(".-_", at);
    next = next == std::string::npos ? w.size() : next + 1;
    out.append(w, at, next - at);
    at = next;
  }
  return out;
}

bool Redactor::folded(const std::string& s, std::size_t start, std::size_t run_end, std::string* out,
                      std::size_t* end) {
  std::size_t close = s.find(']', run_end);
  if (run_end >= s.size() || s[run_end] != '[' || close == std::string::npos || close - run_end > 4096) return false;
  std::vector<std::string> names;
  bool cut = false;
  if (!expand_fold(s.substr(start, run_end - start), s.substr(run_end + 1, close - run_end - 1), &names, &cut))
    return false;
  if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return hosts_.count(n) > 0; }))
    return false;
  for (const auto& n : names) note(Kind::host, n);
  assign();
  std::vector<std::string> placeholders;
  for (const auto& n : names) placeholders.push_back(hosts_[n]);
  *out = fold_hosts(placeholders);
  if (cut) *out = !out->empty() && out->back() == ']' ? out->substr(0, out->size() - 1) + ",...]" : *out + ",...";
  *end = close + 1;
  return true;
}

std::string Redactor::rewrite_words(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if ((is_hex(s[i]) || s[i] == ':') && (i == 0 || !(is_word(s[i - 1]) || s[i - 1] == ':'))) {
      std::size_t j = i;
      while (j < s.size() && (is_hex(s[j]) || s[j] == ':')) ++j;
      auto it = ips_.find(s.substr(i, j - i));
      if (it != ips_.end() && (j == s.size() || !(is_word(s[j]) && s[j] != '.'))) {
        out += it->second;
        i = j;
        continue;
      }
    }
    if (!is_word(s[i])) {
      out += s[i++];
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && is_word(s[j])) ++j;
    std::string fold;
    std::size_t fold_end = 0;
    if (folded(s, i, j, &fold, &fold_end)) {
      out += fold;
      i = fold_end;
      continue;
    }
    std::string w = s.substr(i, j - i);
    std::size_t dots = 0;
    while (dots < w.size() && w[w.size() - 1 - dots] == '.') ++dots;
    out += word(w.substr(0, w.size() - dots));
    out.append(dots, '.');
    i = j;
  }
  return out;
}

}  // namespace denpex
