// The JSON form of a Flight Recorder dump (what torch's dump_json writes), read with nlohmann's
// SAX parser straight into FrDump (fr_dump.h says the bound on what is kept). The handler keeps a
// stack of where it is (a role per open array or object); a leaf value goes where its role and
// key say, through the same field functions the pickle reader uses (fr_fields.h), so both forms
// read alike, down to their zero values for a list or dict where a scalar belongs.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evidence/fr_fields.h"
#include "evidence/json_source.h"

namespace denpex::evidence {
namespace {

using json = nlohmann::json;
using Kind = FrScalar::Kind;

enum class Role : uint8_t {
  top, pg_config, pg_info, pg_ranks, pg_status, status_info, entries, entry, sizes, dims, dtypes,
  frames, frame, group, skip,
};

struct Level {
  Role role;
  std::string key;  // in an object: the key of the value being read
};

const FrScalar kContainer{Kind::container, false, 0, 0, {}};

// The pickle reader's names for a top-level value that is not a dict (PickleValue::Kind).
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::null: return "None";
    case Kind::boolean: return "bool";
    case Kind::integer: return "int";
    case Kind::big: case Kind::floating: return "float";
    case Kind::string: return "str";
    case Kind::container: break;
  }
  return "dict";
}

class FrJsonHandler {
 public:
  FrJsonHandler(FrDump* d, const PickleLimits& limits, const uint64_t* read)
      : d_(d), lim_(limits), read_(read), table_(&d->frames) {}

