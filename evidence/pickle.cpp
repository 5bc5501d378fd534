#include "evidence/pickle.h"

#include <cstring>

#include <fmt/format.h>

namespace denpex::evidence {

namespace {
const std::string kEmptyString;
const std::vector<PickleValue> kNoItems;
const std::vector<std::pair<PickleValue, PickleValue>> kNoEntries;
}  // namespace

double PickleValue::as_float() const {
  if (kind_ == Kind::floating) return scalar_.f;
  return kind_ == Kind::integer ? static_cast<double>(scalar_.i) : 0.0;
}
const std::string& PickleValue::as_string() const {
  return (kind_ == Kind::string || kind_ == Kind::bytes) ? node_->text : kEmptyString;
}
const std::vector<PickleValue>& PickleValue::items() const {
  return (kind_ == Kind::list || kind_ == Kind::tuple) ? node_->items : kNoItems;
}
const std::vector<std::pair<PickleValue, PickleValue>>& PickleValue::entries() const {
  return kind_ == Kind::dict ? node_->entries : kNoEntries;
}
const PickleValue* PickleValue::find(std::string_view key) const {
  if (kind_ != Kind::dict) return nullptr;
  // The last entry of a key wins, as when Python builds the dict.
  for (auto it = node_->entries.rbegin(); it != node_->entries.rend(); ++it)
    if (it->first.kind_ == Kind::string && it->first.node_->text == key) return &it->second;
  return nullptr;
}
PickleValue PickleValue::none() { return PickleValue(); }
PickleValue PickleValue::boolean(bool b) {
  PickleValue v;
  v.kind_ = Kind::boolean;
  v.scalar_.b = b;
  return v;
}
PickleValue PickleValue::integer(int64_t i) {
  PickleValue v;
  v.kind_ = Kind::integer;
  v.scalar_.i = i;
  return v;
}
PickleValue PickleValue::floating(double f) {
  PickleValue v;
  v.kind_ = Kind::floating;
  v.scalar_.f = f;
  return v;
}
PickleValue PickleValue::text(PickleArena* arena, Kind k, std::string s) {
  PickleValue v;
  v.kind_ = k;
  v.node_ = &arena->nodes.emplace_back();
  v.node_->text = std::move(s);
  return v;
}
PickleValue PickleValue::container(PickleArena* arena, Kind k) {
  PickleValue v;
  v.kind_ = k;
  v.node_ = &arena->nodes.emplace_back();
  return v;
}

const char* to_string(PickleValue::Kind k) {
  switch (k) {
    case PickleValue::Kind::none: return "None";
    case PickleValue::Kind::boolean: return "bool";
    case PickleValue::Kind::integer: return "int";
    case PickleValue::Kind::floating: return "float";
    case PickleValue::Kind::string: return "str";
    case PickleValue::Kind::bytes: return "bytes";
    case PickleValue::Kind::list: return "list";
    case PickleValue::Kind::tuple: return "tuple";
    case PickleValue::Kind::dict: return "dict";
  }
  return "?";
}

}  // namespace denpex::evidence

