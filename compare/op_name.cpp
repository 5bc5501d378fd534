#include "compare/op_name.h"

#include <iterator>

#include "compare/collectives.h"

namespace denpex {

namespace {

// The common spellings are NCCL's collective kinds (to_string(CollKind), "unknown" included:
// one table for both) and, after them, the life-cycle and group calls recorders name; any other
// name costs one heap copy.
constexpr std::uintptr_t kKinds = static_cast<std::uintptr_t>(CollKind::unknown) + 1;
constexpr std::string_view kOther[] = {
    "CommInitRank", "CommInitAll",  "CommSplit",          "CommDestroy",          "CommAbort",  "CommFinalize",
    "GroupStart",   "GroupEnd",     "CommInitRankConfig", "CommInitRankScalable", "CommShrink", "AllToAll"};

std::uintptr_t common_bits(std::uintptr_t index) { return (index << 1) | 1; }

std::uintptr_t copy_of(std::uintptr_t bits) {
  if (bits == 0 || (bits & 1) != 0) return bits;
  return reinterpret_cast<std::uintptr_t>(new std::string(*reinterpret_cast<const std::string*>(bits)));
}

void release(std::uintptr_t bits) {
  if (bits != 0 && (bits & 1) == 0) delete reinterpret_cast<std::string*>(bits);
}

}  // namespace

OpName::OpName(CollKind kind) : bits_(common_bits(static_cast<std::uintptr_t>(kind))) {}

OpName::OpName(std::string_view name) {
  if (name.empty()) return;
  CollKind kind = parse_coll_kind(name);
  if (kind != CollKind::unknown || name == to_string(CollKind::unknown)) {
    bits_ = common_bits(static_cast<std::uintptr_t>(kind));
    return;
  }
  for (size_t i = 0; i < std::size(kOther); ++i)
    if (kOther[i] == name) {
      bits_ = common_bits(kKinds + i);
      return;
    }
  bits_ = reinterpret_cast<std::uintptr_t>(new std::string(name));
}

OpName::OpName(const OpName& other) : bits_(copy_of(other.bits_)) {}

OpName& OpName::operator=(const OpName& other) {
  if (this != &other) {
    std::uintptr_t b = copy_of(other.bits_);
    release(bits_);
    bits_ = b;
  }
  return *this;
}

OpName& OpName::operator=(OpName&& other) noexcept {
  if (this != &other) {
    release(bits_);
    bits_ = other.bits_;
    other.bits_ = 0;
  }
  return *this;
}

OpName::~OpName() { release(bits_); }

std::string_view OpName::view() const {
  if (bits_ == 0) return {};
  if ((bits_ & 1) != 0) {
    std::uintptr_t i = bits_ >> 1;
    return i < kKinds ? std::string_view(to_string(static_cast<CollKind>(i))) : kOther[i - kKinds];
  }
  return *reinterpret_cast<const std::string*>(bits_);
}

}  // namespace denpex
