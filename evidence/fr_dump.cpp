#include "evidence/fr_dump.h"

#include <cctype>
#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "evidence/fr_fields.h"

namespace denpex::evidence {
namespace {

using Kind = PickleValue::Kind;

// A pickle value as the leaf the field functions take (fr_fields.h).
FrScalar scalar_of(const PickleValue* v) {
  FrScalar out;
  if (!v) return out;
  switch (v->kind()) {
    case Kind::none: break;
    case Kind::boolean: out.kind = FrScalar::Kind::boolean; out.b = v->as_bool(); break;
    case Kind::integer: out.kind = FrScalar::Kind::integer; out.i = v->as_int(); break;
    case Kind::floating: out.kind = FrScalar::Kind::floating; out.f = v->as_float(); break;
    case Kind::string: case Kind::bytes: out.kind = FrScalar::Kind::string; out.s = v->as_string(); break;
    default: out.kind = FrScalar::Kind::container; break;
  }
  return out;
}

std::string text_of(const PickleValue* v) { return fr_text(scalar_of(v)); }

// Each distinct frame once: torch's pickler shares a frame's dict between the entries whose
// stacks hold it (a memo reference), so the node identity finds most repeats at once; equal
// text finds the rest (Python's pickler). kBadFrame: its line is out of range.
class PickleFrames {
 public:
  static constexpr uint32_t kBadFrame = UINT32_MAX;
  explicit PickleFrames(std::vector<FrFrame>* frames) : table_(frames) {}
  uint32_t id(const PickleValue& f) {
    if (auto it = by_node_.find(f.identity()); it != by_node_.end()) return it->second;
    FrFrame fr{text_of(f.find("name")), text_of(f.find("filename")), -1};
    uint32_t id = fr_int(scalar_of(f.find("line")), -1, &fr.line) ? table_.id(std::move(fr)) : kBadFrame;
    by_node_.emplace(f.identity(), id);
    return id;
  }