namespace denpex::evidence {
namespace {

using Kind = PickleValue::Kind;
using Status = PickleResult::Status;

// The pickle opcodes (Python's Lib/pickle.py names), for messages.
const char* opcode_name(uint8_t op) {
  switch (op) {
    case '(': return "MARK"; case '.': return "STOP"; case '0': return "POP";
    case '1': return "POP_MARK"; case '2': return "DUP"; case 'F': return "FLOAT";
    case 'I': return "INT"; case 'J': return "BININT"; case 'K': return "BININT1";
    case 'L': return "LONG"; case 'M': return "BININT2"; case 'N': return "NONE";
    case 'P': return "PERSID"; case 'Q': return "BINPERSID"; case 'R': return "REDUCE";
    case 'S': return "STRING"; case 'T': return "BINSTRING"; case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE"; case 'X': return "BINUNICODE"; case 'a': return "APPEND";
    case 'b': return "BUILD"; case 'c': return "GLOBAL"; case 'd': return "DICT";
    case '}': return "EMPTY_DICT"; case 'e': return "APPENDS"; case 'g': return "GET";
    case 'h': return "BINGET"; case 'i': return "INST"; case 'j': return "LONG_BINGET";
    case 'l': return "LIST"; case ']': return "EMPTY_LIST"; case 'o': return "OBJ";
    case 'p': return "PUT"; case 'q': return "BINPUT"; case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM"; case 't': return "TUPLE"; case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS"; case 'G': return "BINFLOAT"; case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ"; case 0x82: return "EXT1"; case 0x83: return "EXT2";
    case 0x84: return "EXT4"; case 0x85: return "TUPLE1"; case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3"; case 0x88: return "NEWTRUE"; case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1"; case 0x8b: return "LONG4"; case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES"; case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8"; case 0x8e: return "BINBYTES8"; case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS"; case 0x91: return "FROZENSET"; case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL"; case 0x94: return "MEMOIZE"; case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8"; case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

// PyTorch's inert builders: the only globals read.
enum class Builder : uint8_t { none, restore_type_tag, number_list };

Builder allowed_global(std::string_view module, std::string_view name) {
  if (module != "torch.jit._pickle") return Builder::none;
  if (name == "restore_type_tag") return Builder::restore_type_tag;
  if (name == "build_intlist" || name == "build_doublelist" || name == "build_boollist")
    return Builder::number_list;
  return Builder::none;
}

struct StackItem {
  PickleValue value;
  Builder builder = Builder::none;  // a global: only REDUCE may take it
  bool memo_set = false;            // in the memo: this slot was stored
};

class Unpickler {
 public:
  Unpickler(std::string_view in, const PickleLimits& limits) : in_(in), lim_(limits) {
    result_.arena = std::make_shared<PickleArena>();
    stack_.reserve(256);
  }
  PickleResult run();

 private:
  bool dispatch(uint8_t op);
  bool scalar(uint8_t op);
  bool long_int(uint8_t op);
  bool text(uint8_t op);
  bool build_from_mark(uint8_t op);
  bool fill_from_mark(uint8_t op);
  bool memo(uint8_t op);
  bool global(uint8_t op);
  bool reduce();

  bool fail(Status st, std::string what) {
    if (result_.message.empty()) {
      result_.status = st;
      result_.message = fmt::format("{} at offset {}: {}", op_label(), op_at_, what);
    }
    return false;
  }
  std::string op_label() const {
    const char* n = opcode_name(op_);
    return n ? n : fmt::format("opcode 0x{:02x}", op_);
  }
  bool need(uint64_t n) {
    if (n <= in_.size() - pos_) return true;
    return fail(Status::malformed, fmt::format("needs {} bytes, {} are left: the dump is truncated "
                                               "or not a pickle", n, in_.size() - pos_));
  }
  uint64_t le(size_t n) {  // REQUIRES: need(n)
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= uint64_t{static_cast<unsigned char>(in_[pos_ + k])} << (8 * k);
    pos_ += n;
    return v;
  }
  bool count(size_t n = 1) {
    result_.values += n;
    if (result_.values <= lim_.max_values) return true;
    return fail(Status::too_large, fmt::format("more than {} values: larger than a Flight "
                                               "Recorder dump this reader takes", lim_.max_values));
  }
  bool push(PickleValue v) { return push_item(StackItem{std::move(v), Builder::none, false}); }
  bool push_item(StackItem item) {
    if (stack_.size() >= lim_.max_stack)
      return fail(Status::too_large, fmt::format("more than {} values on the stack at once",
                                                 lim_.max_stack));
    stack_.push_back(std::move(item));
    return true;
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  PickleArena* arena() { return result_.arena.get(); }
  bool pop(StackItem* out) {
    if (stack_.size() <= floor()) return fail(Status::malformed, "pops an empty stack");
    *out = std::move(stack_.back());
    stack_.pop_back();
    return true;
  }
  bool take_mark(size_t* mark) {
    if (marks_.empty()) return fail(Status::malformed, "no MARK before it");
    *mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  bool place(PickleValue* parent, StackItem& child);
  bool mutable_top(Kind k, size_t below, PickleValue** out);

  std::string_view in_;
  const PickleLimits& lim_;
  size_t pos_ = 0;
  size_t op_at_ = 0;
  uint8_t op_ = 0;
  bool stopped_ = false;
  std::vector<StackItem> stack_;
  std::vector<size_t> marks_;
  std::vector<StackItem> memo_;
  PickleResult result_;
};

}  // namespace
}  // namespace denpex::evidence

namespace denpex::evidence {
namespace {

PickleResult Unpickler::run() {
  if (in_.size() > lim_.max_input_bytes) {
    result_.status = Status::too_large;
    result_.message = fmt::format("{} bytes, more than the {} this reader takes", in_.size(),
                                  lim_.max_input_bytes);
    return std::move(result_);
  }
  while (!stopped_) {
    if (pos_ >= in_.size()) {
      op_at_ = pos_;
      result_.status = Status::malformed;
      result_.message = fmt::format("the pickle ends at offset {} without STOP: the dump is "
                                    "truncated", pos_);
      return std::move(result_);
    }
    op_at_ = pos_;
    op_ = static_cast<unsigned char>(in_[pos_++]);
    if (!dispatch(op_)) return std::move(result_);
  }
  result_.status = Status::ok;
  return std::move(result_);
}

bool Unpickler::dispatch(uint8_t op) {
  switch (op) {
    case 0x80: {  // PROTO
      if (!need(1)) return false;
      uint64_t v = le(1);
      if (v < 2 || v > 5) return fail(Status::refused, fmt::format("protocol {} (2 to 5 are read)", v));
      return true;
    }
    case 0x95:  // FRAME: a length prefix only; the opcodes inside are read as they come
      if (!need(8)) return false;
      le(8);
      return true;
    case '.': {  // STOP
      StackItem top;
      if (!pop(&top)) return false;
      if (top.builder != Builder::none) return fail(Status::refused, "the result is a function reference");
      result_.value = std::move(top.value);
      stopped_ = true;
      return true;
    }
    case '(': marks_.push_back(stack_.size()); return true;
    case '0': {  // POP: the top item, or the last mark when nothing is above it
      StackItem gone;
      if (!marks_.empty() && stack_.size() == marks_.back()) {
        marks_.pop_back();
        return true;
      }
      return pop(&gone);
    }
    case '1': {  // POP_MARK
      size_t mark = 0;
      if (!take_mark(&mark)) return false;
      stack_.resize(mark);
      return true;
    }
    case '2':  // DUP
      if (stack_.size() <= floor()) return fail(Status::malformed, "duplicates an empty stack");
      return push_item(stack_.back());
    case 'N': case 0x88: case 0x89: case 'J': case 'K': case 'M': case 'G': return scalar(op);
    case 0x8a: case 0x8b: return long_int(op);
    case 'X': case 0x8c: case 0x8d: case 'B': case 'C': case 0x8e: case 0x96: case 'T': case 'U':
      return text(op);
    case ']': case ')': case '}': return count() && push(PickleValue::container(
        arena(), op == ']' ? Kind::list : op == ')' ? Kind::tuple : Kind::dict));
    case 'l': case 't': case 'd': case 0x85: case 0x86: case 0x87: return build_from_mark(op);
    case 'a': case 'e': case 's': case 'u': return fill_from_mark(op);
    case 'q': case 'r': case 0x94: case 'h': case 'j': return memo(op);
    case 'c': case 0x93: return global(op);
    case 'R': return reduce();
    default: break;
  }
  const char* name = opcode_name(op);
  if (!name) return fail(Status::malformed, "not a pickle opcode: the dump is corrupt or not a pickle");
  return fail(Status::refused, "outside the subset Flight Recorder dumps use (plain values only: "
                               "nothing is built or run)");
}

bool Unpickler::scalar(uint8_t op) {
  switch (op) {
    case 'N': return push(PickleValue::none());
    case 0x88: return push(PickleValue::boolean(true));
    case 0x89: return push(PickleValue::boolean(false));
    case 'J': return need(4) && push(PickleValue::integer(static_cast<int32_t>(le(4))));
    case 'K': return need(1) && push(PickleValue::integer(static_cast<int64_t>(le(1))));
    case 'M': return need(2) && push(PickleValue::integer(static_cast<int64_t>(le(2))));
    default: break;  // 'G': BINFLOAT, big-endian IEEE 754
  }
  if (!need(8)) return false;
  uint64_t bits = 0;
  for (int k = 0; k < 8; ++k) bits = (bits << 8) | static_cast<unsigned char>(in_[pos_ + k]);
  pos_ += 8;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return push(PickleValue::floating(d));
}

// LONG1 / LONG4: little-endian two's complement of n bytes; up to 8 are read.
bool Unpickler::long_int(uint8_t op) {
  size_t width = op == 0x8a ? 1 : 4;
  if (!need(width)) return false;
  uint64_t n = le(width);
  if (n > 8) {
    if (!need(n)) return false;
    return fail(Status::too_large, fmt::format("an integer of {} bytes (up to 8 are read)", n));
  }
  if (!need(n)) return false;  // the bytes it claims must be there before they are read
  uint64_t v = le(n);
  if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
  return push(PickleValue::integer(static_cast<int64_t>(v)));
}

bool Unpickler::text(uint8_t op) {
  size_t width = 0;
  Kind kind = Kind::string;
  switch (op) {
    case 'X': width = 4; break;
    case 0x8c: width = 1; break;
    case 0x8d: width = 8; break;
    case 'B': width = 4; kind = Kind::bytes; break;
    case 'C': width = 1; kind = Kind::bytes; break;
    case 0x8e: case 0x96: width = 8; kind = Kind::bytes; break;
    case 'T': width = 4; break;  // Python 2 str: read as text, as Python 3 does by default
    default: width = 1; break;   // 'U': SHORT_BINSTRING
  }
  if (!need(width)) return false;
  uint64_t n = le(width);
  if (op == 'T' && n > 0x7fffffff) return fail(Status::malformed, "a negative length");
  if (n > lim_.max_string_bytes && n <= in_.size() - pos_)
    return fail(Status::too_large, fmt::format("a string of {} bytes (up to {} are read)", n,
                                               lim_.max_string_bytes));
  if (!need(n) || !count()) return false;
  PickleValue v = PickleValue::text(arena(), kind, std::string(in_.substr(pos_, n)));
  pos_ += n;
  return push(std::move(v));
}

}  // namespace
}  // namespace denpex::evidence

namespace denpex::evidence {
namespace {

bool Unpickler::place(PickleValue* parent, StackItem& child) {
  if (child.builder != Builder::none)
    return fail(Status::refused, "a function reference used as a value");
  if (!count()) return false;
  PickleValue::Node* p = parent->node();
  if (child.value.node() == p)
    return fail(Status::refused, fmt::format("puts a {} inside itself (a cycle)", to_string(parent->kind())));
  if (PickleValue::Node* c = child.value.node();
      c && (child.value.is(Kind::list) || child.value.is(Kind::tuple) || child.value.is(Kind::dict))) {
    c->sealed = true;
    if (c->depth + 1 > p->depth) p->depth = c->depth + 1;
    if (p->depth > lim_.max_depth)
      return fail(Status::too_large, fmt::format("containers nested more than {} deep",
                                                 lim_.max_depth));
  }
  return true;
}

// The container `below` items under the top of the stack (0: the top), which must be of kind
// `k`, inside the current mark, and not yet put inside another container.
bool Unpickler::mutable_top(Kind k, size_t below, PickleValue** out) {
  if (stack_.size() < floor() + below + 1) return fail(Status::malformed, "nothing to add to");
  StackItem& t = stack_[stack_.size() - 1 - below];
  if (t.builder != Builder::none || !t.value.is(k))
    return fail(Status::malformed, fmt::format("adds to a {}, not a {}", t.builder != Builder::none
                ? "function reference" : to_string(t.value.kind()), to_string(k)));
  if (t.value.node()->sealed)
    return fail(Status::refused, fmt::format("changes a {} already put inside another (a cycle "
                                             "or a shared value changed later)", to_string(k)));
  *out = &t.value;
  return true;
}

bool Unpickler::build_from_mark(uint8_t op) {
  size_t first = 0;
  Kind kind = op == 'l' ? Kind::list : op == 'd' ? Kind::dict : Kind::tuple;
  if (op == 'l' || op == 't' || op == 'd') {
    if (!take_mark(&first)) return false;
  } else {
    size_t n = static_cast<size_t>(op - 0x84);  // TUPLE1..TUPLE3
    if (stack_.size() < floor() + n) return fail(Status::malformed, "too few values on the stack");
    first = stack_.size() - n;
  }
  if (kind == Kind::dict && (stack_.size() - first) % 2 != 0)
    return fail(Status::malformed, "a key without a value");
  if (!count()) return false;
  PickleValue v = PickleValue::container(arena(), kind);
  PickleValue::Node* node = v.node();
  node->items.reserve(kind == Kind::dict ? 0 : stack_.size() - first);
  node->entries.reserve(kind == Kind::dict ? (stack_.size() - first) / 2 : 0);
  for (size_t k = first; k < stack_.size(); ++k)
    if (!place(&v, stack_[k])) return false;
  if (kind == Kind::dict) {
    for (size_t k = first; k + 1 < stack_.size(); k += 2)
      node->entries.emplace_back(std::move(stack_[k].value), std::move(stack_[k + 1].value));
  } else {
    for (size_t k = first; k < stack_.size(); ++k) node->items.push_back(std::move(stack_[k].value));
  }
  stack_.resize(first);
  return push(std::move(v));
}

// APPEND, APPENDS, SETITEM, SETITEMS: into the list or dict below the new values.
bool Unpickler::fill_from_mark(uint8_t op) {
  bool is_dict = op == 's' || op == 'u';
  size_t first = 0;
  if (op == 'e' || op == 'u') {
    if (!take_mark(&first)) return false;
  } else {
    size_t n = is_dict ? 2 : 1;
    if (stack_.size() < floor() + n) return fail(Status::malformed, "too few values on the stack");
    first = stack_.size() - n;
  }
  if (is_dict && (stack_.size() - first) % 2 != 0) return fail(Status::malformed, "a key without a value");
  // The target sits right below the new values (for the MARK forms, below the mark).
  PickleValue* target = nullptr;
  if (!mutable_top(is_dict ? Kind::dict : Kind::list, stack_.size() - first, &target)) return false;
  PickleValue::Node* node = target->node();
  if (is_dict) node->entries.reserve(node->entries.size() + (stack_.size() - first) / 2);
  else node->items.reserve(node->items.size() + stack_.size() - first);
  for (size_t k = first; k < stack_.size(); ++k)
    if (!place(target, stack_[k])) return false;
  if (is_dict) {
    for (size_t k = first; k + 1 < stack_.size(); k += 2)
      node->entries.emplace_back(std::move(stack_[k].value), std::move(stack_[k + 1].value));
  } else {
    for (size_t k = first; k < stack_.size(); ++k) node->items.push_back(std::move(stack_[k].value));
  }
  stack_.resize(first);
  return true;
}

bool Unpickler::memo(uint8_t op) {
  bool get = op == 'h' || op == 'j';
  uint64_t idx = 0;
  if (op == 0x94) {
    idx = memo_.size();
  } else {
    size_t width = (op == 'q' || op == 'h') ? 1 : 4;
    if (!need(width)) return false;
    idx = le(width);
  }
  if (get) {
    if (idx >= memo_.size() || !memo_[idx].memo_set)
      return fail(Status::malformed, fmt::format("memo entry {} was never stored", idx));
    StackItem item = memo_[idx];
    item.memo_set = false;
    return push_item(std::move(item));
  }
  if (stack_.size() <= floor()) return fail(Status::malformed, "stores an empty stack");
  if (idx >= memo_.size()) {
    if (!count(static_cast<size_t>(std::min<uint64_t>(idx + 1 - memo_.size(), lim_.max_values + 1))))
      return false;
    memo_.resize(idx + 1);
  }
  memo_[idx] = stack_.back();
  memo_[idx].memo_set = true;
  return true;
}

bool Unpickler::global(uint8_t op) {
  std::string module, name;
  if (op == 'c') {
    for (std::string* part : {&module, &name}) {
      size_t end = in_.find('\n', pos_);
      if (end == std::string_view::npos || end - pos_ > 256)
        return fail(Status::malformed, "a module or name without its newline");
      *part = std::string(in_.substr(pos_, end - pos_));
      pos_ = end + 1;
    }
  } else {
    StackItem n, m;
    if (!pop(&n) || !pop(&m)) return false;
    if (!n.value.is(Kind::string) || !m.value.is(Kind::string))
      return fail(Status::malformed, "module and name are not strings");
    module = m.value.as_string();
    name = n.value.as_string();
  }
  Builder b = allowed_global(module, name);
  if (b == Builder::none)
    return fail(Status::refused, fmt::format(
        "{}.{} is not one of PyTorch's inert builders (torch.jit._pickle restore_type_tag, "
        "build_intlist, build_doublelist, build_boollist): refused, nothing was run",
        module.substr(0, 80), name.substr(0, 80)));
  return push_item(StackItem{PickleValue(), b, false});
}

bool Unpickler::reduce() {
  StackItem args, fn;
  if (!pop(&args) || !pop(&fn)) return false;
  if (fn.builder == Builder::none)
    return fail(Status::refused, "calls something that is not a builder of plain values");
  if (args.builder != Builder::none || !args.value.is(Kind::tuple))
    return fail(Status::malformed, "arguments that are not a tuple");
  const auto& a = args.value.items();
  if (fn.builder == Builder::restore_type_tag) {
    if (a.size() != 2 || !(a[0].is(Kind::dict) || a[0].is(Kind::list)) || !a[1].is(Kind::string))
      return fail(Status::malformed, "restore_type_tag needs (dict or list, type string)");
    return push(a[0]);
  }
  if (a.size() != 1 || !a[0].is(Kind::list))
    return fail(Status::malformed, "build_*list needs (list,)");
  for (const PickleValue& x : a[0].items())
    if (!x.is(Kind::integer) && !x.is(Kind::floating) && !x.is(Kind::boolean))
      return fail(Status::malformed, fmt::format("a number list holding a {}", to_string(x.kind())));
  return push(a[0]);
}

}  // namespace

PickleResult read_pickle(std::string_view bytes, const PickleLimits& limits) {
  return Unpickler(bytes, limits).run();
}

}  // namespace denpex::evidence
