#include "evidence/fr_fields.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "evidence/line_repair.h"

namespace denpex::evidence {
namespace {

using Kind = FrScalar::Kind;

constexpr size_t kMaxShown = 40;  // characters of a refused value a sample quotes

bool set_int(const FrScalar& v, const char* key, int64_t* field, std::string* why) {
  if (fr_int(v, -1, field)) return true;
  *why = fmt::format("{} {} is out of range", key, fr_shown(v));
  return false;
}

// record_id goes into an int32 (compare/fr_judge.h's FrCall).
bool set_record_id(const FrScalar& v, int64_t* field, std::string* why) {
  int64_t n = -1;
  if (fr_int(v, -1, &n) && n >= std::numeric_limits<int32_t>::min() && n <= std::numeric_limits<int32_t>::max()) {
    *field = n;
    return true;
  }
  *why = fmt::format("record_id {} is out of range (a 32-bit number)", fr_shown(v));
  return false;
}

FrState state_of(const std::string& s) {
  if (s == "completed") return FrState::completed;
  if (s == "started") return FrState::started;
  if (s == "scheduled") return FrState::scheduled;
  return FrState::unknown;
}

bool rank_in_range(int64_t n, const std::string& shown, std::vector<int>* out, std::string* why) {
  if (n < 0 || n >= kMaxRank) {
    *why = fmt::format("rank {} is out of range (0 to {})", shown, kMaxRank - 1);
    return false;
  }
  out->push_back(static_cast<int>(n));
  return true;
}

}  // namespace

std::string fr_text(const FrScalar& v) {
  switch (v.kind) {
    case Kind::string: return v.s;
    case Kind::integer: return std::to_string(v.i);
    case Kind::big:
    case Kind::floating: return fmt::format("{}", v.f);
    default: break;
  }
  return "";
}

bool fr_int(const FrScalar& v, int64_t fallback, int64_t* out) {
  switch (v.kind) {
    case Kind::integer: *out = v.i; return true;
    case Kind::boolean: *out = v.b ? 1 : 0; return true;
    case Kind::big: return false;
    case Kind::floating:
      // NaN and values past int64 are not numbers a dump has.
      if (!(v.f > -9.2e18 && v.f < 9.2e18)) return false;
      *out = static_cast<int64_t>(v.f);
      return true;
    case Kind::string: {
      char* end = nullptr;
      errno = 0;
      long long n = std::strtoll(v.s.c_str(), &end, 10);
      bool number = !v.s.empty() && end && *end == '\0';
      if (number && errno == ERANGE) return false;
      *out = number ? n : fallback;
      return true;
    }
    default: break;
  }
  *out = fallback;
  return true;
}

double fr_float(const FrScalar& v) {
  if (v.kind == Kind::integer) return static_cast<double>(v.i);
  if (v.kind == Kind::floating || v.kind == Kind::big) return v.f;
  return 0.0;
}

std::string fr_shown(const FrScalar& v) {
  std::string s = (v.kind == Kind::big || v.kind == Kind::floating) && !v.s.empty() ? v.s : fr_text(v);
  if (s.size() > kMaxShown) s = s.substr(0, kMaxShown) + "...";
  return v.kind == Kind::string ? "\"" + s + "\"" : s;
}

bool fr_entry_scalar(std::string_view key, const FrScalar& v, FrEntry* e, std::string* why) {
  if (key == "collective_seq_id") return set_int(v, "collective_seq_id", &e->collective_seq_id, why);
  if (key == "p2p_seq_id") return set_int(v, "p2p_seq_id", &e->p2p_seq_id, why);
  if (key == "op_id") return set_int(v, "op_id", &e->op_id, why);
  if (key == "record_id") return set_record_id(v, &e->record_id, why);
  if (key == "time_created_ns") return set_int(v, "time_created_ns", &e->time_created_ns, why);
  if (key == "time_discovered_started_ns") return set_int(v, "time_discovered_started_ns", &e->time_started_ns, why);
  if (key == "time_discovered_completed_ns")
    return set_int(v, "time_discovered_completed_ns", &e->time_completed_ns, why);
  if (key == "timeout_ms") return set_int(v, "timeout_ms", &e->timeout_ms, why);
  if (key == "duration_ms") e->duration_ms = fr_float(v);
  else if (key == "is_p2p") e->is_p2p = v.kind == Kind::boolean && v.b;
  else if (key == "retired") e->retired = v.kind == Kind::boolean && v.b;
  else if (key == "pg_id") e->pg_id = fr_text(v);
  else if (key == "profiling_name") e->profiling_name = fr_text(v);
  else if (key == "state") e->state = state_of(fr_text(v));
  else if (key == "process_group") e->pg_name = fr_text(v);  // a list of two is read by the caller
  return true;
}

void fr_finish_entry(FrEntry* e) {
  if (e->time_started_ns == 0) e->time_started_ns = -1;
  if (e->time_completed_ns == 0) e->time_completed_ns = -1;
}

bool fr_ranks_text(const std::string& s, std::vector<int>* out, std::string* why) {
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    long long n = 0;
    bool over = false;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      over = over || n >= kMaxRank;
      if (!over) n = n * 10 + (s[i] - '0');
    }
    bool negative = start > 0 && s[start - 1] == '-';
    std::string shown = (negative ? "-" : "") + s.substr(start, std::min(i - start, kMaxShown));
    if (!rank_in_range(over ? kMaxRank : negative ? -n - 1 : n, shown, out, why)) return false;
  }
  return true;
}

bool fr_rank_item(const FrScalar& v, std::vector<int>* out, std::string* why) {
  int64_t n = -1;
  if (!fr_int(v, -1, &n)) n = kMaxRank;  // past int64: out of range below
  return rank_in_range(n, fr_shown(v), out, why);
}

uint32_t FrFrameTable::id(FrFrame fr) {
  std::string key = fmt::format("{}\n{}\n{}", fr.name, fr.filename, fr.line);
  auto [it, added] = by_text_.emplace(std::move(key), static_cast<uint32_t>(frames_->size()));
  if (added) {
    // The map's node and key, the frame's strings, and what the frames' vector grew by.
    size_t before = frames_->capacity();
    bytes_ += it->first.size() + fr.name.size() + fr.filename.size() + 96;
    frames_->push_back(std::move(fr));
    bytes_ += (frames_->capacity() - before) * sizeof(FrFrame);
  }
  return it->second;
}

void fr_refuse(FrDump* d, std::string sample) {
  ++d->unreadable;
  if (d->unreadable_samples.size() < kFrUnreadableSamples) d->unreadable_samples.push_back(std::move(sample));
}

bool fr_known_version(const std::string& v) {
  // The versions torch has written, 2.0 ("2.0" .. "2.10" by its version_val), read by field name.
  if (v.size() < 3 || v.compare(0, 2, "2.") != 0) return false;
  char* end = nullptr;
  long minor = std::strtol(v.c_str() + 2, &end, 10);
  return end && *end == '\0' && minor >= 0 && minor <= 10;
}

void fr_version_warning(FrDump* d) {
  d->version_known = fr_known_version(d->version);
  if (!d->version_known)
    d->warnings.insert(d->warnings.begin(), fmt::format(
        "Flight Recorder dump version \"{}\" is not one this reader knows (2.0 to 2.10): read "
        "by field name; check what it says against torch's fr_trace", d->version));
}

}  // namespace denpex::evidence
