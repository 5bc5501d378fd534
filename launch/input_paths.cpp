#include "launch/input_paths.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace denpex {

namespace {

namespace fs = std::filesystem;

std::string why(const std::error_code& ec) {
  return ec.value() == ELOOP ? "too many levels of symbolic links (a link loop)" : ec.message();
}

// The regular files under `dir`; false and *error naming the first directory that cannot be read.
bool walk_dir(const fs::path& dir, DirectoryWalk walk, std::vector<std::string>* out, std::string* error) {
  std::vector<fs::path> pending = {dir};
  while (!pending.empty()) {
    fs::path d = pending.back();
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(d, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_regular_file(type_ec)) out->push_back(it->path().string());
      else if (walk == DirectoryWalk::recursive && it->is_directory(type_ec) && !it->is_symlink(type_ec))
        pending.push_back(it->path());
    }
    if (ec) {
      *error = d == dir ? fmt::format("{}: cannot read the directory: {}", dir.string(), why(ec))
                        : fmt::format("{}: cannot read {} in it: {}; give the files that can be read, or read them as "
                                      "a user who may",
                                      dir.string(), d.string(), why(ec));
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::string> input_files(const std::vector<std::string>& paths, DirectoryWalk walk, std::string* error) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (p == "-") {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      if (!walk_dir(p, walk, &in_dir, error)) return {};
      if (in_dir.empty()) {
        *error = fmt::format("{}: directory holds no files", p);
        return {};
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      // exists() is false for a name it could not look up too: a link loop (ELOOP), a
      // directory on the way that cannot be searched (EACCES); say which.
      *error = ec && ec != std::errc::no_such_file_or_directory ? fmt::format("{}: {}", p, why(ec))
                                                                 : fmt::format("{}: no such file or directory", p);
      return {};
    }
  }
  return files;
}

}  // namespace denpex
