#include "evidence/fr_dump.h"

#include <cctype>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "compare/bounded_json.h"

namespace denpex::evidence {
namespace {

using Kind = PickleValue::Kind;

// A JSON document as the same tree a pickle gives, so one extractor reads both. The bounded
// parser already capped nesting at 64, which bounds this recursion.
PickleValue tree_of(const nlohmann::json& j, PickleArena* arena) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return PickleValue::none();
    case nlohmann::json::value_t::boolean: return PickleValue::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return PickleValue::integer(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      return u <= uint64_t{INT64_MAX} ? PickleValue::integer(static_cast<int64_t>(u))
                                      : PickleValue::floating(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return PickleValue::floating(j.get<double>());
    case nlohmann::json::value_t::string: return PickleValue::text(arena, Kind::string, j.get<std::string>());
    case nlohmann::json::value_t::array: {
      PickleValue v = PickleValue::container(arena, Kind::list);
      for (const auto& x : j) v.node()->items.push_back(tree_of(x, arena));
      return v;
    }
    case nlohmann::json::value_t::object: {
      PickleValue v = PickleValue::container(arena, Kind::dict);
      for (auto it = j.begin(); it != j.end(); ++it)
        v.node()->entries.emplace_back(PickleValue::text(arena, Kind::string, it.key()), tree_of(it.value(), arena));
      return v;
    }
    default: break;
  }
  return PickleValue::none();
}

// An integer from an int, a float or a decimal string (the JSON dump writes pg_status as text);
// `fallback` for anything else, and for None (a time not yet discovered).
int64_t int_of(const PickleValue* v, int64_t fallback = -1) {
  if (!v) return fallback;
  if (v->is(Kind::integer)) return v->as_int();
  if (v->is(Kind::floating)) return static_cast<int64_t>(v->as_float());
  if (v->is(Kind::boolean)) return v->as_bool() ? 1 : 0;
  if (v->is(Kind::string)) {
    const std::string& s = v->as_string();
    char* end = nullptr;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && *end == '\0') return n;
  }
  return fallback;
}

std::string text_of(const PickleValue* v) {
  if (!v) return "";
  if (v->is(Kind::string) || v->is(Kind::bytes)) return v->as_string();
  if (v->is(Kind::integer)) return std::to_string(v->as_int());
  if (v->is(Kind::floating)) return fmt::format("{}", v->as_float());
  return "";
}

std::vector<std::vector<int64_t>> sizes_of(const PickleValue& v) {
  std::vector<std::vector<int64_t>> out;
  out.reserve(v.items().size());
  for (const PickleValue& arg : v.items()) {
    std::vector<int64_t> dims;
    dims.reserve(arg.items().size());
    for (const PickleValue& d : arg.items()) dims.push_back(int_of(&d, 0));
    out.push_back(std::move(dims));
  }
  return out;
}

std::vector<std::string> strings_of(const PickleValue& v) {
  std::vector<std::string> out;
  out.reserve(v.items().size());
  for (const PickleValue& s : v.items()) out.push_back(text_of(&s));
  return out;
}

FrState state_of(const std::string& s) {
  if (s == "completed") return FrState::completed;
  if (s == "started") return FrState::started;
  if (s == "scheduled") return FrState::scheduled;
  return FrState::unknown;
}

// "[0, 1, 2]" (torch's ranks_str), or a list of ints.
std::vector<int> ranks_of(const PickleValue* v) {
  std::vector<int> out;
  if (!v) return out;
  if (!v->is(Kind::string)) {
    for (const PickleValue& r : v->items()) out.push_back(static_cast<int>(int_of(&r, -1)));
    return out;
  }
  const std::string& s = v->as_string();
  for (size_t i = 0; i < s.size();) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    long n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && n < 100000000)
      n = n * 10 + (s[i++] - '0');
    out.push_back(static_cast<int>(n));
  }
  return out;
}

}  // namespace

namespace {

// Each distinct frame once: torch's pickler shares a frame's dict between the entries whose
// stacks hold it (a memo reference), so the node identity finds most repeats at once; equal
// text finds the rest (the JSON form, Python's pickler).
class FrameTable {
 public:
  explicit FrameTable(std::vector<FrFrame>* frames) : frames_(frames) {}
  uint32_t id(const PickleValue& f) {
    if (auto it = by_node_.find(f.identity()); it != by_node_.end()) return it->second;
    FrFrame fr{text_of(f.find("name")), text_of(f.find("filename")), int_of(f.find("line"))};
    std::string key = fmt::format("{}\n{}\n{}", fr.name, fr.filename, fr.line);
    auto [it, added] = by_text_.emplace(std::move(key), static_cast<uint32_t>(frames_->size()));
    if (added) frames_->push_back(std::move(fr));
    by_node_.emplace(f.identity(), it->second);
    return it->second;
  }

