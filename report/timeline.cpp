#include "report/timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/fold.h"
#include "report/html_escape.h"

namespace denpex {

using nlohmann::json;

namespace {

constexpr const char* kUnknownHost = "(host unknown)";
constexpr int kBuckets = 64;  // marks of a row closer than 1/64 of the span are one mark

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it != j.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string() && !v.get<std::string>().empty()) out.push_back(v.get<std::string>());
  return out;
}

std::vector<int> ints(const json& j, const char* key) {
  std::vector<int> out;
  auto it = j.find(key);
  if (it != j.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number_integer()) out.push_back(v.get<int>());
  return out;
}

bool digits(const std::string& s, std::size_t at, std::size_t n, int* value) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

struct Event {
  TimelineRole role = TimelineRole::collateral;
  std::vector<int> ranks;
  std::vector<std::string> procs;
  std::vector<std::string> hosts;
  bool has_time = false;
  double t = 0;
  std::string when, what;
};

void set_time(const json& j, Event* e) {
  auto at = j.find("at_us");
  e->when = str(j, "when");
  if (at != j.end() && at->is_number()) {
    e->has_time = true;
    e->t = at->get<double>() / 1e6;
  } else {
    e->has_time = parse_report_time(e->when, &e->t);
  }
}

// diagnosis.timeline: one entry per rank (or process), its first event.
std::vector<Event> per_rank_events(const json& entries) {
  std::vector<Event> out;
  for (const auto& x : entries) {
    if (!x.is_object()) continue;
    Event e;
    e.role = str(x, "role") == "initiating" ? TimelineRole::initiating : TimelineRole::collateral;
    auto r = x.find("rank");
    if (r != x.end() && r->is_number_integer() && r->get<int>() >= 0) e.ranks.push_back(r->get<int>());
    std::string proc = str(x, "process");
    if (e.ranks.empty() && !proc.empty()) e.procs.push_back(proc);
    std::string host = str(x, "host");
    if (host.empty() && proc.rfind(':') != std::string::npos) host = proc.substr(0, proc.rfind(':'));
    if (!host.empty()) e.hosts.push_back(host);
    e.what = str(x, "what");
    set_time(x, &e);
    out.push_back(std::move(e));
  }
  return out;
}

// A party of the diagnosis: its ranks as one event, its processes one event each (a process
// names its host, a rank list of several hosts does not say which rank is where).
void party_events(const json& p, TimelineRole role, std::vector<Event>* out) {
  if (!p.is_object()) return;
  Event base;
  base.role = role;
  base.what = str(p, "what");
  set_time(p, &base);
  std::vector<std::string> hosts = strings(p, "hosts");
  std::vector<int> ranks = ints(p, "ranks");
  std::vector<std::string> procs = strings(p, "processes");
  if (!ranks.empty() || procs.empty()) {
    Event e = base;
    e.ranks = ranks;
    e.hosts = hosts;
    out->push_back(std::move(e));
  }
  for (const auto& proc : procs) {
    Event e = base;
    e.procs.push_back(proc);
    std::size_t colon = proc.rfind(':');
    if (colon != std::string::npos) e.hosts.push_back(proc.substr(0, colon));
    else e.hosts = hosts;
    out->push_back(std::move(e));
  }
}

std::vector<Event> events_of(const json& diag, bool* per_rank) {
  auto tl = diag.find("timeline");
  *per_rank = tl != diag.end() && tl->is_array() && !tl->empty();
  if (*per_rank) return per_rank_events(*tl);
  std::vector<Event> out;
  auto init = diag.find("initiating");
  if (init != diag.end()) party_events(*init, TimelineRole::initiating, &out);
  auto coll = diag.find("collateral");
  if (coll != diag.end() && coll->is_array())
    for (const auto& p : *coll) party_events(p, TimelineRole::collateral, &out);
  return out;
}

template <class T>
void merge_sorted(std::vector<T>* into, const std::vector<T>& more) {
  into->insert(into->end(), more.begin(), more.end());
  std::sort(into->begin(), into->end());
  into->erase(std::unique(into->begin(), into->end()), into->end());
}

int bucket_of(const Timeline& tl, bool has_time, double t) {
  if (!has_time) return -1;
  double span = tl.t1 - tl.t0;
  if (span <= 0) return 0;
  return std::min(kBuckets - 1, static_cast<int>((t - tl.t0) / span * kBuckets));
}

