#include "compare/fold.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "probe/record.h"

namespace denpex {

namespace {

// Past this many characters a list in a message stops helping a reader; the JSON has them all.
constexpr std::size_t kMessageListChars = 96;

// A host name split into "prefix" + trailing number. `width` is the number of digits when the
// number is zero-padded ("007" -> 3), 0 when it is not ("7", "100").
struct HostName {
  std::string prefix;
  unsigned long long number = 0;
  std::size_t digits = 0;  // 0: no trailing number
  bool padded = false;
};

HostName split_host(const std::string& host) {
  HostName h;
  std::size_t end = host.size();
  std::size_t start = end;
  while (start > 0 && host[start - 1] >= '0' && host[start - 1] <= '9') --start;
  std::size_t digits = end - start;
  // 18 digits always fit in 64 bits; anything longer is an identifier, not a counter.
  if (digits == 0 || digits > 18) {
    h.prefix = host;
    return h;
  }
  h.prefix = host.substr(0, start);
  h.digits = digits;
  h.padded = digits > 1 && host[start] == '0';
  h.number = std::stoull(host.substr(start));
  return h;
}

// Ranges "a-b,c" of sorted unique numbers, each printed zero-padded to `width` (0 = no padding).
std::string number_ranges(const std::vector<unsigned long long>& numbers, std::size_t width) {
  std::string out;
  auto put = [&](unsigned long long v) { out += fmt::format("{:0{}}", v, width); };
  for (std::size_t i = 0; i < numbers.size();) {
    std::size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    if (!out.empty()) out += ',';
    put(numbers[i]);
    if (j > i) {
      out += '-';
      put(numbers[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string fold_hosts(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());

  std::vector<HostName> names;
  std::set<std::pair<std::string, std::size_t>> padded_widths;  // (prefix, width) seen padded
  std::vector<std::string> plain;                                // no trailing number
  for (const auto& host : hosts) {
    if (host.empty()) continue;
    HostName h = split_host(host);
    if (h.digits == 0) {
      plain.push_back(host);
      continue;
    }
    if (h.padded) padded_widths.insert({h.prefix, h.digits});
    names.push_back(h);
  }

  // Key: (prefix, width), width 0 for unpadded numbers. An unpadded number as wide as a padded
  // group of the same prefix ("node100" beside "node001") prints identically there, so joins it.
  std::map<std::pair<std::string, std::size_t>, std::set<unsigned long long>> groups;
  for (const auto& h : names) {
    std::size_t width = 0;
    if (h.padded || padded_widths.count({h.prefix, h.digits})) width = h.digits;
    groups[{h.prefix, width}].insert(h.number);
  }

  // Every group and plain name becomes one item; items are ordered by their first host name so
  // the folded list reads in the same order as the sorted hosts.
  std::vector<std::pair<std::string, std::string>> items;  // (sort key, text)
  for (const auto& [key, set] : groups) {
    const auto& [prefix, width] = key;
    std::vector<unsigned long long> numbers(set.begin(), set.end());
    std::string first = prefix + fmt::format("{:0{}}", numbers.front(), width);
    if (numbers.size() == 1) {
      items.push_back({first, first});
    } else {
      items.push_back({first, prefix + "[" + number_ranges(numbers, width) + "]"});
    }
  }
  for (const auto& p : plain) items.push_back({p, p});
  std::sort(items.begin(), items.end());

  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += item.second;
  }
  return out;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += fmt::format("-{}", sorted[j]);
    i = j + 1;
  }
  return out;
}

std::string abbreviate_list(const std::string& list, std::size_t max_chars) {
  if (list.size() <= max_chars) return list;
  // Prefer the last top-level comma; fall back to a comma inside a bracket group (then close the
  // bracket so the text stays well formed), and to a hard cut for a list without commas.
  std::size_t top = std::string::npos, inner = std::string::npos;
  int depth = 0;
  for (std::size_t i = 0; i < list.size() && i <= max_chars; ++i) {
    if (list[i] == '[') ++depth;
    if (list[i] == ']') --depth;
    if (list[i] == ',') (depth == 0 ? top : inner) = i;
  }
  bool inner_later = inner != std::string::npos && (top == std::string::npos || inner > top);
  if (top != std::string::npos && (top >= max_chars / 2 || !inner_later)) {
    return list.substr(0, top) + ",...";
  }
  if (inner_later) return list.substr(0, inner) + ",...]";
  return list.substr(0, max_chars) + "...";
}

std::string rank_subject(const std::vector<int>& ranks) {
  std::vector<int> distinct = ranks;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.empty()) return "no ranks";
  return fmt::format("{} {}", distinct.size() == 1 ? "rank" : "ranks",
                     abbreviate_list(rank_ranges(distinct), kMessageListChars));
}

std::string ranges_subject(const std::vector<std::pair<int, int>>& ranges, long long total, bool more) {
  std::string list;
  for (const auto& r : ranges) {
    if (!list.empty()) list += ',';
    list += r.first == r.second ? std::to_string(r.first) : fmt::format("{}-{}", r.first, r.second);
  }
  if (more) list += ",...";
  return fmt::format("{} {} ({})", total, total == 1 ? "rank" : "ranks", abbreviate_list(list, kMessageListChars));
}

std::string rank_phrase(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  // An image's record (--root) is named as the image, not as a rank of the machine that read it.
  const std::string image = kImageHostPrefix;
  if (ranks.size() == 1 && hosts.size() == 1 && hosts[0].compare(0, image.size(), image) == 0)
    return hosts[0];
  std::string subject = rank_subject(ranks);
  if (hosts.empty()) return subject;
  return fmt::format("{} on {}", subject, abbreviate_list(fold_hosts(hosts), kMessageListChars));
}

}  // namespace denpex