 private:
  std::vector<FrFrame>* frames_;
  std::unordered_map<const void*, uint32_t> by_node_;
  std::unordered_map<std::string, uint32_t> by_text_;
};

// Reads one field of an entry into `e`. Unknown fields are left alone (newer versions add some).
void entry_field(const std::string& key, const PickleValue& v, FrEntry* e, FrameTable* frames) {
  switch (key.empty() ? '\0' : key[0]) {
    case 'c': if (key == "collective_seq_id") e->collective_seq_id = int_of(&v); break;
    case 'd': if (key == "duration_ms") e->duration_ms = v.as_float(); break;
    case 'f':
      if (key == "frames") {
        e->frames.reserve(v.items().size());
        for (const PickleValue& f : v.items()) e->frames.push_back(frames->id(f));
      }
      break;
    case 'i':
      if (key == "input_sizes") e->input_sizes = sizes_of(v);
      else if (key == "input_dtypes") e->input_dtypes = strings_of(v);
      else if (key == "is_p2p") e->is_p2p = v.as_bool();
      break;
    case 'o':
      if (key == "output_sizes") e->output_sizes = sizes_of(v);
      else if (key == "output_dtypes") e->output_dtypes = strings_of(v);
      else if (key == "op_id") e->op_id = int_of(&v);
      break;
    case 'p':
      if (key == "pg_id") e->pg_id = text_of(&v);
      else if (key == "p2p_seq_id") e->p2p_seq_id = int_of(&v);
      else if (key == "profiling_name") e->profiling_name = text_of(&v);
      else if (key == "process_group" && v.items().size() >= 2) {
        e->pg_name = text_of(&v.items()[0]);
        e->pg_desc = text_of(&v.items()[1]);
      } else if (key == "process_group") {
        e->pg_name = text_of(&v);
      }
      break;
    case 'r':
      if (key == "record_id") e->record_id = int_of(&v);
      else if (key == "retired") e->retired = v.as_bool();
      break;
    case 's': if (key == "state") e->state = state_of(text_of(&v)); break;
    case 't':
      if (key == "time_created_ns") e->time_created_ns = int_of(&v);
      else if (key == "time_discovered_started_ns") e->time_started_ns = int_of(&v);
      else if (key == "time_discovered_completed_ns") e->time_completed_ns = int_of(&v);
      else if (key == "timeout_ms") e->timeout_ms = int_of(&v);
      break;
    default: break;
  }
}

void read_entries(const PickleValue& list, FrDump* d) {
  FrameTable frames(&d->frames);
  d->entries.reserve(list.items().size());
  size_t skipped = 0;
  for (const PickleValue& item : list.items()) {
    if (!item.is(Kind::dict)) {
      ++skipped;
      continue;
    }
    FrEntry e;
    for (const auto& [k, v] : item.entries())
      if (k.is(Kind::string)) entry_field(k.as_string(), v, &e, &frames);
    // The JSON dump writes 0 for a time not yet discovered.
    if (e.time_started_ns == 0) e.time_started_ns = -1;
    if (e.time_completed_ns == 0) e.time_completed_ns = -1;
    d->entries.push_back(std::move(e));
  }
  if (skipped > 0) d->warnings.push_back(fmt::format("{} entries that are not records were skipped", skipped));
}

void read_pg_config(const PickleValue& v, FrDump* d) {
  for (const auto& [k, info] : v.entries()) {
    FrProcessGroup pg;
    pg.name = text_of(info.find("name"));
    if (pg.name.empty()) pg.name = text_of(&k);
    pg.desc = text_of(info.find("desc"));
    pg.ranks = ranks_of(info.find("ranks"));
    d->pg_config.push_back(std::move(pg));
  }
}

void read_pg_status(const PickleValue& v, FrDump* d) {
  for (const auto& [k, st] : v.entries()) {
    FrPgStatus s;
    s.pg_id = text_of(&k);
    s.last_enqueued = int_of(st.find("last_enqueued_collective"));
    s.last_started = int_of(st.find("last_started_collective"));
    s.last_completed = int_of(st.find("last_completed_collective"));
    d->pg_status.push_back(std::move(s));
  }
}

bool known_version(const std::string& v) {
  // The versions torch has written, 2.0 ("2.0" .. "2.10" by its version_val), read by field name.
  if (v.size() < 3 || v.compare(0, 2, "2.") != 0) return false;
  char* end = nullptr;
  long minor = std::strtol(v.c_str() + 2, &end, 10);
  return end && *end == '\0' && minor >= 0 && minor <= 10;
}

}  // namespace

