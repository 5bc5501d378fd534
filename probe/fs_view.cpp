#include "probe/fs_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "probe/text.h"

namespace denpex {

std::string dir_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join_path(const std::string& a, const std::string& b) {
  if (b.empty()) return a;
  if (b[0] == '/' || a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::string host_path(const FsView& fs, const std::string& view_path) {
  if (fs.root.empty() || fs.root == "/") return view_path;
  return fs.root + view_path;
}

namespace {

// The live system's resolution, done by the kernel: one path walk (an O_PATH open, which opens
// nothing) and the name of what it reached (/proc/self/fd). A walk of our own costs one lstat
// per component, each walking from "/" again: a probe resolves about a hundred paths, and that
// was the largest share of its system time. Inside an image root the kernel would follow an
// absolute symlink out of the root, so only the live view takes this path. Returns false when
// /proc cannot name the descriptor (a minimal chroot) or the open failed for another reason
// than a missing name; the caller then walks, which names the component that failed.
bool resolve_by_kernel(std::string path, Resolved* r) {
  // The walk ignores a trailing slash; the kernel would refuse one after a file.
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) return false;
    r->status = ResolveStatus::not_found;
    r->error = path + ": " + std::strerror(errno);
    return true;
  }
  char buf[4097];
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(self.c_str(), buf, sizeof buf - 1);
  ::close(fd);
  // Anything but an absolute name (an unreachable mount, a name cut at the buffer) is left to
  // the walk, which says exactly which component failed.
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf - 1 || buf[0] != '/') return false;
  r->status = ResolveStatus::ok;
  r->path.assign(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

Resolved resolve(const FsView& fs, const std::string& view_path) {
  Resolved r;
  // A NUL inside the path would end it early for every system call below, so "/..\0x" would be
  // checked as "/.." but kept as a name: refuse it (found by fuzz_fs_view).
  if (view_path.find('\0') != std::string::npos) {
    r.status = ResolveStatus::error;
    r.error = "a path with a NUL byte in it";
    return r;
  }
  if ((fs.root.empty() || fs.root == "/") && !view_path.empty() && view_path[0] == '/' &&
      resolve_by_kernel(view_path, &r))
    return r;
  // Pending components, consumed from the back so a symlink's target can be pushed in front.
  std::vector<std::string> todo = split_nonempty(view_path, '/');
  std::reverse(todo.begin(), todo.end());
  std::vector<std::string> done;
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      if (!done.empty()) done.pop_back();  // ".." at the root stays at the root
      continue;
    }
    std::string view = "/";
    for (const auto& d : done) view = join_path(view, d);
    view = join_path(view, c);
    std::string host = host_path(fs, view);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) {
      r.status = (errno == ENOENT || errno == ENOTDIR) ? ResolveStatus::not_found
                                                       : ResolveStatus::error;
      r.error = view + ": " + std::strerror(errno);
      return r;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++links > 40) {
        r.status = ResolveStatus::loop;
        r.error = view_path + ": too many levels of symbolic links";
        return r;
      }
      char buf[4096];
      ssize_t n = ::readlink(host.c_str(), buf, sizeof buf - 1);
      if (n < 0) {
        r.status = ResolveStatus::error;
        r.error = view + ": " + std::strerror(errno);
        return r;
      }
      std::string target(buf, static_cast<size_t>(n));
      if (!target.empty() && target[0] == '/') done.clear();
      auto parts = split_nonempty(target, '/');
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
      continue;
    }
    if (!todo.empty() && !S_ISDIR(st.st_mode)) {
      r.status = ResolveStatus::not_found;
      r.error = view + ": not a directory";
      return r;
    }
    done.push_back(c);
  }
  r.path = "/";
  for (const auto& d : done) r.path = join_path(r.path, d);
  r.status = ResolveStatus::ok;
  return r;
}

std::vector<std::string> list_dir(const FsView& fs, const std::string& view_dir, size_t limit,
                                  bool* truncated, std::string_view prefix) {
  std::vector<std::string> out;
  if (truncated) *truncated = false;
  DIR* d = ::opendir(host_path(fs, view_dir).c_str());
  if (!d) return out;
  size_t seen = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (seen++ >= limit) {
      if (truncated) *truncated = true;
      break;
    }
    if (prefix.empty() || std::strncmp(e->d_name, prefix.data(), prefix.size()) == 0)
      out.emplace_back(e->d_name);
  }
  ::closedir(d);
  return out;
}

std::string file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO (named pipe)";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFLNK: return "a symbolic link";
    default: return "a special file";
  }
}

int open_regular_file(const std::string& host, struct stat* st_out, std::string* error,
                      int* errno_out) {
  if (errno_out) *errno_out = 0;
  auto fail = [&](int e) {
    if (errno_out) *errno_out = e;
    if (error) *error = std::strerror(e);
    return -1;
  };
  // O_PATH first: it names the inode without opening it, so a device whose open() has side
  // effects (a watchdog arms, a tape rewinds) or a FIFO (a writer waiting for a reader) is
  // never opened at all. Only a regular file is then opened for reading, through that same
  // inode (/proc/self/fd), so nothing can be swapped in between the check and the read.
  int path_fd = ::open(host.c_str(), O_PATH | O_CLOEXEC);
  if (path_fd < 0) return fail(errno);
  struct stat st {};
  if (::fstat(path_fd, &st) != 0) {
    int e = errno;
    ::close(path_fd);
    return fail(e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(path_fd);
    if (error)
      *error = S_ISDIR(st.st_mode) ? "is a directory"
                                   : "is " + file_type_name(st.st_mode) + ", not a regular file";
    return -1;
  }
  const std::string through = "/proc/self/fd/" + std::to_string(path_fd);
  int fd = ::open(through.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) {
    // No /proc (a minimal chroot): open the path itself, non-blocking, and check it again.
    fd = ::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  }
  int open_errno = errno;
  ::close(path_fd);
  if (fd < 0) return fail(open_errno);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int e = errno;
    bool regular = S_ISREG(st.st_mode);
    ::close(fd);
    if (!regular) {
      if (error) *error = "is " + file_type_name(st.st_mode) + ", not a regular file";
      return -1;
    }
    return fail(e);
  }
  // Regular file: reads never block; clear O_NONBLOCK all the same so a later reader sees a
  // plain descriptor.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (st_out) *st_out = st;
  return fd;
}

bool read_small_file(const FsView& fs, const std::string& view_path, size_t limit,
                     std::string* out, bool* truncated, std::string* error) {
  if (truncated) *truncated = false;
  struct stat st {};
  int fd = open_regular_file(host_path(fs, view_path), &st, error);
  if (fd < 0) return false;
  out->clear();
  char buf[65536];
  while (out->size() < limit) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit - out->size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  if (truncated && static_cast<uint64_t>(st.st_size) > limit) *truncated = true;
  ::close(fd);
  return true;
}

}  // namespace denpex
