#include "probe/trust.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

namespace {

bool check_one(const std::string& path, bool is_dir, TrustCheck* out) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    out->trusted = false;
    out->reason = fmt::format("cannot stat {}: {}", path, std::strerror(errno));
    return false;
  }
  const char* what = is_dir ? "directory" : "file";
  if (st.st_uid != 0) {
    out->trusted = false;
    out->reason = fmt::format("{} {} is owned by uid {}, not root", what, path, st.st_uid);
    return false;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    out->trusted = false;
    out->reason = fmt::format("{} {} is writable by {}", what, path,
                              (st.st_mode & S_IWOTH) ? "every user" : "its group");
    return false;
  }
  return true;
}

}  // namespace

TrustCheck check_trusted(const std::string& host_path, bool running_as_root) {
  TrustCheck t;
  if (!running_as_root) return t;
  // Walk from the root down so the message names the highest offending directory.
  size_t pos = 0;
  while ((pos = host_path.find('/', pos + 1)) != std::string::npos) {
    if (!check_one(host_path.substr(0, pos), true, &t)) return t;
  }
  if (!check_one("/", true, &t)) return t;
  check_one(host_path, false, &t);
  return t;
}

}  // namespace denpex
