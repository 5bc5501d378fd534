#include "evidence/line_repair.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace denpex::evidence {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Fixed-width number of exactly `n` digits at s[0..n).
bool fixed(std::string_view s, size_t n, int* out) {
  if (s.size() < n) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!is_digit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

constexpr long long kMinute = 60LL * 1000000;
constexpr long long kDay = 24LL * 60 * kMinute;

long long day_of_year(int month, int day) {
  static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  if (month < 1 || month > 12 || day < 1 || day > 31) return -1;
  return before[month - 1] + day - 1;
}

// "HH:MM[:SS[.frac]]" at s; returns characters used, 0 when none.
size_t parse_clock(std::string_view s, long long* us, long long* precision) {
  int h, m;
  if (!fixed(s, 2, &h) || s.size() < 5 || s[2] != ':' || !fixed(s.substr(3), 2, &m)) return 0;
  if (h > 23 || m > 59) return 0;
  size_t i = 5;
  long long t = (h * 60LL + m) * kMinute;
  *precision = kMinute;
  int sec;
  if (s.size() >= 8 && s[5] == ':' && fixed(s.substr(6), 2, &sec) && sec <= 60) {
    t += sec * 1000000LL;
    *precision = 1000000;
    i = 8;
    if (i < s.size() && (s[i] == '.' || s[i] == ',') && i + 1 < s.size() && is_digit(s[i + 1])) {
      ++i;
      long long frac = 0;
      int digits = 0;
      while (i < s.size() && is_digit(s[i])) {
        if (digits < 6) {
          frac = frac * 10 + (s[i] - '0');
          ++digits;
        }
        ++i;
      }
      while (digits < 6) {
        frac *= 10;
        ++digits;
      }
      t += frac;
      *precision = 1;
    }
  }
  *us = t;
  return i;
}

}  // namespace

int When::compare(const When& a, const When& b) {
  long long p = a.precision > b.precision ? a.precision : b.precision;
  if (p <= 0) p = 1;
  long long x = a.us / p, y = b.us / p;
  return x < y ? -1 : x > y ? 1 : 0;
}

std::string When::text() const {
  if (us < 0) return {};
  static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365};
  long long day = us / kDay;
  long long rest = us % kDay;
  int month = 1;
  while (month < 12 && day >= before[month]) ++month;
  int dom = static_cast<int>(day - before[month - 1]) + 1;
  long long secs = rest / 1000000;
  if (precision >= kMinute)
    return fmt::format("{:02}-{:02} {:02}:{:02}", month, dom, secs / 3600, secs / 60 % 60);
  return fmt::format("{:02}-{:02} {:02}:{:02}:{:02}", month, dom, secs / 3600, secs / 60 % 60, secs % 60);
}

std::string When::iso() const {
  std::string t = text();
  if (t.empty()) return t;
  t[5] = 'T';
  return year > 0 ? fmt::format("{:04}-{}", year, t) : "--" + t;
}

bool parse_dec(std::string_view s, long long* out, size_t* used) {
  size_t i = 0;
  unsigned long long v = 0;
  bool overflow = false;
  while (i < s.size() && is_digit(s[i])) {
    if (v > (static_cast<unsigned long long>(INT64_MAX) - 9) / 10) overflow = true;
    else v = v * 10 + static_cast<unsigned>(s[i] - '0');
    ++i;
  }
  *used = i;
  if (i == 0 || overflow) return false;
  *out = static_cast<long long>(v);
  return true;
}

bool parse_hex(std::string_view s, unsigned long long* out, size_t* used) {
  size_t i = 0;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) i = 2;
  size_t start = i;
  unsigned long long v = 0;
  bool overflow = false;
  // A table rather than three range tests per digit: COLL lines carry four hex numbers each.
  static const auto kHex = [] {
    std::array<signed char, 256> t{};
    t.fill(-1);
    for (int c = 0; c < 10; ++c) t['0' + c] = static_cast<signed char>(c);
    for (int c = 0; c < 6; ++c) t['a' + c] = t['A' + c] = static_cast<signed char>(10 + c);
    return t;
  }();
  while (i < s.size()) {
    int d = kHex[static_cast<unsigned char>(s[i])];
    if (d < 0) break;
    if (v >> 60) overflow = true;
    v = (v << 4) | static_cast<unsigned>(d);
    ++i;
  }
  *used = i;
  if (i == start || overflow) return false;
  *out = v;
  return true;
}

