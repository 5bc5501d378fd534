// NCCL RAS's JSON output read with nlohmann's SAX parser straight into RasReport (ras_json.h says
// the bound on what is kept). A stack of roles says where the parser is; each leaf value goes
// where its role and key say, as the document reader did: a value of another type than the
// field's reads as the field's fallback, a number that does not fit is refused with its record.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evidence/json_source.h"
#include "evidence/line_repair.h"
#include "evidence/ras_json.h"

namespace denpex::evidence {
namespace {

using json = nlohmann::json;

enum class Role : uint8_t { top, comms, comm, ranks, rank, rank_status, counts, missing, miss, miss_status, skip };

// One leaf, with nlohmann's name for its type (for the shape message).
struct Leaf {
  enum class Kind { null, boolean, integer, big, floating, string, container };
  Kind kind = Kind::null;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;      // a string; the number as written, for big and floating
  const char* type = "null";
};

constexpr size_t kMaxShown = 40;

std::string shown(const Leaf& v) {
  std::string s = v.kind == Leaf::Kind::integer ? std::to_string(v.i) : v.s;
  return s.size() > kMaxShown ? s.substr(0, kMaxShown) + "..." : s;
}

// An integer field in [lo, hi]: `fallback` when the value is not a number (as the document
// reader's get_or); false for a number outside the range.
bool int_field(const Leaf& v, long long lo, long long hi, long long fallback, long long* out) {
  switch (v.kind) {
    case Leaf::Kind::integer:
      if (v.i < lo || v.i > hi) return false;
      *out = v.i;
      return true;
    case Leaf::Kind::floating:
      if (!(v.f >= static_cast<double>(lo) && v.f <= static_cast<double>(hi))) return false;
      *out = static_cast<long long>(v.f);
      return true;
    case Leaf::Kind::big: return false;
    default: *out = fallback; return true;
  }
}

constexpr long long kIntMin = std::numeric_limits<int>::min(), kIntMax = std::numeric_limits<int>::max();
constexpr long long kLongMin = std::numeric_limits<long long>::min(), kLongMax = std::numeric_limits<long long>::max();

class RasHandler {
 public:
  RasHandler(RasReport* r, const RasLimits& limits, const uint64_t* read) : r_(r), lim_(limits), read_(read) {}

