#include "launch/input_paths.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>

namespace denpex {

namespace {

namespace fs = std::filesystem;

std::string why(const std::error_code& ec) {
  return ec.value() == ELOOP ? "too many levels of symbolic links (a link loop)" : ec.message();
}

// What an entry that is not read is, for the line that names it.
std::string kind_of(const fs::directory_entry& e) {
  std::error_code ec;
  fs::file_status st = e.status(ec);
  if (ec || st.type() == fs::file_type::not_found) return "a link to nothing (dangling)";
  switch (st.type()) {
    case fs::file_type::fifo: return "a FIFO (named pipe), not a file";
    case fs::file_type::socket: return "a socket, not a file";
    case fs::file_type::block:
    case fs::file_type::character: return "a device, not a file";
    default: return "not a regular file";
  }
}

struct Walk {
  DirectoryWalk mode;
  std::vector<std::string>* out;
  std::vector<std::string>* skipped;
  std::set<std::pair<dev_t, ino_t>> seen;  // folders read, by identity: a link loop reads none twice
};

// Enters `d` once (false when it was read already, through another path or a link).
bool first_visit(const fs::path& d, Walk* w) {
  struct stat st{};
  if (::stat(d.c_str(), &st) != 0) return true;  // the iterator names the error
  return w->seen.insert({st.st_dev, st.st_ino}).second;
}

// One entry of a folder being read: a file kept, a folder queued (or named as skipped).
void visit(const fs::directory_entry& e, Walk* w, std::vector<fs::path>* pending) {
  std::error_code ec;
  if (e.is_regular_file(ec)) {
    w->out->push_back(e.path().string());
  } else if (e.is_directory(ec)) {
    if (w->mode == DirectoryWalk::top)
      w->skipped->push_back(fmt::format("{}: a folder inside a folder given: not read (give it as its own path)",
                                        e.path().string()));
    else if (!first_visit(e.path(), w))
      w->skipped->push_back(fmt::format("{}: a link to a folder already read (a loop, or read twice): not read again",
                                        e.path().string()));
    else
      pending->push_back(e.path());
  } else {
    w->skipped->push_back(fmt::format("{}: {}: not read", e.path().string(), kind_of(e)));
  }
}

// The regular files under `dir`; false and *error naming the first directory that cannot be read.
bool walk_dir(const fs::path& dir, Walk* w, std::string* error) {
  first_visit(dir, w);
  std::vector<fs::path> pending = {dir};
  while (!pending.empty()) {
    fs::path d = pending.back();
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(d, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) visit(*it, w, &pending);
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

std::vector<std::string> input_files(const std::vector<std::string>& paths, DirectoryWalk walk, std::string* error,
                                     std::vector<std::string>* skipped) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (p == "-") {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      Walk w{walk, &in_dir, skipped, {}};
      if (!walk_dir(p, &w, error)) return {};
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