size_t parse_timestamp(std::string_view s, When* w) {
  int y, mo, d;
  long long us = 0, precision = 0;
  // ISO date, then ' ', 'T' or '_' (torchrun's "2024-05-14_10:12:05").
  if (fixed(s, 4, &y) && s.size() >= 11 && s[4] == '-' && fixed(s.substr(5), 2, &mo) && s[7] == '-' &&
      fixed(s.substr(8), 2, &d) && (s[10] == ' ' || s[10] == 'T' || s[10] == '_')) {
    long long doy = day_of_year(mo, d);
    size_t n = parse_clock(s.substr(11), &us, &precision);
    if (doy < 0 || n == 0) return 0;
    size_t i = 11 + n;
    if (i < s.size() && s[i] == 'Z') ++i;
    w->us = doy * kDay + us;
    w->precision = precision;
    w->year = y;
    return i;
  }
  // glog: level letter, MMDD or MDD, space, clock.
  if (!s.empty() && (s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F')) {
    size_t i = 1;
    while (i < s.size() && i < 6 && is_digit(s[i])) ++i;
    size_t digits = i - 1;
    if ((digits == 3 || digits == 4) && i < s.size() && s[i] == ' ') {
      int md = 0;
      fixed(s.substr(1), digits, &md);
      long long doy = day_of_year(md / 100, md % 100);
      size_t n = parse_clock(s.substr(i + 1), &us, &precision);
      if (doy < 0 || n == 0) return 0;
      w->us = doy * kDay + us;
      w->precision = precision;
      return i + 1 + n;
    }
  }
  return 0;
}

namespace {

// Removes ANSI escape sequences (ESC '[' ... final letter) in place.
void drop_ansi(std::string* line) {
  std::string out;
  out.reserve(line->size());
  for (size_t i = 0; i < line->size(); ++i) {
    char c = (*line)[i];
    if (c == '\x1b') {
      size_t j = i + 1;
      if (j < line->size() && (*line)[j] == '[') {
        ++j;
        while (j < line->size() && !(((*line)[j] >= '@' && (*line)[j] <= '~') && (*line)[j] != '[')) ++j;
      }
      i = j;  // skips the final byte too
      continue;
    }
    out.push_back(c);
  }
  line->swap(out);
}

int small_rank(long long v) { return v >= 0 && v < kMaxRank ? static_cast<int>(v) : -1; }

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' || c == '.' || c == '_';
}

// "[gpu187:2]:": a host and the index of one of its processes (which numbering, local or
// global, the label does not say), so it names one process and its host, never a rank.
size_t host_index_prefix(std::string_view s, LineLabel* label) {
  size_t i = 1;
  bool letter = false;
  while (i < s.size() && i < 80 && host_char(s[i])) letter |= !is_digit(s[i++]);
  if (!letter || i >= s.size() || s[i] != ':') return 0;
  long long v;
  size_t n;
  if (!parse_dec(s.substr(i + 1), &v, &n) || i + 1 + n >= s.size() || s[i + 1 + n] != ']') return 0;
  label->host = std::string(s.substr(1, i - 1));
  // The number as a number: Open MPI pads a pid ("[gpu-k3:08445]") that its own end-of-job
  // block prints without padding ("with PID 8445"); one process, one key.
  label->worker = fmt::format("{}:{}", label->host, v);
  size_t end = i + 2 + n;
  return end < s.size() && s[end] == ':' ? end + 1 : end;
}

// torchrun's --tee label "[default0]:" (role and local rank) and launchers' like it, "[trainer3]:",
// "[trainer0|0]:". A local rank repeats on every node, so the label names a process only
// together with a host label before it; alone it is stripped and names nothing.
size_t role_prefix(std::string_view s, LineLabel* label) {
  size_t i = 1;
  while (i < s.size() && i < 40 && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_')) ++i;
  size_t digits = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (digits == 1 || i == digits) return 0;  // a letter first, then a digit
  if (i < s.size() && s[i] == '|') {
    size_t j = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == j) return 0;
  }
  if (i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') return 0;
  if (!label->host.empty() && label->worker.empty())
    label->worker = fmt::format("{} {}", label->host, s.substr(1, i - 1));
  return i + 2;
}

// ctime's "Tue Nov 27 13:49:06 2018" before a launcher's tag (mpirun --timestamp-output puts it
// before "[1,10]<stdout>:"): its time is the line's. 0 when s does not start with one, or
// nothing tagged follows it.
size_t ctime_prefix(std::string_view s, LineLabel* label) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() < 24 || s[3] != ' ' || s[7] != ' ') return 0;
  int month = 0;
  for (int m = 0; m < 12 && month == 0; ++m)
    if (s.substr(4, 3) == kMonths[m]) month = m + 1;
  size_t i = 8;
  if (month == 0 || s[i] == ' ') ++i;  // a one-digit day is padded with a space
  long long day = 0, year = 0, us = 0, precision = 0;
  size_t n;
  if (month == 0 || !parse_dec(s.substr(i, 2), &day, &n) || s.size() <= i + n || s[i + n] != ' ') return 0;
  i += n + 1;
  size_t c = parse_clock(s.substr(i), &us, &precision);
  long long doy = day_of_year(month, static_cast<int>(day));
  if (c == 0 || doy < 0 || s.size() <= i + c || s[i + c] != ' ') return 0;
  i += c + 1;
  if (!parse_dec(s.substr(i, 4), &year, &n) || n != 4 || s.size() <= i + n || s[i + n] != '[') return 0;
  if (!label->when.known()) {
    label->when.us = doy * kDay + us;
    label->when.precision = precision;
    label->when.year = static_cast<int>(year);
  }
  return i + n;
}