  bool null() { return leaf(Leaf{}); }
  bool boolean(bool b) { return leaf(Leaf{Leaf::Kind::boolean, b, 0, 0, {}, "boolean"}); }
  bool number_integer(json::number_integer_t i) { return leaf(Leaf{Leaf::Kind::integer, false, i, 0, {}, "number"}); }
  bool number_unsigned(json::number_unsigned_t u) {
    if (u <= static_cast<uint64_t>(INT64_MAX)) return number_integer(static_cast<int64_t>(u));
    unsigned_ = u;
    return leaf(Leaf{Leaf::Kind::big, false, 0, static_cast<double>(u), std::to_string(u), "number"});
  }
  bool number_float(json::number_float_t f, const std::string& raw) {
    return leaf(Leaf{Leaf::Kind::floating, false, 0, f, raw, "number"});
  }
  bool string(std::string& s) { return leaf(Leaf{Leaf::Kind::string, false, 0, 0, std::move(s), "string"}); }
  bool binary(json::binary_t&) { return leaf(Leaf{Leaf::Kind::container, false, 0, 0, {}, "binary"}); }
  bool key(std::string& k) {
    levels_.back().second = std::move(k);
    return true;
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  bool too_deep() const { return too_deep_; }
  bool too_much() const { return too_much_; }
  uint64_t kept() const { return kept_; }
  // What keeps the document from being RAS output, "" when nothing does.
  std::string shape_problem() const;

 private:
  bool open(bool object);
  Role child_role(bool object);
  bool close();
  bool leaf(const Leaf& v);
  void comm_leaf(const std::string& key, const Leaf& v);
  void rank_leaf(const std::string& key, const Leaf& v);
  void status_leaf(const std::string& key, const Leaf& v);
  void miss_leaf(const std::string& key, const Leaf& v);
  void count_leaf(const std::string& key, const Leaf& v);
  void end_comm();
  void end_rank();
  void end_miss();
  void refuse(std::string* why, std::string what) {
    if (why->empty()) *why = std::move(what);
  }
  void unreadable(std::string sample) {
    ++r_->unreadable;
    if (r_->unreadable_samples.size() < 5) r_->unreadable_samples.push_back(std::move(sample));
  }
  // Adds to `v` with `add`, charging what its capacity grew by (spare capacity included).
  template <typename T, typename Add>
  bool grow(std::vector<T>* v, Add&& add) {
    size_t before = v->capacity();
    add();
    return charge((v->capacity() - before) * sizeof(T));
  }
  bool charge(uint64_t n) {
    kept_ += n;
    if (kept_ <= lim_.max_kept_per_byte * *read_ + lim_.kept_slack_bytes) return true;
    too_much_ = true;
    return false;
  }
  static uint64_t text_bytes(const std::string& s) { return s.size() > 15 ? s.size() + 1 : 0; }
  std::string comm_name() const { return comm_.hash.empty() ? std::string("(no hash)") : comm_.hash; }

  RasReport* r_;
  const RasLimits& lim_;
  const uint64_t* read_;
  std::vector<std::pair<Role, std::string>> levels_;  // role, and in an object the current key
  const char* top_type_ = "";
  const char* comms_type_ = nullptr;    // the type of "communicators", nullptr when absent
  const char* version_type_ = nullptr;  // the type of "nccl_version"
  bool too_deep_ = false, too_much_ = false;
  uint64_t kept_ = 0;
  uint64_t unsigned_ = 0;  // the last integer past int64 (a collective count may be one)
  RasCommunicator comm_;
  std::string comm_why_;
  RasRank rank_;
  RasMissingRank miss_;
  std::string record_why_;
};

bool RasHandler::open(bool object) {
  if (levels_.size() >= kMaxSaxDepth) {
    too_deep_ = true;
    return false;
  }
  if (levels_.empty()) {
    top_type_ = object ? "object" : "array";
    levels_.emplace_back(object ? Role::top : Role::skip, std::string());
    return true;
  }
  Role role = child_role(object);
  levels_.emplace_back(role, std::string());
  return !too_much_;
}

Role RasHandler::child_role(bool object) {
  const auto& [at, key] = levels_.back();
  const char* type = object ? "object" : "array";
  switch (at) {
    case Role::top:
      if (key == "communicators") comms_type_ = type;
      if (key == "nccl_version") version_type_ = type;
      if (key == "communicators") r_->communicators.clear();  // the last one counts
      return key == "communicators" && !object ? Role::comms : Role::skip;
    case Role::comms:
      if (!object) return Role::skip;
      comm_ = RasCommunicator{};
      comm_why_.clear();
      return Role::comm;
    case Role::comm:
      if (key == "ranks") comm_.ranks.clear();
      if (key == "missing_ranks") comm_.missing.clear();
      if (key == "ranks" && !object) return Role::ranks;
      if (key == "missing_ranks" && !object) return Role::missing;
      comm_leaf(key, Leaf{Leaf::Kind::container, false, 0, 0, {}, type});
      return Role::skip;
    case Role::ranks: case Role::missing:
      if (!object) return Role::skip;
      record_why_.clear();
      if (at == Role::ranks) rank_ = RasRank{};
      else miss_ = RasMissingRank{};
      return at == Role::ranks ? Role::rank : Role::miss;
    case Role::rank:
      if (key == "status" && object) return Role::rank_status;
      if (key == "collective_counts" && object) {
        rank_.counts.clear();
        return Role::counts;
      }
      rank_leaf(key, Leaf{Leaf::Kind::container, false, 0, 0, {}, type});
      return Role::skip;
    case Role::miss:
      if (key == "status" && object) return Role::miss_status;
      miss_leaf(key, Leaf{Leaf::Kind::container, false, 0, 0, {}, type});
      return Role::skip;
    case Role::counts: erase_ras_count(*r_, &rank_, key); return Role::skip;
    default: return Role::skip;
  }
}

bool RasHandler::close() {
  Role role = levels_.back().first;
  levels_.pop_back();
  if (role == Role::comm) end_comm();
  if (role == Role::rank) end_rank();
  if (role == Role::miss) end_miss();
  return !too_much_;
}

bool RasHandler::leaf(const Leaf& v) {
  if (levels_.empty()) {
    top_type_ = v.type;
    return true;
  }
  const auto& [at, key] = levels_.back();
  switch (at) {
    case Role::top:
      if (key == "nccl_version") version_type_ = v.type;
      if (key == "communicators") {
        comms_type_ = v.type;
        r_->communicators.clear();
      }
      if (key == "nccl_version") r_->nccl_version = v.kind == Leaf::Kind::string ? v.s : std::string();
      if (key == "timestamp") r_->timestamp = v.kind == Leaf::Kind::string ? v.s : std::string();
      break;
    case Role::comm: comm_leaf(key, v); break;
    case Role::rank: rank_leaf(key, v); break;
    case Role::rank_status: status_leaf(key, v); break;
    case Role::counts: count_leaf(key, v); break;
    case Role::miss: miss_leaf(key, v); break;
    case Role::miss_status:
      if (key == "unresponsive") miss_.unresponsive = v.kind == Leaf::Kind::boolean && v.b;
      if (key == "considered_dead") miss_.dead = v.kind == Leaf::Kind::boolean && v.b;
      break;
    default: break;
  }
  return !too_much_;
}

void RasHandler::comm_leaf(const std::string& key, const Leaf& v) {
  const std::string text = v.kind == Leaf::Kind::string ? v.s : std::string();
  if (key == "hash") comm_.hash = text;
  if (key == "secondary_hash") comm_.secondary_hash = text;
  long long n = -1;
  if (key == "size" && !int_field(v, 0, kMaxRank, -1, &n)) refuse(&comm_why_, fmt::format("size {} is out of range (0 to {})", shown(v), kMaxRank));
  if (key == "size") comm_.size = static_cast<int>(n);
}

void RasHandler::rank_leaf(const std::string& key, const Leaf& v) {
  long long n = -1;
  if (key == "host") rank_.host = v.kind == Leaf::Kind::string ? v.s : std::string();
  else if (key == "rank" && int_field(v, 0, kMaxRank - 1, -1, &n)) rank_.rank = static_cast<int>(n);
  else if (key == "pid" && int_field(v, kLongMin, kLongMax, -1, &n)) rank_.pid = n;
  else if (key == "cuda_dev" && int_field(v, kIntMin, kIntMax, -1, &n)) rank_.cuda_dev = static_cast<int>(n);
  else if (key == "rank" || key == "pid" || key == "cuda_dev") refuse(&record_why_, fmt::format("{} {} is out of range", key, shown(v)));
  else if (key == "collective_counts") rank_.counts.clear();  // not an object: no counts
}

void RasHandler::status_leaf(const std::string& key, const Leaf& v) {
  long long n = 0;
  bool is_true = v.kind == Leaf::Kind::boolean && v.b;
  if (key == "init_state" || key == "async_error") {
    if (!int_field(v, kIntMin, kIntMax, 0, &n)) refuse(&record_why_, fmt::format("{} {} is out of range", key, shown(v)));
    (key == "init_state" ? rank_.init_state : rank_.async_error) = static_cast<int>(n);
  }
  if (key == "finalize_called") rank_.finalize_called = is_true;
  if (key == "destroy_flag") rank_.destroy_flag = is_true;
  if (key == "abort_flag") rank_.abort_flag = is_true;
}

void RasHandler::count_leaf(const std::string& key, const Leaf& v) {
  // A count RAS writes is a non-negative integer; anything else is not counted.
  size_t ops = r_->ops.size();
  if (v.kind == Leaf::Kind::integer && v.i >= 0)
    grow(&rank_.counts, [&] { set_ras_count(r_, &rank_, key, static_cast<unsigned long long>(v.i)); });
  else if (v.kind == Leaf::Kind::big)
    grow(&rank_.counts, [&] { set_ras_count(r_, &rank_, key, unsigned_); });
  else
    erase_ras_count(*r_, &rank_, key);
  // A new operation's name, kept once for the report (RAS has a handful).
  if (r_->ops.size() > ops) charge(sizeof(std::string) + text_bytes(key));
}

void RasHandler::miss_leaf(const std::string& key, const Leaf& v) {
  long long n = -1;
  if (key == "host") miss_.host = v.kind == Leaf::Kind::string ? v.s : std::string();
  else if (key == "rank" && int_field(v, 0, kMaxRank - 1, -1, &n)) miss_.rank = static_cast<int>(n);
  else if (key == "pid" && int_field(v, kLongMin, kLongMax, -1, &n)) miss_.pid = n;
  else if (key == "rank" || key == "pid") refuse(&record_why_, fmt::format("{} {} is out of range", key, shown(v)));
}

void RasHandler::end_rank() {
  if (!record_why_.empty()) {
    unreadable(fmt::format("communicator {}: rank entry {}: {}", comm_name(), comm_.ranks.size(), record_why_));
    return;
  }
  charge(text_bytes(rank_.host));
  grow(&comm_.ranks, [&] { comm_.ranks.push_back(std::move(rank_)); });
}

void RasHandler::end_miss() {
  if (!record_why_.empty()) {
    unreadable(fmt::format("communicator {}: missing rank entry {}: {}", comm_name(), comm_.missing.size(), record_why_));
    return;
  }
  charge(text_bytes(miss_.host));
  grow(&comm_.missing, [&] { comm_.missing.push_back(std::move(miss_)); });
}

void RasHandler::end_comm() {
  if (!comm_why_.empty()) {
    unreadable(fmt::format("communicator {}: {}", comm_name(), comm_why_));
    return;
  }
  charge(text_bytes(comm_.hash) + text_bytes(comm_.secondary_hash));
  grow(&r_->communicators, [&] { r_->communicators.push_back(std::move(comm_)); });
}

std::string RasHandler::shape_problem() const {
  if (std::string(top_type_) != "object") return fmt::format("the document is a JSON {}, not an object", top_type_);
  std::vector<std::string> wrong;
  if (!comms_type_) wrong.push_back("no \"communicators\" key");
  else if (std::string(comms_type_) != "array")
    wrong.push_back(fmt::format("\"communicators\" is a JSON {}, not an array", comms_type_));
  if (!version_type_) wrong.push_back("no \"nccl_version\" key");
  else if (std::string(version_type_) != "string")
    wrong.push_back(fmt::format("\"nccl_version\" is a JSON {}, not a string", version_type_));
  std::string out;
  for (const auto& w : wrong) out += (out.empty() ? "" : ", ") + w;
  return out;
}

template <typename Parse>
void parse_into(Parse&& parse, RasReport* out, const RasLimits& limits, const uint64_t* read) {
  RasHandler h(out, limits, read);
  bool ok = false;
  try {
    ok = parse(&h);
  } catch (const std::exception&) {
    ok = false;  // nlohmann reports through parse_error; this is only for what cannot be
  }
  std::string problem = h.too_much() || !ok ? std::string() : h.shape_problem();
  if (h.too_much()) {
    out->status = RasReport::Status::too_large;
    out->message = fmt::format("{}: JSON that would keep {} bytes of records for {} bytes read, more than the {} "
                               "per byte (and {} MiB) NCCL RAS output keeps: not read",
                               out->source, h.kept(), *read, limits.max_kept_per_byte, limits.kept_slack_bytes >> 20);
  } else if (!ok || !problem.empty()) {
    if (!ok) problem = h.too_deep() ? fmt::format("nested more than {} levels deep", kMaxSaxDepth) : "not valid JSON";
    out->message = fmt::format("{}: not NCCL RAS JSON output (ncclras -f json): {}", out->source, problem);
  } else {
    out->status = RasReport::Status::ok;
  }
  if (out->status != RasReport::Status::ok) out->communicators.clear();
}

}  // namespace

RasReport read_ras_json(const std::string& text, const std::string& name, const RasLimits& limits) {
  RasReport out;
  out.source = name;
  const uint64_t read = text.size();
  parse_into([&](RasHandler* h) { return json::sax_parse(text.data(), text.data() + text.size(), h); }, &out,
             limits, &read);
  return out;
}

RasReport read_ras_json(ByteSource* source, const std::string& name, const RasLimits& limits) {
  RasReport out;
  out.source = name;
  JsonSourceBuf buf(source, limits.max_input_bytes);
  std::istream in(&buf);
  parse_into([&](RasHandler* h) { return json::sax_parse(in, h); }, &out, limits, &buf.bytes_read());
  // The input itself, before what the parser made of it: it broke off, ended early, or is too big.
  if (!buf.error().empty() || buf.cut().why != InputCut::Why::none || buf.over()) {
    out.status = buf.over() && buf.error().empty() && buf.cut().why == InputCut::Why::none
                     ? RasReport::Status::too_large
                     : RasReport::Status::malformed;
    out.cut = buf.cut();
    out.message = !buf.error().empty() ? buf.error()
                  : out.cut.why != InputCut::Why::none
                      ? out.cut.message + "; the RAS output is not read: a part of it would show ranks missing that are not"
                      : fmt::format("{}: more than {} MiB: larger than NCCL RAS output is", name, limits.max_input_bytes >> 20);
    out.communicators.clear();
  }
  return out;
}

bool looks_like_ras_json(const std::string& text) {
  return read_ras_json(text, "").status == RasReport::Status::ok;
}

}  // namespace denpex::evidence
