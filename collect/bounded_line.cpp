#include "collect/bounded_line.h"

#include <algorithm>
#include <limits>

namespace denpex {

bool get_bounded_line(std::istream& in, std::string* line, bool* cut, size_t max,
                      bool skip_rest) {
  line->clear();
  *cut = false;
  bool any = false;
  size_t total = 0;
  char buf[16 * 1024];
  for (;;) {
    in.getline(buf, sizeof buf);
    const auto n = static_cast<size_t>(in.gcount());
    if (n > 0) any = true;
    // No failbit: the line ended, its '\n' extracted (counted in gcount, not stored) unless
    // the input ended first. failbit without eof: the buffer filled and the line goes on.
    const bool ended = !in.fail() || in.eof() || in.bad();
    const size_t keep = !in.fail() && !in.eof() ? n - 1 : n;
    total += keep;
    if (line->size() < max) line->append(buf, std::min(keep, max - line->size()));
    if (ended) {
      *cut = total > max;
      return any;
    }
    in.clear();
    if (total > max) {
      // Past the cap: skip the rest of the line (ignore() scans the buffer with memchr).
      *cut = true;
      if (!skip_rest) return true;
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      if (in.eof()) in.clear(std::ios::eofbit);
      return true;
    }
  }
}

}  // namespace denpex
