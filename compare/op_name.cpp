#include "compare/op_name.h"

#include <iterator>

namespace denpex {

namespace {

// NCCL's collective kinds and the life-cycle and group calls recorders name; any other name
// costs one heap copy.
constexpr std::string_view kCommon[] = {
    "AllReduce",   "AllGather",    "ReduceScatter", "Broadcast",  "Reduce",       "Send",
    "Recv",        "AlltoAll",     "Gather",        "Scatter",    "CommInitRank", "CommInitAll",
    "CommSplit",   "CommDestroy",  "CommAbort",     "CommFinalize", "GroupStart", "GroupEnd",
    "CommInitRankConfig", "CommInitRankScalable", "CommShrink", "AllToAll"};

std::uintptr_t copy_of(std::uintptr_t bits) {
  if (bits == 0 || (bits & 1) != 0) return bits;
  return reinterpret_cast<std::uintptr_t>(new std::string(*reinterpret_cast<const std::string*>(bits)));
}

void release(std::uintptr_t bits) {
  if (bits != 0 && (bits & 1) == 0) delete reinterpret_cast<std::string*>(bits);
}

}  // namespace

OpName::OpName(std::string_view name) {
  if (name.empty()) return;
  for (size_t i = 0; i < std::size(kCommon); ++i)
    if (kCommon[i] == name) {
      bits_ = (static_cast<std::uintptr_t>(i) << 1) | 1;
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
  if ((bits_ & 1) != 0) return kCommon[bits_ >> 1];
  return *reinterpret_cast<const std::string*>(bits_);
}

}  // namespace denpex
