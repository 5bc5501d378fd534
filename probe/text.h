// Small string helpers shared by the probes that read text and path lists.
#pragma once

#include <string>
#include <vector>

namespace denpex {

// Pieces of `s` between separator characters (any of `seps`), empty pieces dropped
// ("/a//b" on "/" -> {"a","b"}).
std::vector<std::string> split_nonempty(const std::string& s, const std::string& seps);
inline std::vector<std::string> split_nonempty(const std::string& s, char sep) {
  return split_nonempty(s, std::string(1, sep));
}

// Lines of `text` without their '\n' (a last line without one included).
std::vector<std::string> split_lines(const std::string& text);

// `s` without leading and trailing spaces, tabs and carriage returns.
std::string trim(const std::string& s);

}  // namespace denpex
