// The name of a collective call as its source recorded it ("AllReduce", "CommInitRank", ...),
// in one pointer: a log or a recorder ring holds millions of calls, and almost every one is
// named by one of a few dozen spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace denpex {

class OpName {
 public:
  OpName() = default;
  // Implicit, as the std::string it stands for: `call.op_name = "AllReduce"`.
  OpName(std::string_view name);  // NOLINT(google-explicit-constructor)
  OpName(const char* name) : OpName(std::string_view(name)) {}  // NOLINT(google-explicit-constructor)
  OpName(const std::string& name) : OpName(std::string_view(name)) {}  // NOLINT(google-explicit-constructor)
  OpName(const OpName& other);
  OpName(OpName&& other) noexcept : bits_(other.bits_) { other.bits_ = 0; }
  OpName& operator=(const OpName& other);
  OpName& operator=(OpName&& other) noexcept;
  ~OpName();

  std::string_view view() const;
  std::string str() const { return std::string(view()); }
  bool empty() const { return view().empty(); }

  friend bool operator==(const OpName& a, const OpName& b) { return a.view() == b.view(); }
  friend bool operator!=(const OpName& a, const OpName& b) { return !(a == b); }
  friend bool operator==(const OpName& a, std::string_view b) { return a.view() == b; }
  friend bool operator!=(const OpName& a, std::string_view b) { return a.view() != b; }
  friend bool operator==(const OpName& a, const std::string& b) { return a.view() == b; }
  friend bool operator!=(const OpName& a, const std::string& b) { return a.view() != b; }
  friend bool operator==(const OpName& a, const char* b) { return a.view() == b; }
  friend bool operator!=(const OpName& a, const char* b) { return a.view() != b; }

 private:
  // 0: the empty name; odd: (index << 1) | 1 into the table of common spellings (no copy);
  // otherwise a std::string* this name owns.
  std::uintptr_t bits_ = 0;
};

}  // namespace denpex
