// The fields of a Flight Recorder dump as both of its forms give them: the pickle's tree
// (fr_dump.cpp) and the JSON's SAX events (fr_json.cpp) hand each leaf over as one FrScalar, and
// the functions here turn it into FrDump's fields the same way for both, so the two forms of one
// dump read alike.
//
// Numbers are taken as torch writes them (an int, a float, a bool, or a decimal string: the JSON
// dump writes pg_status as text), and a number that does not fit where it goes (past int64, a
// record id past int32, a rank outside 0 .. kMaxRank-1) is refused, never wrapped or clamped:
// the record that holds it is not kept, and is counted with a sample (FrDump::unreadable).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "evidence/fr_dump.h"

namespace denpex::evidence {

// One leaf value. `container` stands for a list or dict where a scalar was expected: it reads
// as the pickle reader's zero values ("" as text, the fallback as a number).
struct FrScalar {
  enum class Kind { null, boolean, integer, big, floating, string, container };
  Kind kind = Kind::null;
  bool b = false;
  int64_t i = 0;
  double f = 0;   // floating; for `big` (an integer past int64) its value as a double
  std::string s;  // string; for `big` and floating from JSON, the number as written ("" if none)
};

// The value as text, as the readers have always taken it: a string as it is, an integer in
// decimal, a float as fmt prints it; "" for anything else.
std::string fr_text(const FrScalar& v);
// The value as an integer in *out (`fallback` for None, a container or a string that is not a
// decimal number). Returns false, leaving *out alone, for a number past int64 (a float, a big
// integer, a decimal string that overflows).
bool fr_int(const FrScalar& v, int64_t fallback, int64_t* out);
// The value as a double (integers too); 0 for anything else.
double fr_float(const FrScalar& v);
// The value as a sample quotes it ("9223372036854775808", "\"99999999999999999999\"").
std::string fr_shown(const FrScalar& v);

// Sets the scalar field `key` of `e` (unknown keys are left alone: newer versions add some).
// Returns false with *why ("record_id 4294967296 is out of range") for a number that does not fit.
bool fr_entry_scalar(std::string_view key, const FrScalar& v, FrEntry* e, std::string* why);
// After all of an entry's fields: the JSON dump writes 0 for a time not yet discovered.
void fr_finish_entry(FrEntry* e);

// The ranks of torch's ranks_str ("[0, 1, 2]") into *out. Returns false with *why for a rank
// outside 0 .. kMaxRank-1 (a negative one, or digits past it).
bool fr_ranks_text(const std::string& text, std::vector<int>* out, std::string* why);
// One item of a ranks list, the same way.
bool fr_rank_item(const FrScalar& v, std::vector<int>* out, std::string* why);

// Each distinct frame (name, file, line) once, by its text: the index FrEntry::frames holds.
class FrFrameTable {
 public:
  explicit FrFrameTable(std::vector<FrFrame>* frames) : frames_(frames) {}
  uint32_t id(FrFrame frame);
  // Bytes the table and the frames it added hold (for a reader's bound on what it keeps).
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<FrFrame>* frames_;
  std::unordered_map<std::string, uint32_t> by_text_;
  uint64_t bytes_ = 0;
};

// The JSON form, read with nlohmann's SAX parser into *d (whose source, rank and format the
// caller set): from memory, or streamed from `source` after `head` (what the caller read to
// look at the start). Sets status, message, bytes and every field; on any status but ok the
// records are dropped. Never throws.
void read_fr_json(std::string_view bytes, FrDump* d, const PickleLimits& limits);
void read_fr_json(ByteSource* source, std::string head, FrDump* d, const PickleLimits& limits);

// Counts a record that is not kept, keeping the first few samples ("entry 3: ...").
void fr_refuse(FrDump* d, std::string sample);

// 2.0 to 2.10: the versions torch has written, whose fields this reader knows.
bool fr_known_version(const std::string& v);
// The warnings of a dump read whole, in the order the readers have always given them.
void fr_version_warning(FrDump* d);

}  // namespace denpex::evidence