 private:
  FrFrameTable table_;
  std::unordered_map<const void*, uint32_t> by_node_;
};

// A list of lists of numbers (input_sizes): false with *why for a number out of range.
bool sizes_of(const PickleValue& v, std::vector<std::vector<int64_t>>* out, std::string* why) {
  out->clear();
  out->reserve(v.items().size());
  for (const PickleValue& arg : v.items()) {
    std::vector<int64_t> dims;
    dims.reserve(arg.items().size());
    for (const PickleValue& d : arg.items()) {
      int64_t n = 0;
      if (!fr_int(scalar_of(&d), 0, &n)) {
        *why = fmt::format("a tensor dimension {} is out of range", fr_shown(scalar_of(&d)));
        return false;
      }
      dims.push_back(n);
    }
    out->push_back(std::move(dims));
  }
  return true;
}

std::vector<std::string> strings_of(const PickleValue& v) {
  std::vector<std::string> out;
  out.reserve(v.items().size());
  for (const PickleValue& s : v.items()) out.push_back(text_of(&s));
  return out;
}

// Reads one field of an entry into `e`; false with *why for a number out of range.
bool entry_field(const std::string& key, const PickleValue& v, FrEntry* e, PickleFrames* frames, std::string* why) {
  if (key == "frames") {
    e->frames.clear();
    e->frames.reserve(v.items().size());
    for (const PickleValue& f : v.items()) {
      uint32_t id = frames->id(f);
      if (id == PickleFrames::kBadFrame) {
        *why = "a frame's line is out of range";
        return false;
      }
      e->frames.push_back(id);
    }
    return true;
  }
  if (key == "input_sizes") return sizes_of(v, &e->input_sizes, why);
  if (key == "output_sizes") return sizes_of(v, &e->output_sizes, why);
  if (key == "input_dtypes") e->input_dtypes = strings_of(v);
  else if (key == "output_dtypes") e->output_dtypes = strings_of(v);
  else if (key == "process_group" && v.items().size() >= 2) {
    e->pg_name = text_of(&v.items()[0]);
    e->pg_desc = text_of(&v.items()[1]);
  } else {
    return fr_entry_scalar(key, scalar_of(&v), e, why);
  }
  return true;
}

void read_entries(const PickleValue& list, FrDump* d) {
  PickleFrames frames(&d->frames);
  d->entries.reserve(list.items().size());
  size_t skipped = 0, index = 0;
  for (const PickleValue& item : list.items()) {
    if (!item.is(Kind::dict)) {
      ++skipped, ++index;
      continue;
    }
    FrEntry e;
    std::string why;
    for (const auto& [k, v] : item.entries())
      if (k.is(Kind::string) && !entry_field(k.as_string(), v, &e, &frames, &why)) break;
    fr_finish_entry(&e);
    if (why.empty()) d->entries.push_back(std::move(e));
    else fr_refuse(d, fmt::format("entry {}: {}", index, why));
    ++index;
  }
  if (skipped > 0) d->warnings.push_back(fmt::format("{} entries that are not records were skipped", skipped));
}

void read_pg_config(const PickleValue& v, FrDump* d) {
  for (const auto& [k, info] : v.entries()) {
    FrProcessGroup pg;
    pg.name = text_of(info.find("name"));
    if (pg.name.empty()) pg.name = text_of(&k);
    pg.desc = text_of(info.find("desc"));
    std::string why;
    const PickleValue* ranks = info.find("ranks");
    if (ranks && ranks->is(Kind::string)) {
      fr_ranks_text(ranks->as_string(), &pg.ranks, &why);
    } else if (ranks) {
      for (const PickleValue& r : ranks->items())
        if (!fr_rank_item(scalar_of(&r), &pg.ranks, &why)) break;
    }
    if (why.empty()) d->pg_config.push_back(std::move(pg));
    else fr_refuse(d, fmt::format("pg_config \"{}\": {}", text_of(&k), why));
  }
}

void read_pg_status(const PickleValue& v, FrDump* d) {
  for (const auto& [k, st] : v.entries()) {
    FrPgStatus s;
    s.pg_id = text_of(&k);
    std::string why;
    for (auto [key, field] : {std::pair{"last_enqueued_collective", &s.last_enqueued},
                              std::pair{"last_started_collective", &s.last_started},
                              std::pair{"last_completed_collective", &s.last_completed}})
      if (!fr_int(scalar_of(st.find(key)), -1, field) && why.empty())
        why = fmt::format("{} {} is out of range", key, fr_shown(scalar_of(st.find(key))));
    if (why.empty()) d->pg_status.push_back(std::move(s));
    else fr_refuse(d, fmt::format("pg_status \"{}\": {}", s.pg_id, why));
  }
}

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
  d->comm_lib_version = text_of(top.find("comm_lib_version"));
  if (const PickleValue* pc = top.find("pg_config")) read_pg_config(*pc, d);
  if (const PickleValue* ps = top.find("pg_status")) read_pg_status(*ps, d);
  if (const PickleValue* es = top.find("entries")) read_entries(*es, d);
  fr_version_warning(d);
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
  read_fr_json(bytes, &d, limits);
  return d;
}

FrDump read_fr_dump(ByteSource* source, const std::string& name, const PickleLimits& limits) {
  std::string bytes, error;
  std::string buf(1 << 16, '\0');
  // The first piece tells the form: a pickle is read whole, JSON is streamed.
  long n = source->read(&buf[0], buf.size(), &error);
  if (n > 0 && static_cast<unsigned char>(buf[0]) != 0x80) {
    FrDump d;
    d.source = name;
    d.rank = rank_from_dump_name(name);
    d.format = "json";
    read_fr_json(source, buf.substr(0, static_cast<size_t>(n)), &d, limits);
    return d;
  }
  for (; n > 0; n = source->read(&buf[0], buf.size(), &error)) {
    if (bytes.size() + static_cast<size_t>(n) > limits.max_input_bytes) break;
    bytes.append(buf.data(), static_cast<size_t>(n));
  }
  InputCut cut = n == 0 ? source->cut() : InputCut{};
  if (n != 0 || cut.why != InputCut::Why::none) {
    FrDump d;
    d.source = name;
    d.status = n < 0 || n == 0 ? FrDump::Status::malformed : FrDump::Status::too_large;
    d.message = n < 0    ? error
                : n == 0 ? cut.message + "; the dump is not read: a part of it would show its rank behind where it was"
                         : fmt::format("{}: more than {} bytes: larger than a Flight Recorder dump this reader takes",
                                       name, limits.max_input_bytes);
    d.cut = std::move(cut);
    return d;
  }
  return read_fr_dump(std::string_view(bytes), name, limits);
}

}  // namespace denpex::evidence
