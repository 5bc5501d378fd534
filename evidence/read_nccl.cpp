// Family readers of NCCL's own records: COLL calls (the hot family: a hand-written field parser,
// named by the table entry nccl.coll, because a COLL log is gigabytes and the fields are a fixed
// key-value list) and communicator Init lines.
#include <charconv>
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

// One "key value" pair of a COLL body into *c. Returns false at "stream" (the end).
bool coll_pair(std::string_view key, std::string_view val, CollFields* c) {
  long long v;
  unsigned long long u;
  size_t n;
  if (key == "opCount") {
    if (parse_hex(val, &u, &n) && u < (1ULL << 62)) c->call.pos = static_cast<long long>(u);
    else c->broken = true;
  } else if (key == "count") {
    // %zu: up to 2^64-1 (a size_t -1 from a caller's bug is still a call).
    c->have_count = !val.empty() && val.size() <= 20 && val.find_first_not_of("0123456789") == std::string_view::npos;
    // from_chars: no string copy on the hottest line of a COLL log.
    if (c->have_count)
      c->have_count = std::from_chars(val.data(), val.data() + val.size(), c->call.count).ec == std::errc();
    if (!c->have_count) c->broken = true;
  } else if (key == "datatype") {
    c->have_dtype = parse_dec(val, &v, &n) && v < 64;
    if (c->have_dtype) c->call.datatype = static_cast<int>(v);
    else c->broken = true;
  } else if (key == "op") {
    if (parse_dec(val, &v, &n) && v < (1LL << 30)) c->call.redop = static_cast<int>(v);
  } else if (key == "root") {
    if (parse_dec(val, &v, &n) && v < kMaxRank) c->call.root = c->call.peer = static_cast<int>(v);
  } else if (key == "comm") {
    c->have_comm = parse_hex(val, &u, &n);
    if (c->have_comm) c->comm = u;
  } else if (key == "stream") {
    return false;
  }
  return true;
}

// "AllReduce: opCount 1a sendbuff .. count N datatype D op O root R comm 0x.. [nranks=N] stream"
CollFields parse_coll(std::string_view body) {
  CollFields c;
  size_t colon = body.find(':');
  c.call.kind = parse_coll_kind(body.substr(0, colon));
  std::string_view f = body.substr(colon + 1);
  size_t i = 0;
  while (i < f.size()) {
    while (i < f.size() && f[i] == ' ') ++i;
    size_t ke = i;
    while (ke < f.size() && f[ke] != ' ') ++ke;
    std::string_view key = f.substr(i, ke - i);
    if (key.substr(0, 8) == "[nranks=") {
      size_t n;
      if (!parse_dec(key.substr(8), &c.nranks, &n) || c.nranks >= kMaxRank) c.broken = true;
      i = ke;
      continue;
    }
    size_t vb = ke + 1, ve = vb;
    while (ve < f.size() && f[ve] != ' ') ++ve;
    std::string_view val = vb < f.size() ? f.substr(vb, ve - vb) : std::string_view();
    if (!coll_pair(key, val, &c)) break;
    i = ve;
  }
  return c;
}

}  // namespace

void read_coll(const Hit& hit, Record& rec) {
  CollFields c = parse_coll(hit.text);
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