// "[rank3]:", "[RANK 3] ts [LEVEL] ", "[1,3]<stdout>:", "[0]<stderr>:", "[default0]:", "[80746] ",
// "[2024-05-14 10:12:05,123] ".
size_t bracket_prefix(std::string_view s, LineLabel* label) {
  long long v;
  size_t n;
  if (starts(s, "[rank") && parse_dec(s.substr(5), &v, &n) && s.size() > 5 + n + 1 && s[5 + n] == ']') {
    size_t i = 6 + n;
    if (i < s.size() && s[i] == ':') ++i;
    label->rank = small_rank(v);
    return i;
  }
  if (starts(s, "[RANK ") && parse_dec(s.substr(6), &v, &n) && s.size() > 6 + n && s[6 + n] == ']') {
    size_t i = 7 + n;
    label->rank = small_rank(v);
    while (i < s.size() && is_space(s[i])) ++i;
    When w;
    size_t t = parse_timestamp(s.substr(i), &w);
    if (t > 0) {
      if (!label->when.known()) label->when = w;
      i += t;
      while (i < s.size() && is_space(s[i])) ++i;
    }
    if (i < s.size() && s[i] == '[') {
      size_t close = s.find(']', i);
      if (close != std::string_view::npos && close - i < 12) i = close + 1;
    }
    return i;
  }
  if (starts(s, "[1,") || (s.size() > 1 && is_digit(s[1]) && s.find(',') < s.find(']'))) {
    size_t comma = s.find(',');
    if (parse_dec(s.substr(comma + 1), &v, &n) && s.size() > comma + 1 + n && s[comma + 1 + n] == ']') {
      std::string_view rest = s.substr(comma + 2 + n);
      for (std::string_view tag : {"<stdout>:", "<stderr>:", "<stddiag>:"})
        if (starts(rest, tag)) {
          label->rank = small_rank(v);
          return comma + 2 + n + tag.size();
        }
    }
  }
  // horovodrun's own tag, "[0]<stderr>:": the rank without Open MPI's job number.
  if (parse_dec(s.substr(1), &v, &n) && s.size() > n + 2 && s[n + 1] == ']' && s[n + 2] == '<') {
    std::string_view rest = s.substr(n + 2);
    for (std::string_view tag : {"<stdout>:", "<stderr>:"})
      if (starts(rest, tag)) {
        label->rank = small_rank(v);
        return n + 2 + tag.size();
      }
  }
  if (size_t used = host_index_prefix(s, label)) return used;
  if (size_t used = role_prefix(s, label)) return used;
  if (parse_dec(s.substr(1), &v, &n) || n > 0) {
    // A paste tool's line counter: digits only, then "] ". Not NCCL's "[0] NCCL INFO" (that
    // follows a host:pid:tid header, never starts a line).
    if (n > 0 && s.size() > n + 2 && s[n + 1] == ']' && s[n + 2] == ' ' && !starts(s.substr(n + 3), "NCCL ")) {
      // Kept: a report's "[7] finished collective ..." names a rank in the same shape.
      if (label->counter < 0 && v < kMaxRank) label->counter = static_cast<int>(v);
      return n + 3;
    }
  }
  When w;
  size_t t = parse_timestamp(s.substr(1), &w);
  if (t > 0 && 1 + t < s.size()) {
    size_t close = s.find(']', 1 + t);
    if (close != std::string_view::npos && close - t < 16) {
      if (!label->when.known()) label->when = w;
      return close + 1;
    }
  }
  return 0;
}