void add_to_mark(TimelineMark* m, const Event& e) {
  if (m->events == 0 || (e.has_time && (!m->has_time || e.t < m->t))) {
    m->has_time = e.has_time;
    m->t = e.t;
    m->when = e.when;
    if (m->events == 0 || e.has_time) m->what = e.what;
  }
  merge_sorted(&m->ranks, e.ranks);
  if (m->procs.size() < 8) merge_sorted(&m->procs, e.procs);
  ++m->events;
}

void merge_mark(TimelineMark* into, const TimelineMark& m) {
  if (m.has_time && (!into->has_time || m.t < into->t)) {
    into->has_time = true;
    into->t = m.t;
    into->when = m.when;
  }
  merge_sorted(&into->ranks, m.ranks);
  if (into->procs.size() < 8) merge_sorted(&into->procs, m.procs);
  into->events += m.events;
}

std::string mark_key(const Timeline& tl, TimelineRole role, bool has_time, double t, bool coarse) {
  return fmt::format("{}:{}", static_cast<int>(role), coarse ? (has_time ? 0 : -1) : bucket_of(tl, has_time, t));
}

// Rows with the same signature (the keys of their marks) become one.
void fold_rows(Timeline* tl, bool coarse) {
  std::map<std::string, TimelineRow> by_sig;
  std::vector<std::string> order;
  for (auto& row : tl->rows) {
    std::set<std::string> keys;
    for (const auto& m : row.marks) keys.insert(mark_key(*tl, m.role, m.has_time, m.t, coarse));
    std::string sig;
    for (const auto& k : keys) sig += k + ";";
    auto it = by_sig.find(sig);
    if (it == by_sig.end()) {
      order.push_back(sig);
      by_sig.emplace(sig, std::move(row));
      continue;
    }
    TimelineRow& into = it->second;
    merge_sorted(&into.hosts, row.hosts);
    merge_sorted(&into.ranks, row.ranks);
    for (const auto& m : row.marks) {
      auto same = std::find_if(into.marks.begin(), into.marks.end(), [&](const TimelineMark& x) {
        return mark_key(*tl, x.role, x.has_time, x.t, coarse) == mark_key(*tl, m.role, m.has_time, m.t, coarse);
      });
      if (same == into.marks.end()) into.marks.push_back(m);
      else merge_mark(&*same, m);
    }
  }
  tl->rows.clear();
  for (const auto& sig : order) {
    TimelineRow row = std::move(by_sig[sig]);
    bool unknown = row.hosts.empty();
    row.label = unknown ? kUnknownHost : fold_hosts(row.hosts);
    tl->rows.push_back(std::move(row));
  }
}

// Host names in natural order: "node2" before "node10".
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && a[i2] >= '0' && a[i2] <= '9') ++i2;
      while (j2 < b.size() && b[j2] >= '0' && b[j2] <= '9') ++j2;
      std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
      na.erase(0, std::min(na.find_first_not_of('0'), na.size() - 1));
      nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size() - 1));
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

void read_claim(const json& diag, Timeline* tl) {
  auto c = diag.find("launcher_claim");
  if (c == diag.end() || !c->is_object()) return;
  TimelineClaim& claim = tl->claim;
  claim.present = true;
  auto correct = c->find("correct");
  claim.correct = correct == c->end() || !correct->is_boolean() || correct->get<bool>();
  claim.ranks = ints(*c, "ranks");
  claim.hosts = strings(*c, "hosts");
  claim.what = str(*c, "what");
  Event e;
  set_time(*c, &e);
  claim.has_time = e.has_time;
  claim.t = e.t;
  claim.when = e.when;
}

bool row_claimed(const TimelineRow& row, const TimelineClaim& claim) {
  if (!claim.present) return false;
  for (int r : claim.ranks)
    if (std::binary_search(row.ranks.begin(), row.ranks.end(), r)) return true;
  if (!claim.ranks.empty()) return false;
  return std::any_of(claim.hosts.begin(), claim.hosts.end(),
                     [&](const std::string& h) { return std::binary_search(row.hosts.begin(), row.hosts.end(), h); });
}

void build_rows(const std::vector<Event>& events, Timeline* tl) {
  std::map<std::string, TimelineRow> rows;
  std::set<std::string> hosts;
  for (const auto& e : events) {
    std::vector<std::string> hs = e.hosts;
    std::sort(hs.begin(), hs.end());
    hs.erase(std::unique(hs.begin(), hs.end()), hs.end());
    hosts.insert(hs.begin(), hs.end());
    std::string key = hs.empty() ? kUnknownHost : fold_hosts(hs);
    TimelineRow& row = rows[key];
    row.hosts = hs;
    row.label = key;
    merge_sorted(&row.ranks, e.ranks);
    std::string mk = mark_key(*tl, e.role, e.has_time, e.t, false);
    auto same = std::find_if(row.marks.begin(), row.marks.end(), [&](const TimelineMark& m) {
      return mark_key(*tl, m.role, m.has_time, m.t, false) == mk;
    });
    if (same == row.marks.end()) {
      row.marks.emplace_back();
      same = row.marks.end() - 1;
      same->role = e.role;
    }
    add_to_mark(&*same, e);
  }
  tl->hosts = hosts.size();
  for (auto& kv : rows) tl->rows.push_back(std::move(kv.second));
}

