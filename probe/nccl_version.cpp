#include "probe/nccl_version.h"

#include <cctype>
#include <cstdlib>

namespace denpex {

namespace {

// Reads a run of digits at s[*i]; false when there is none.
bool digits(const std::string& s, size_t* i, int* out) {
  size_t start = *i;
  long v = 0;
  while (*i < s.size() && std::isdigit(static_cast<unsigned char>(s[*i])) && *i - start < 6) {
    v = v * 10 + (s[*i] - '0');
    ++*i;
  }
  if (*i == start) return false;
  *out = static_cast<int>(v);
  return true;
}

bool literal(const std::string& s, size_t* i, const char* lit) {
  std::string l(lit);
  if (s.compare(*i, l.size(), l) != 0) return false;
  *i += l.size();
  return true;
}

// "13.0" at s[*i] into *out.
bool cuda_version(const std::string& s, size_t* i, std::string* out) {
  int a = 0, b = 0;
  if (!digits(s, i, &a) || !literal(s, i, ".") || !digits(s, i, &b)) return false;
  *out = std::to_string(a) + "." + std::to_string(b);
  return true;
}

}  // namespace

NcclVersion parse_nccl_literal(const std::string& s) {
  NcclVersion v;
  size_t i = 0;
  if (!literal(s, &i, "NCCL version ")) return v;
  if (!digits(s, &i, &v.major) || !literal(s, &i, ".") || !digits(s, &i, &v.minor) ||
      !literal(s, &i, ".") || !digits(s, &i, &v.patch))
    return v;
  v.version = std::to_string(v.major) + "." + std::to_string(v.minor) + "." +
              std::to_string(v.patch);
  // NCCL_SUFFIX ("a", "-1", "rc1") follows the patch directly.
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' ||
                          s[i] == '_' || s[i] == '~')) {
    v.version += s[i++];
  }
  v.ok = true;
  size_t j = i;
  if (literal(s, &j, "+cuda")) {
    cuda_version(s, &j, &v.cuda_build);
  } else if (literal(s, &j, " compiled with CUDA ")) {
    cuda_version(s, &j, &v.cuda_build);
  }
  return v;
}

NcclVersion pick_nccl_literal(const std::vector<std::string>& literals) {
  NcclVersion first;
  for (const auto& l : literals) {
    NcclVersion v = parse_nccl_literal(l);
    if (!v.ok) continue;
    if (!v.cuda_build.empty()) return v;
    if (!first.ok) first = v;
  }
  return first;
}

int nccl_version_code(const NcclVersion& v) {
  // Both encodings give minor and patch two decimal digits; a literal with more has no code.
  if (!v.ok || v.minor > 99 || v.patch > 99 || v.major > 9999) return 0;
  bool old = v.major < 2 || (v.major == 2 && v.minor < 9);
  return old ? v.major * 1000 + v.minor * 100 + v.patch
             : v.major * 10000 + v.minor * 100 + v.patch;
}

}  // namespace denpex