// "(RayTrainWorker pid=615, ip=10.72.7.6) ".
size_t ray_prefix(std::string_view s, LineLabel* label) {
  size_t close = s.find(')');
  if (close == std::string_view::npos || close > 160) return 0;
  std::string_view inside = s.substr(1, close - 1);
  size_t p = inside.find("pid=");
  if (p == std::string_view::npos) return 0;
  long long pid;
  size_t n;
  if (!parse_dec(inside.substr(p + 4), &pid, &n)) return 0;
  std::string ip;
  size_t q = inside.find("ip=");
  if (q != std::string_view::npos) {
    size_t e = q + 3;
    while (e < inside.size() && inside[e] != ',' && inside[e] != ' ') ++e;
    ip = std::string(inside.substr(q + 3, e - q - 3));
  }
  label->worker = fmt::format("{}:{}", ip.empty() ? "ray" : ip, pid);
  if (!ip.empty()) label->host = ip;
  return close + 1;
}

// "10.0.0.3: " -> host.
size_t ip_prefix(std::string_view s, LineLabel* label) {
  size_t i = 0;
  int dots = 0;
  while (i < s.size() && i < 40 && (is_digit(s[i]) || s[i] == '.')) {
    if (s[i] == '.') ++dots;
    ++i;
  }
  if (dots != 3 || i + 1 >= s.size() || s[i] != ':' || s[i + 1] != ' ') return 0;
  label->host = std::string(s.substr(0, i));
  return i + 2;
}

// "node01 [stderr] ", "node01 | 2024-05-14 10:12:05 | ".
size_t host_prefix(std::string_view s, LineLabel* label) {
  size_t i = 0;
  while (i < s.size() && i < 80 && host_char(s[i])) ++i;
  if (i == 0 || i >= s.size()) return 0;
  // Every form below goes on with " [" or " | "; most lines (an NCCL header's "host:pid") do not.
  if (i + 1 >= s.size() || s[i] != ' ' || (s[i + 1] != '[' && s[i + 1] != '|')) return 0;
  std::string_view rest = s.substr(i);
  for (std::string_view tag : {" [stderr] ", " [stdout] ", " [stderr]: ", " [stdout]: "})
    if (starts(rest, tag)) {
      label->host = std::string(s.substr(0, i));
      return i + tag.size();
    }
  if (starts(rest, " | ")) {
    When w;
    size_t t = parse_timestamp(rest.substr(3), &w);
    if (t > 0) {
      size_t j = i + 3 + t;
      while (j < s.size() && s[j] != '|' && j - i < 48) ++j;  // time zone, fraction
      if (j < s.size() && s[j] == '|') {
        label->host = std::string(s.substr(0, i));
        if (!label->when.known()) label->when = w;
        ++j;
        if (j < s.size() && s[j] == ' ') ++j;
        return j;
      }
    }
  }
  return 0;
}

// pdsh's "gpu-a01: " (HostLabels says when it is taken). The name has a letter first and a digit
// or a hyphen in it, which "Error: " and "Traceback: " have not; "rank3: " is no host.
size_t named_host_prefix(std::string_view s, LineLabel* label, HostLabels* learned) {
  size_t i = 0;
  bool digit_or_hyphen = false;
  for (; i < s.size() && i < 64 && host_char(s[i]); ++i) digit_or_hyphen |= is_digit(s[i]) || s[i] == '-';
  if (i == 0 || !digit_or_hyphen || is_digit(s[0]) || s[0] == '-' || s[0] == '.' || i + 2 > s.size() ||
      s[i] != ':' || s[i + 1] != ' ')
    return 0;
  std::string_view name = s.substr(0, i);
  if (starts(name, "rank") || starts(name, "Rank") || starts(name, "RANK")) return 0;
  bool known = learned && std::find(learned->names.begin(), learned->names.end(), name) != learned->names.end();
  if (!known) {
    if (i + 2 >= s.size()) return 0;
    std::string_view rest = s.substr(i + 2);
    LineLabel scratch;
    When w;
    // "NCCL version X compiled with CUDA Y" opens NCCL's RAS client report, which carries no
    // header of its own: run through pdsh on a node, it is the first labelled line.
    bool before_known = (rest[0] == '[' && bracket_prefix(rest, &scratch) > 0) ||
                        (rest[0] == '(' && ray_prefix(rest, &scratch) > 0) ||
                        (is_digit(rest[0]) && parse_timestamp(rest, &w) > 0) ||
                        (starts(rest, name) && rest.size() > i && rest[i] == ':') ||
                        starts(rest, "NCCL version ");
    if (!before_known) return 0;
    // Bounded: a node's name per entry, so a hostile input cannot make every line a new one.
    if (learned && learned->names.size() < 4096) learned->names.emplace_back(name);
  }
  label->host = std::string(name);
  return i + 2;
}

