// A bounded, safe reader of the pickle subset that PyTorch's Flight Recorder dumps use: what
// torch's C++ pickler writes (protocol 2: dicts, lists, tuples, strings, ints up to LONG1,
// floats, bools, None, memo), and what Python's pickler writes for the same values at protocols
// 2 to 5 (FRAME, MEMOIZE, SHORT_BINUNICODE, bytes...).
//
// It never executes anything and never builds an object. A GLOBAL (or STACK_GLOBAL) is read
// only when it names one of PyTorch's inert builders, which torch's pickler puts around plain
// values: torch.jit._pickle's restore_type_tag (a dict or list with its type annotation) and
// build_intlist / build_doublelist / build_boollist (a list of numbers); their REDUCE gives back
// the plain value. Every other global (os.system, builtins.eval, torch._utils._rebuild_tensor_v2
// ...), every other opcode (BUILD, NEWOBJ, INST, OBJ, PERSID, EXT...) and every text-protocol
// opcode is refused with a message naming the opcode and its byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace denpex::evidence {

struct PickleArena;

// One value of the tree: scalars held inline, strings and containers as nodes of the tree's
// arena (a memo reference is the same node, as in Python: `identity()` tells them apart). A
// value is valid while its arena lives (PickleResult::arena). Containers never form cycles: the
// reader refuses to change one that was already put inside another.
class PickleValue {
 public:
  enum class Kind : uint8_t { none, boolean, integer, floating, string, bytes, list, tuple, dict };
  struct Node;

  PickleValue() = default;
  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  // Each returns its type's zero value ("", empty) when the value is of another kind.
  bool as_bool() const { return kind_ == Kind::boolean && scalar_.b; }
  int64_t as_int() const { return kind_ == Kind::integer ? scalar_.i : 0; }
  double as_float() const;  // integers too
  const std::string& as_string() const;  // string or bytes
  const std::vector<PickleValue>& items() const;  // list or tuple
  const std::vector<std::pair<PickleValue, PickleValue>>& entries() const;  // dict, in order
  // The value of the dict entry whose key is the string `key`; nullptr when absent or not a dict.
  const PickleValue* find(std::string_view key) const;
  // The shared node of a string or container (nullptr for scalars): equal for memo references.
  const void* identity() const { return node_; }

  static PickleValue none();
  static PickleValue boolean(bool b);
  static PickleValue integer(int64_t i);
  static PickleValue floating(double f);
  static PickleValue text(PickleArena* arena, Kind k, std::string s);  // string or bytes
  static PickleValue container(PickleArena* arena, Kind k);            // an empty list, tuple or dict
  Node* node() const { return node_; }

 private:
  Kind kind_ = Kind::none;
  union {
    bool b;
    int64_t i;
    double f;
  } scalar_{};
  Node* node_ = nullptr;
};

struct PickleValue::Node {
  std::string text;
  std::vector<PickleValue> items;
  std::vector<std::pair<PickleValue, PickleValue>> entries;
  uint32_t depth = 1;   // containers nested in this one, itself included
  bool sealed = false;  // put inside another container: no longer changed
};

// Where a tree's nodes live: one allocation per block of nodes, freed together.
struct PickleArena {
  std::deque<PickleValue::Node> nodes;
};

// Each bound keeps a hostile input's cost small: together at most about 500 MB of memory.
struct PickleLimits {
  size_t max_input_bytes = size_t{64} << 20;   // a 20,000-entry dump with stacks is ~10 MB
  // Strings and containers made, items put into containers and memo slots: a 20,000-entry dump
  // with 20-frame stacks uses about 2 million.
  size_t max_values = size_t{4} << 20;
  size_t max_stack = size_t{1} << 20;          // values on the stack at once
  uint32_t max_depth = 64;                     // dumps nest 5 deep
  size_t max_string_bytes = size_t{16} << 20;  // one string or bytes value
  // The JSON form of a dump (evidence/fr_dump.h): what its reader keeps may not pass this many
  // bytes per byte of JSON read, plus kept_slack_bytes.
  size_t max_kept_per_byte = 4;
  size_t kept_slack_bytes = size_t{1} << 20;
};

struct PickleResult {
  enum class Status {
    ok,         // `value` is the pickle's result
    refused,    // an opcode or global outside the subset: nothing was run
    malformed,  // truncated, a stack or memo error, no STOP
    too_large,  // past a limit
  };
  Status status = Status::malformed;
  std::string message;  // "<opcode> at offset N: ..." when not ok
  PickleValue value;    // valid while `arena` lives
  std::shared_ptr<PickleArena> arena;
  size_t values = 0;    // strings and containers made
};

// Reads one pickle from `bytes` (its first STOP ends it; what follows is ignored, as Python
// does). Never throws and never executes: every failure is a status and a message.
PickleResult read_pickle(std::string_view bytes, const PickleLimits& limits = PickleLimits{});

// "dict", "list", ... for messages.
const char* to_string(PickleValue::Kind k);

}  // namespace denpex::evidence