  bool null() { return leaf(FrScalar{}); }
  bool boolean(bool b) { return leaf(FrScalar{Kind::boolean, b, 0, 0, {}}); }
  bool number_integer(json::number_integer_t i) { return leaf(FrScalar{Kind::integer, false, i, 0, {}}); }
  bool number_unsigned(json::number_unsigned_t u) {
    if (u <= static_cast<uint64_t>(INT64_MAX)) return number_integer(static_cast<int64_t>(u));
    return leaf(FrScalar{Kind::big, false, 0, static_cast<double>(u), std::to_string(u)});
  }
  bool number_float(json::number_float_t f, const std::string& raw) {
    return leaf(FrScalar{Kind::floating, false, 0, f, raw});
  }
  bool string(std::string& s) { return leaf(FrScalar{Kind::string, false, 0, 0, std::move(s)}); }
  bool binary(json::binary_t&) { return leaf(kContainer); }
  bool key(std::string& k) {
    levels_.back().key = std::move(k);
    if (levels_.size() == 1) top_key(levels_.back().key);
    return true;
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  bool too_deep() const { return too_deep_; }
  bool too_much() const { return too_much_; }
  bool has_version() const { return has_version_; }
  const char* top_kind() const { return top_kind_; }
  size_t skipped() const { return skipped_; }
  uint64_t kept() const { return kept_ + table_.bytes(); }

 private:
  bool open(bool object);
  Role child_role(bool object);
  Role entry_child(const std::string& key, bool object);
  bool close();
  bool leaf(const FrScalar& v);
  void top_key(const std::string& k);
  void top_leaf(const std::string& key, const FrScalar& v);
  void pg_leaf(const std::string& key, const FrScalar& v);
  void status_leaf(const std::string& key, const FrScalar& v);
  void entry_leaf(const std::string& key, const FrScalar& v);
  void dims_leaf(const FrScalar& v);
  void frame_leaf(const std::string& key, const FrScalar& v);
  void start_pg(const std::string& key);
  void end_pg();
  void start_status(const std::string& key);
  void end_status();
  void end_entry();
  void end_frame();
  void end_group();
  // Adds to `v` with `add`, charging what its capacity grew by: what is charged is what is
  // allocated, spare capacity included.
  template <typename T, typename Add>
  bool grow(std::vector<T>* v, Add&& add) {
    size_t before = v->capacity();
    add();
    return charge((v->capacity() - before) * sizeof(T));
  }
  // Charges `n` bytes kept; false (and the dump refused) past the bound of fr_dump.h.
  bool charge(uint64_t n) {
    kept_ += n;
    if (kept() <= lim_.max_kept_per_byte * *read_ + lim_.kept_slack_bytes) return true;
    too_much_ = true;
    return false;
  }
  static uint64_t text_bytes(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }

  FrDump* d_;
  const PickleLimits& lim_;
  const uint64_t* read_;
  FrFrameTable table_;
  std::vector<Level> levels_;
  const char* top_kind_ = "";
  bool has_version_ = false, too_deep_ = false, too_much_ = false;
  size_t skipped_ = 0, entries_seen_ = 0;
  uint64_t kept_ = 0;
  // The record being read, and why it is refused ("" while it is not).
  FrProcessGroup pg_;
  FrPgStatus status_;
  std::string record_key_, record_why_;
  FrEntry entry_;
  size_t entry_index_ = 0;
  std::vector<std::vector<int64_t>>* sizes_ = nullptr;
  std::vector<std::string>* dtypes_ = nullptr;
  FrFrame frame_;
  std::string group_[2];
  size_t group_items_ = 0;
};

bool FrJsonHandler::open(bool object) {
  if (levels_.size() >= kMaxSaxDepth) {
    too_deep_ = true;
    return false;
  }
  if (levels_.empty()) {
    top_kind_ = object ? "dict" : "list";
    levels_.push_back(Level{object ? Role::top : Role::skip, {}});
    return true;
  }
  Role role = child_role(object);
  levels_.push_back(Level{role, {}});
  return !too_much_;
}

// The role of an array or object opening inside the current level. A container where a scalar
// belongs is read as that scalar first (the zero values), then skipped.
Role FrJsonHandler::child_role(bool object) {
  const Level& at = levels_.back();
  switch (at.role) {
    case Role::top:
      if (at.key == "pg_config" && object) return Role::pg_config;
      if (at.key == "pg_status" && object) return Role::pg_status;
      if (at.key == "entries" && !object) return Role::entries;
      break;
    case Role::pg_config:
      start_pg(at.key);
      if (object) return Role::pg_info;
      end_pg();  // not a dict: a group named by its key alone
      return Role::skip;
    case Role::pg_info:
      if (at.key == "ranks") {
        pg_.ranks.clear();
        return object ? Role::skip : Role::pg_ranks;
      }
      break;
    case Role::pg_status:
      start_status(at.key);
      if (object) return Role::status_info;
      end_status();
      return Role::skip;
    case Role::entries:
      ++entries_seen_;
      if (!object) {
        ++skipped_;
        return Role::skip;
      }
      entry_ = FrEntry{};
      record_why_.clear();
      entry_index_ = entries_seen_ - 1;
      return Role::entry;
    case Role::entry: return entry_child(at.key, object);
    case Role::sizes:
      grow(sizes_, [&] { sizes_->emplace_back(); });  // an argument that is not a list has no dimensions
      return object ? Role::skip : Role::dims;
    case Role::frames:
      frame_ = FrFrame{};
      if (object) return Role::frame;
      end_frame();  // not a dict: a frame without name, file or line
      return Role::skip;
    case Role::skip: return Role::skip;
    default: break;
  }
  leaf(kContainer);
  return Role::skip;
}

Role FrJsonHandler::entry_child(const std::string& key, bool object) {
  if (key == "input_sizes" || key == "output_sizes") {
    sizes_ = key[0] == 'i' ? &entry_.input_sizes : &entry_.output_sizes;
    sizes_->clear();
    return object ? Role::skip : Role::sizes;
  }
  if (key == "input_dtypes" || key == "output_dtypes") {
    dtypes_ = key[0] == 'i' ? &entry_.input_dtypes : &entry_.output_dtypes;
    dtypes_->clear();
    return object ? Role::skip : Role::dtypes;
  }
  if (key == "frames") {
    entry_.frames.clear();
    return object ? Role::skip : Role::frames;
  }
  if (key == "process_group" && !object) {
    group_items_ = 0;
    group_[0].clear();
    group_[1].clear();
    return Role::group;
  }
  entry_leaf(key, kContainer);
  return Role::skip;
}

bool FrJsonHandler::close() {
  Role role = levels_.back().role;
  levels_.pop_back();
  switch (role) {
    case Role::pg_info: end_pg(); break;
    case Role::status_info: end_status(); break;
    case Role::entry: end_entry(); break;
    case Role::frame: end_frame(); break;
    case Role::group: end_group(); break;
    default: break;
  }
  return !too_much_;
}

bool FrJsonHandler::leaf(const FrScalar& v) {
  if (levels_.empty()) {
    top_kind_ = kind_name(v.kind);
    return true;
  }
  const Level& at = levels_.back();
  switch (at.role) {
    case Role::top: top_leaf(at.key, v); break;
    case Role::pg_config: start_pg(at.key); end_pg(); break;
    case Role::pg_info: pg_leaf(at.key, v); break;
    case Role::pg_ranks:
      if (record_why_.empty()) grow(&pg_.ranks, [&] { fr_rank_item(v, &pg_.ranks, &record_why_); });
      break;
    case Role::pg_status: start_status(at.key); end_status(); break;
    case Role::status_info: status_leaf(at.key, v); break;
    case Role::entries: ++entries_seen_; ++skipped_; break;
    case Role::entry: entry_leaf(at.key, v); break;
    case Role::sizes: grow(sizes_, [&] { sizes_->emplace_back(); }); break;
    case Role::dims: dims_leaf(v); break;
    case Role::dtypes:
      grow(dtypes_, [&] { dtypes_->push_back(fr_text(v)); });
      charge(text_bytes(dtypes_->back()));
      break;
    case Role::frames: frame_ = FrFrame{}; end_frame(); break;
    case Role::frame: frame_leaf(at.key, v); break;
    case Role::group:
      if (group_items_ < 2) group_[group_items_] = fr_text(v);
      ++group_items_;
      break;
    case Role::skip: break;
  }
  return !too_much_;
}

void FrJsonHandler::top_key(const std::string& k) {
  // A key given twice: the last one counts, as in a parsed document.
  if (k == "version") has_version_ = true;
  if (k == "pg_config") d_->pg_config.clear();
  if (k == "pg_status") d_->pg_status.clear();
  if (k == "entries") {
    d_->entries.clear();
    skipped_ = entries_seen_ = 0;
  }
}

void FrJsonHandler::top_leaf(const std::string& key, const FrScalar& v) {
  if (key == "version") d_->version = fr_text(v);
  else if (key == "comm_lib_version") d_->comm_lib_version = fr_text(v);
}

void FrJsonHandler::pg_leaf(const std::string& key, const FrScalar& v) {
  if (key == "name") {
    pg_.name = fr_text(v);
  } else if (key == "desc") {
    pg_.desc = fr_text(v);
  } else if (key == "ranks") {
    pg_.ranks.clear();  // a value that is neither text nor a list holds no ranks
    if (v.kind == Kind::string && record_why_.empty())
      grow(&pg_.ranks, [&] { fr_ranks_text(v.s, &pg_.ranks, &record_why_); });
  }
}

void FrJsonHandler::start_pg(const std::string& key) {
  pg_ = FrProcessGroup{};
  record_key_ = key;
  record_why_.clear();
}

void FrJsonHandler::end_pg() {
  if (pg_.name.empty()) pg_.name = record_key_;
  if (!record_why_.empty()) {
    fr_refuse(d_, fmt::format("pg_config \"{}\": {}", record_key_, record_why_));
    return;
  }
  charge(text_bytes(pg_.name) + text_bytes(pg_.desc));
  grow(&d_->pg_config, [&] { d_->pg_config.push_back(std::move(pg_)); });
}

void FrJsonHandler::start_status(const std::string& key) {
  status_ = FrPgStatus{};
  status_.pg_id = key;
  record_key_ = key;
  record_why_.clear();
}

void FrJsonHandler::status_leaf(const std::string& key, const FrScalar& v) {
  int64_t* field = key == "last_enqueued_collective"    ? &status_.last_enqueued
                   : key == "last_started_collective"   ? &status_.last_started
                   : key == "last_completed_collective" ? &status_.last_completed
                                                        : nullptr;
  if (field && !fr_int(v, -1, field) && record_why_.empty())
    record_why_ = fmt::format("{} {} is out of range", key, fr_shown(v));
}

void FrJsonHandler::end_status() {
  if (!record_why_.empty()) {
    fr_refuse(d_, fmt::format("pg_status \"{}\": {}", record_key_, record_why_));
    return;
  }
  charge(text_bytes(status_.pg_id));
  grow(&d_->pg_status, [&] { d_->pg_status.push_back(std::move(status_)); });
}

void FrJsonHandler::entry_leaf(const std::string& key, const FrScalar& v) {
  // A list field given as a scalar holds nothing.
  if (key == "input_sizes") entry_.input_sizes.clear();
  else if (key == "output_sizes") entry_.output_sizes.clear();
  else if (key == "input_dtypes") entry_.input_dtypes.clear();
  else if (key == "output_dtypes") entry_.output_dtypes.clear();
  else if (key == "frames") entry_.frames.clear();
  else if (std::string why; !fr_entry_scalar(key, v, &entry_, &why) && record_why_.empty()) record_why_ = why;
}

void FrJsonHandler::dims_leaf(const FrScalar& v) {
  int64_t n = 0;
  if (!fr_int(v, 0, &n)) {
    if (record_why_.empty()) record_why_ = fmt::format("a tensor dimension {} is out of range", fr_shown(v));
    return;
  }
  grow(&sizes_->back(), [&] { sizes_->back().push_back(n); });
}

void FrJsonHandler::frame_leaf(const std::string& key, const FrScalar& v) {
  if (key == "name") {
    frame_.name = fr_text(v);
  } else if (key == "filename") {
    frame_.filename = fr_text(v);
  } else if (key == "line" && !fr_int(v, -1, &frame_.line) && record_why_.empty()) {
    record_why_ = fmt::format("a frame's line {} is out of range", fr_shown(v));
  }
}

void FrJsonHandler::end_frame() {
  uint32_t id = table_.id(std::move(frame_));
  grow(&entry_.frames, [&] { entry_.frames.push_back(id); });
}

void FrJsonHandler::end_group() {
  // A list of two or more: name and description; a shorter one names nothing.
  entry_.pg_name = group_items_ >= 2 ? group_[0] : std::string();
  if (group_items_ >= 2) entry_.pg_desc = group_[1];
}

void FrJsonHandler::end_entry() {
  fr_finish_entry(&entry_);
  if (!record_why_.empty()) {
    fr_refuse(d_, fmt::format("entry {}: {}", entry_index_, record_why_));
    return;
  }
  charge(text_bytes(entry_.pg_id) + text_bytes(entry_.pg_name) + text_bytes(entry_.pg_desc) +
         text_bytes(entry_.profiling_name));
  grow(&d_->entries, [&] { d_->entries.push_back(std::move(entry_)); });
}

// Runs `parse` (nlohmann's sax_parse over the input, with the handler) and says what it found
// in *d. `read` follows the bytes read so far.
template <typename Parse>
void parse_into(Parse&& parse, FrDump* d, const PickleLimits& limits, const uint64_t* read) {
  FrJsonHandler h(d, limits, read);
  bool ok = false;
  try {
    ok = parse(&h);
  } catch (const std::exception&) {
    ok = false;  // nlohmann reports through parse_error; this is only for what cannot be
  }
  if (h.too_much()) {
    d->status = FrDump::Status::too_large;
    d->message = fmt::format("{}: JSON that would keep {} bytes of records for {} bytes read, more than "
                             "the {} per byte (and {} MiB) a Flight Recorder dump keeps: not read",
                             d->source, h.kept(), *read, limits.max_kept_per_byte, limits.kept_slack_bytes >> 20);
  } else if (!ok) {
    d->status = FrDump::Status::malformed;
    d->message = fmt::format("{}: neither a pickle nor {} JSON: not a Flight Recorder dump", d->source,
                             h.too_deep() ? "shallow" : "valid");
  } else if (std::string(h.top_kind()) != "dict" || !h.has_version()) {
    d->status = FrDump::Status::malformed;
    d->message = fmt::format("{}: a json {}, not a Flight Recorder dump (no \"version\" key): give "
                             "the files torch wrote to TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
                             d->source, h.top_kind());
  } else {
    d->status = FrDump::Status::ok;
    fr_version_warning(d);
    if (h.skipped() > 0)
      d->warnings.push_back(fmt::format("{} entries that are not records were skipped", h.skipped()));
  }
}

void drop_records(FrDump* d) {
  std::vector<FrEntry>().swap(d->entries);
  std::vector<FrFrame>().swap(d->frames);
  d->pg_config.clear();
  d->pg_status.clear();
}

}  // namespace