// Marks of one role closer than a 48th of the span would be drawn on top of each other: one mark.
void merge_close_marks(const Timeline& tl, TimelineRow* row) {
  double close = (tl.t1 - tl.t0) / 48;
  std::vector<TimelineMark> out;
  for (auto& m : row->marks) {
    if (!out.empty() && out.back().role == m.role && out.back().has_time && m.has_time && m.t - out.back().t < close)
      merge_mark(&out.back(), m);
    else
      out.push_back(std::move(m));
  }
  row->marks = std::move(out);
}

}  // namespace

bool parse_report_time(const std::string& when, double* seconds) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  std::size_t at = 0;
  if (digits(when, 0, 4, &y) && when.size() >= 10 && when[4] == '-' && when[7] == '-') at = 5;  // ISO date
  bool dated = digits(when, at, 2, &mo) && when.size() > at + 5 && when[at + 2] == '-' &&
               digits(when, at + 3, 2, &d) && (when[at + 5] == ' ' || when[at + 5] == 'T');
  std::size_t t = dated ? at + 6 : 0;
  if (!dated && at != 0) return false;
  if (!digits(when, t, 2, &h) || when.size() < t + 5 || when[t + 2] != ':' || !digits(when, t + 3, 2, &mi)) return false;
  double frac = 0;
  if (when.size() >= t + 8 && when[t + 5] == ':' && digits(when, t + 6, 2, &s) && when.size() > t + 9 &&
      when[t + 8] == '.') {
    double scale = 0.1;
    for (std::size_t i = t + 9; i < when.size() && when[i] >= '0' && when[i] <= '9'; ++i, scale /= 10)
      frac += (when[i] - '0') * scale;
  } else if (when.size() >= t + 8 && when[t + 5] == ':') {
    digits(when, t + 6, 2, &s);
  }
  // Day of the year as the readers count it (diagnose's When: no leap day), so that a time read
  // here and an at_us of the same line agree.
  static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  if (dated && (mo < 1 || mo > 12 || d < 1 || d > 31)) return false;
  if (h > 23 || mi > 59 || s > 60) return false;
  double day = dated ? before[mo - 1] + d - 1 : 0;
  *seconds = ((day * 24 + h) * 60 + mi) * 60 + s + frac;
  return true;
}

Timeline timeline_of(const json& report, std::size_t max_rows) {
  Timeline tl;
  if (!report.is_object()) return tl;
  auto d = report.find("diagnosis");
  if (d == report.end() || !d->is_object()) return tl;
  std::vector<Event> events = events_of(*d, &tl.per_rank);
  read_claim(*d, &tl);
  bool first = true;
  tl.all_time = !events.empty();
  for (const auto& e : events) {
    tl.all_time = tl.all_time && e.has_time;
    if (!e.has_time) continue;
    tl.any_time = true;
    tl.t0 = first ? e.t : std::min(tl.t0, e.t);
    tl.t1 = first ? e.t : std::max(tl.t1, e.t);
    first = false;
  }
  if (tl.claim.has_time && tl.any_time) {
    tl.t0 = std::min(tl.t0, tl.claim.t);
    tl.t1 = std::max(tl.t1, tl.claim.t);
  }
  build_rows(events, &tl);
  if (tl.rows.size() > max_rows) fold_rows(&tl, false);
  if (tl.rows.size() > max_rows) fold_rows(&tl, true);
  for (auto& row : tl.rows) {
    std::sort(row.marks.begin(), row.marks.end(), [](const TimelineMark& a, const TimelineMark& b) {
      if (a.has_time != b.has_time) return a.has_time;
      if (a.t != b.t) return a.t < b.t;
      return a.role < b.role;
    });
    merge_close_marks(tl, &row);
    row.claimed = row_claimed(row, tl.claim);
  }
  std::sort(tl.rows.begin(), tl.rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
    if (a.hosts.empty() != b.hosts.empty()) return !a.hosts.empty();
    return natural_less(a.label, b.label);
  });
  return tl;
}

}  // namespace denpex
