// A filesystem seen from a root directory: "/" for the live system, an unpacked image under
// --root. Paths handed around in probe/ are *view* paths (what a process inside that root sees);
// host_path() turns one into a path this process can open. Symlinks are followed the way a
// process inside the root would follow them (an absolute target is taken inside the root), so
// nothing outside an image is ever read.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <vector>

namespace denpex {

struct FsView {
  std::string root = "/";  // host directory that is "/" in the view; no trailing slash except "/"
};

// ok         path exists; `path` is its view path with every symlink resolved
// not_found  a component does not exist (dangling symlink included)
// loop       more than 40 symlinks (the kernel's ELOOP bound)
// error      another failure (permissions, path too long); `error` says which
enum class ResolveStatus { ok, not_found, loop, error };

struct Resolved {
  ResolveStatus status = ResolveStatus::not_found;
  std::string path;   // resolved view path (valid when ok)
  std::string error;
};

// Host path of a view path. REQUIRES: view_path is absolute.
std::string host_path(const FsView& fs, const std::string& view_path);

// Resolves symlinks and "." / ".." in an absolute view path, never leaving the root.
Resolved resolve(const FsView& fs, const std::string& view_path);

// Entries of a view directory (names only, no "." and ".."), at most `limit`; empty when the
// directory cannot be read. `truncated` (may be null) is set when the limit cut the listing.
// With a `prefix`, only the names that start with it are returned (`limit` still counts every
// entry read): a system library directory holds thousands of names, a probe wants a few.
std::vector<std::string> list_dir(const FsView& fs, const std::string& view_dir, size_t limit,
                                  bool* truncated, std::string_view prefix = {});

// Opens a host path for reading without ever blocking: the path is first opened O_PATH (which
// opens nothing) and checked with fstat; only a regular file is then opened O_RDONLY |
// O_NONBLOCK | O_CLOEXEC through that same descriptor, so there is no window between the check
// and the open. A FIFO, socket or device planted where a file is expected (a plain open() of a
// FIFO blocks forever; of some devices, has side effects) is refused without being opened.
// Returns the descriptor of a regular file (the caller closes it; *st, may be null, filled), or
// -1 with *error (may be null) saying why in words: strerror text, "is a directory", "is a FIFO
// (named pipe), not a regular file". *errno_out (may be null) is the open errno, 0 otherwise.
int open_regular_file(const std::string& host_path, struct stat* st, std::string* error,
                      int* errno_out = nullptr);

// "a FIFO (named pipe)", "a character device", ... for the file type bits of st_mode.
std::string file_type_name(unsigned mode);

// Reads at most `limit` bytes of a view file. Returns false when it cannot be opened or is not
// a regular file (*error, may be null, says which); sets *truncated (may be null) when the file
// was longer than `limit`.
bool read_small_file(const FsView& fs, const std::string& view_path, size_t limit,
                     std::string* out, bool* truncated, std::string* error = nullptr);

// Directory part of a path ("/a/b/c" -> "/a/b", "/a" -> "/").
std::string dir_name(const std::string& path);
// Last component ("/a/b/c" -> "c").
std::string base_name(const std::string& path);
// a + "/" + b, without doubling the slash; b absolute -> b.
std::string join_path(const std::string& a, const std::string& b);

}  // namespace denpex