void read_fr_json(std::string_view bytes, FrDump* d, const PickleLimits& limits) {
  const uint64_t read = bytes.size();
  d->bytes = read;
  parse_into([&](FrJsonHandler* h) { return json::sax_parse(bytes.data(), bytes.data() + bytes.size(), h); }, d,
             limits, &read);
  if (d->status != FrDump::Status::ok) drop_records(d);
}

void read_fr_json(ByteSource* source, std::string head, FrDump* d, const PickleLimits& limits) {
  JsonSourceBuf buf(source, limits.max_input_bytes, std::move(head));
  std::istream in(&buf);
  parse_into([&](FrJsonHandler* h) { return json::sax_parse(in, h); }, d, limits, &buf.bytes_read());
  d->bytes = buf.bytes_read();
  // The input itself, before what the parser made of it: it broke off, ended early, or is too big.
  if (!buf.error().empty()) {
    d->status = FrDump::Status::malformed;
    d->message = buf.error();
  } else if (InputCut c = buf.cut(); c.why != InputCut::Why::none) {
    d->status = FrDump::Status::malformed;
    d->message = c.message + "; the dump is not read: a part of it would show its rank behind where it was";
    d->cut = std::move(c);
  } else if (buf.over()) {
    d->status = FrDump::Status::too_large;
    d->message = fmt::format("{}: more than {} bytes: larger than a Flight Recorder dump this reader takes",
                             d->source, limits.max_input_bytes);
  }
  if (d->status != FrDump::Status::ok) drop_records(d);
}

}  // namespace denpex::evidence