namespace {

FrDump::Status status_of(PickleResult::Status s) {
  switch (s) {
    case PickleResult::Status::refused: return FrDump::Status::refused;
    case PickleResult::Status::too_large: return FrDump::Status::too_large;
    default: return FrDump::Status::malformed;
  }
}

// Fills `d` from the dump's top-level dict.
void read_tree(const PickleValue& top, FrDump* d) {
  if (!top.is(Kind::dict) || !top.find("version")) {
    d->status = FrDump::Status::malformed;
    d->message = fmt::format("{}: a {} {}, not a Flight Recorder dump (no \"version\" key): give "
                             "the files torch wrote to TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
                             d->source, d->format, to_string(top.kind()));
    return;
  }
  d->status = FrDump::Status::ok;
  d->version = text_of(top.find("version"));
  d->version_known = known_version(d->version);
  if (!d->version_known)
    d->warnings.push_back(fmt::format(
        "Flight Recorder dump version \"{}\" is not one this reader knows (2.0 to 2.10): read "
        "by field name; check what it says against torch's fr_trace", d->version));
  d->comm_lib_version = text_of(top.find("comm_lib_version"));
  if (const PickleValue* pc = top.find("pg_config")) read_pg_config(*pc, d);
  if (const PickleValue* ps = top.find("pg_status")) read_pg_status(*ps, d);
  if (const PickleValue* es = top.find("entries")) read_entries(*es, d);
}

}  // namespace

const char* to_string(FrState s) {
  switch (s) {
    case FrState::scheduled: return "scheduled";
    case FrState::started: return "started";
    case FrState::completed: return "completed";
    case FrState::unknown: break;
  }
  return "unknown";
}

int rank_from_dump_name(const std::string& name) {
  size_t slash = name.find_last_of('/');
  std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  // A suffix the user added (".json", ".pkl", ".gz") is not part of torch's name.
  for (size_t dot; (dot = base.find_last_of('.')) != std::string::npos && dot > 0 &&
                   !std::isdigit(static_cast<unsigned char>(base.back()));)
    base.resize(dot);
  size_t end = base.size(), begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(base[begin - 1]))) --begin;
  if (begin == end || end - begin > 7) return -1;
  return std::atoi(base.c_str() + begin);
}

FrDump read_fr_dump(std::string_view bytes, const std::string& name, const PickleLimits& limits) {
  FrDump d;
  d.source = name;
  d.rank = rank_from_dump_name(name);
  d.bytes = bytes.size();
  if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) {
    d.format = "pickle";
    PickleResult p = read_pickle(bytes, limits);
    if (p.status != PickleResult::Status::ok) {
      d.status = status_of(p.status);
      d.message = fmt::format("{}: not read as a Flight Recorder dump: {}", name, p.message);
      return d;
    }
    read_tree(p.value, &d);
    return d;
  }
  d.format = "json";
  if (bytes.size() > limits.max_input_bytes) {
    d.status = FrDump::Status::too_large;
    d.message = fmt::format("{}: {} bytes, more than the {} a dump may have", name, bytes.size(),
                            limits.max_input_bytes);
    return d;
  }
  BoundedJson j = parse_bounded_json(std::string(bytes));
  if (j.status != BoundedJsonStatus::ok) {
    d.status = FrDump::Status::malformed;
    d.message = fmt::format("{}: neither a pickle nor {} JSON: not a Flight Recorder dump", name,
                            j.status == BoundedJsonStatus::too_deep ? "shallow" : "valid");
    return d;
  }
  PickleArena arena;
  read_tree(tree_of(j.value, &arena), &d);
  return d;
}

FrDump read_fr_dump(ByteSource* source, const std::string& name, const PickleLimits& limits) {
  std::string bytes, error;
  std::string buf(1 << 16, '\0');
  for (;;) {
    long n = source->read(&buf[0], buf.size(), &error);
    if (n < 0 || (n > 0 && bytes.size() + static_cast<size_t>(n) > limits.max_input_bytes)) {
      FrDump d;
      d.source = name;
      d.status = n < 0 ? FrDump::Status::malformed : FrDump::Status::too_large;
      d.message = n < 0 ? error : fmt::format("{}: more than {} bytes: larger than a Flight "
                                              "Recorder dump this reader takes", name,
                                              limits.max_input_bytes);
      return d;
    }
    if (n == 0) break;
    bytes.append(buf.data(), static_cast<size_t>(n));
  }
  return read_fr_dump(std::string_view(bytes), name, limits);
}

}  // namespace denpex::evidence
