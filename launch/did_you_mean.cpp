#include "launch/did_you_mean.h"

#include <algorithm>

namespace denpex {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: three rows of the dynamic programme.
  std::vector<std::size_t> two(b.size() + 1), one(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) one[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    two.swap(one);
    one.swap(cur);
  }
  return one[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 0;
  bool tie = false;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (best.empty() || d < best_d) {
      best = c;
      best_d = d;
      tie = false;
    } else if (d == best_d && c != best) {
      tie = true;
    }
  }
  std::size_t limit = std::min<std::size_t>(2, std::max<std::size_t>(1, word.size() / 3));
  if (best.empty() || tie || best_d == 0 || best_d > limit) return "";
  return best;
}

}  // namespace denpex
