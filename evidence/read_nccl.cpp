// Family readers of NCCL's own records: COLL calls (the hot family: a hand-written field parser,
// named by the table entry nccl.coll, because a COLL log is gigabytes and the fields are a fixed
// key-value list) and communicator Init lines.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "evidence/families.h"
#include "evidence/log_reader.h"
#include "probe/record.h"

namespace denpex::evidence {

namespace {

struct CollFields {
  CollCall call;
  unsigned long long comm = 0;
  long long nranks = -1;
  bool have_count = false, have_dtype = false, have_comm = false, broken = false;
};

// The keys of a COLL body that are read, told by length and first letter: one compare per key
// instead of a chain of them on the hottest line of a COLL log.
enum class CollKey { other, op_count, count, datatype, op, root, comm, stream };

CollKey coll_key(std::string_view k) {
  auto is = [&](const char* name) { return std::memcmp(k.data(), name, k.size()) == 0; };
  switch (k.size()) {
    case 2: return is("op") ? CollKey::op : CollKey::other;
    case 4: return is("root") ? CollKey::root : is("comm") ? CollKey::comm : CollKey::other;
    case 5: return is("count") ? CollKey::count : CollKey::other;
    case 6: return is("stream") ? CollKey::stream : CollKey::other;
    case 7: return is("opCount") ? CollKey::op_count : CollKey::other;
    case 8: return is("datatype") ? CollKey::datatype : CollKey::other;
    default: return CollKey::other;
  }
}

// One "key value" pair of a COLL body into *c. Returns false at "stream" (the end).
bool coll_pair(CollKey key, std::string_view val, CollFields* c) {
  long long v;
  unsigned long long u;
  size_t n;
  switch (key) {
    case CollKey::op_count:
      if (parse_hex(val, &u, &n) && u < (1ULL << 62)) c->call.pos = static_cast<long long>(u);
      else c->broken = true;
      break;
    case CollKey::count: {
      // %zu: up to 2^64-1 (a size_t -1 from a caller's bug is still a call). from_chars takes
      // no sign for an unsigned type, so using every character means digits only.
      const char* e = val.data() + val.size();
      auto r = std::from_chars(val.data(), e, c->call.count);
      c->have_count = !val.empty() && val.size() <= 20 && r.ec == std::errc() && r.ptr == e;
      if (!c->have_count) c->broken = true;
      break;
    }
    case CollKey::datatype:
      c->have_dtype = parse_dec(val, &v, &n) && v < 64;
      if (c->have_dtype) c->call.datatype = static_cast<int>(v);
      else c->broken = true;
      break;
    case CollKey::op:
      if (parse_dec(val, &v, &n) && v < (1LL << 30)) c->call.redop = static_cast<int>(v);
      break;
    case CollKey::root:
      if (parse_dec(val, &v, &n) && v < kMaxRank) c->call.root = c->call.peer = static_cast<int>(v);
      break;
    case CollKey::comm:
      c->have_comm = parse_hex(val, &u, &n);
      if (c->have_comm) c->comm = u;
      break;
    case CollKey::stream: return false;
    case CollKey::other: break;
  }
  return true;
}

// The spaces of a COLL body, found eight bytes at a time before it is split into words: the
// words are a few characters long, too short for memchr's call and too many for a byte loop.
// next(p) is the first space at or after p (the body's size when none); p never goes back.
class Spaces {
 public:
  explicit Spaces(std::string_view f) : f_(f) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL, kHigh = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= f.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, f.data() + i, 8);
      uint64_t x = w ^ 0x2020202020202020ULL;
      uint64_t space = ~(((x & kLow7) + kLow7) | x) & kHigh;  // exactly the zero bytes of x
      for (; space != 0; space &= space - 1) {
        if (n_ == kMax) {
          scanned_ = at_[n_ - 1] + 1;
          return;
        }
        at_[n_++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctzll(space) >> 3));
      }
    }
    scanned_ = i;