// Polyaxon's "UTC master.0 -- " after its time stamp: a time zone, then a replica's name and
// " -- ". Taken only after a time stamp, so that a message's own " -- " stays.
size_t replica_prefix(std::string_view s) {
  size_t i = 0;
  if (starts(s, "UTC ") || starts(s, "GMT ")) i = 4;
  size_t b = i;
  while (i < s.size() && i - b < 64 && host_char(s[i])) ++i;
  if (i == b || !starts(s.substr(i), " -- ")) return 0;
  return i + 4;
}

// mpirun's "[1,0]<stderr>:" tags glued inside a line (its output of one process, interleaved by
// the writes of another stream): removed from `from` on, so the words they split join again.
void drop_glued_tags(std::string* line, size_t from) {
  std::string out = line->substr(0, from);
  size_t i = from;
  while (i < line->size()) {
    if ((*line)[i] == '[') {
      size_t j = i + 1, commas = 0;
      while (j < line->size() && j - i < 24 && (is_digit((*line)[j]) || (*line)[j] == ',')) commas += (*line)[j++] == ',';
      std::string_view rest = std::string_view(*line).substr(j);
      bool tag = commas == 1 && j > i + 3 &&
                 (starts(rest, "]<stdout>:") || starts(rest, "]<stderr>:") || starts(rest, "]<stddiag>:"));
      if (tag) {
        i = j + (starts(rest, "]<stddiag>:") ? 11 : 10);
        continue;
      }
    }
    out.push_back((*line)[i++]);
  }
  line->swap(out);
}

}  // namespace

std::string_view repair_line(std::string* line, LineLabel* label, HostLabels* learned) {
  if (!line->empty() && line->back() == '\r') line->pop_back();
  if (std::memchr(line->data(), '\x1b', line->size()) != nullptr) drop_ansi(line);
  if (!line->empty() && line->back() == '$') {
    // A terminal (or `less`) marks a line it cut at the screen edge with '$'; the rest, if it
    // was kept, is the next line.
    line->pop_back();
    label->wrapped = true;
  }
  std::string_view s(*line);
  for (int round = 0; round < 12 && !s.empty(); ++round) {
    size_t skip = 0;
    while (skip < s.size() && is_space(s[skip])) ++skip;
    s.remove_prefix(skip);
    if (s.empty()) break;
    size_t used = 0;
    char c = s[0];
    if (c == '[') {
      used = bracket_prefix(s, label);
    } else if (c == '(') {
      used = ray_prefix(s, label);
    } else if (is_digit(c)) {
      When w;
      used = parse_timestamp(s, &w);
      if (used > 0) {
        if (!label->when.known()) label->when = w;
        size_t sp = used;
        while (sp < s.size() && is_space(s[sp])) ++sp;
        size_t replica = replica_prefix(s.substr(sp));
        if (replica > 0) used = sp + replica;
      } else if ((used = ip_prefix(s, label)) == 0) {
        long long v = 0;
        size_t n;
        bool ok = parse_dec(s, &v, &n);
        if (n > 0 && n + 1 < s.size() && s[n] == ':' && s[n + 1] == ' ') {
          // srun --label task number; a number too large for a task ("1732900000123: ", a
          // millisecond clock) is a label all the same, but names no task.
          if (ok && v < kMaxRank) label->task = static_cast<int>(v);
          used = n + 2;
        }
      }
    } else if (host_char(c)) {
      used = ctime_prefix(s, label);
      if (used == 0) used = host_prefix(s, label);
      if (used == 0) used = named_host_prefix(s, label, learned);
    }
    if (used == 0) break;
    s.remove_prefix(used);
  }
  if (s.find("]<std") != std::string_view::npos) {
    size_t at = static_cast<size_t>(s.data() - line->data());
    drop_glued_tags(line, at);
    s = std::string_view(*line).substr(at);
  }
  // The glog header of PyTorch's records ("[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607]")
  // stays in the text, but its time is the line's time.
  if (!label->when.known() && s.size() > 2 && s[0] == '[') {
    When w;
    if (parse_timestamp(s.substr(1), &w) > 0) label->when = w;
  }
  return s;
}

}  // namespace denpex::evidence