#endif
  }
  size_t next(size_t p) {
    while (idx_ < n_ && at_[idx_] < p) ++idx_;
    if (idx_ < n_) return at_[idx_];
    size_t q = std::max(p, scanned_);
    while (q < f_.size() && f_[q] != ' ') ++q;
    return q;
  }

 private:
  static constexpr size_t kMax = 64;
  std::string_view f_;
  uint32_t at_[kMax];
  size_t n_ = 0, idx_ = 0;
  size_t scanned_ = 0;  // every space before this is in at_
};

// "AllReduce: opCount 1a sendbuff .. count N datatype D op O root R comm 0x.. [nranks=N] stream"
CollFields parse_coll(std::string_view body) {
  CollFields c;
  size_t colon = body.find(':');
  c.call.kind = parse_coll_kind(body.substr(0, colon));
  std::string_view f = body.substr(colon + 1);
  Spaces spaces(f);
  size_t i = 0;
  while (i < f.size()) {
    while (i < f.size() && f[i] == ' ') ++i;
    size_t ke = spaces.next(i);
    std::string_view key = f.substr(i, ke - i);
    if (key.size() >= 8 && key[0] == '[' && key.substr(0, 8) == "[nranks=") {
      size_t n;
      if (!parse_dec(key.substr(8), &c.nranks, &n) || c.nranks >= kMaxRank) c.broken = true;
      i = ke;
      continue;
    }
    size_t vb = ke + 1, ve = vb < f.size() ? spaces.next(vb) : f.size();
    std::string_view val = vb < f.size() ? f.substr(vb, ve - vb) : std::string_view();
    if (!coll_pair(coll_key(key), val, &c)) break;
    i = ve;
  }
  return c;
}

}  // namespace

void read_coll(const Hit& hit, Record& rec) { read_coll_body(hit.text, rec); }

void read_coll_body(std::string_view body, Record& rec) {
  CollFields c = parse_coll(body);
  c.call.file = rec.st.index;
  c.call.line = rec.st.line_no;
  if (c.broken || !c.have_count || !c.have_dtype || !c.have_comm) {
    if (!c.broken && !c.have_comm) {
      // The record's body may follow on a later line (a header glued elsewhere).
      if (!rec.st.pending_coll.empty()) rec.r.bad(rec.st, rec.st.pending_coll);
      rec.st.pending_coll.assign(rec.text.data(), rec.text.size());
      rec.st.pending_label = rec.lab;
      rec.st.pending_line = rec.st.line_no;
      rec.st.pending_age = 0;
      return;
    }
    rec.r.bad(rec.st, rec.text);
    return;
  }
  rec.r.add_call(rec.proc, c.comm, c.nranks, c.call);
}

// "comm 0x.. rank R nranks N cudaDev D [busId B] [commId 0x..] [parent 0x.. splitCount S color C]"
void read_init(const Hit& hit, Record& rec) {
  unsigned long long ptr = 0;
  size_t n;
  long long rank = to_ll(hit.get(Field::group_rank));
  long long nranks = to_ll(hit.get(Field::nranks));
  if (!parse_hex(hit.get(Field::comm), &ptr, &n) || rank < 0 || nranks <= 0 || nranks >= kMaxRank || rank >= nranks) {
    rec.r.bad(rec.st, rec.text);
    return;
  }
  ++rec.r.records;
  std::string id;
  if (hit.has(Field::comm_id)) id = std::string(hit.get(Field::comm_id));
  else if (hit.has(Field::parent)) {
    // A split names its parent by the parent's pointer: its cross-rank id is the parent's id.
    unsigned long long parent = 0;
    std::string pid = parse_hex(hit.get(Field::parent), &parent, &n) ? rec.r.comm_id(rec.proc, parent) : std::string();
    id = fmt::format("{}/split{}/color{}", pid.empty() ? std::string(hit.get(Field::parent)) : pid,
                     to_ll(hit.get(Field::split)), to_ll(hit.get(Field::color)));
  }
  bool complete = hit.text.find("Init COMPLETE") != std::string_view::npos;
  rec.r.add_init(rec.proc, ptr, id, static_cast<int>(rank), static_cast<int>(nranks), complete);
}

}  // namespace denpex::evidence
