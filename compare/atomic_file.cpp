#include "compare/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

namespace {

// Writes all of `text` to `fd`. False (errno kept) when a write fails.
bool write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n > 0) off += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR) continue;
    else {
      if (n == 0) errno = EIO;
      return false;
    }
  }
  return true;
}

// Writes all of `text` to `fd`, fsyncs (when `sync`) and closes it. False (errno of the first
// failure kept) when any step fails; `fd` is closed either way.
bool write_and_close(int fd, const std::string& text, bool sync) {
  bool ok = write_all(fd, text);
  int saved = ok ? 0 : errno;
  if (ok && sync && ::fsync(fd) != 0) {
    ok = false;
    saved = errno;
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) errno = saved;
  return ok;
}

// The directory part of `path` with its slash ("" for a bare name) and the last component.
void split_path(const std::string& path, std::string* dir, std::string* base) {
  size_t slash = path.rfind('/');
  *dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  *base = slash == std::string::npos ? path : path.substr(slash + 1);
}

// Creates "<dir>.<base>.XXXXXX" with a random suffix, O_EXCL|O_NOFOLLOW (no one can have
// placed a file or a link there for us to write through), mode 0644 less the umask; a new name
// on EEXIST. Returns the descriptor and *tmp, or -1 with errno. Not mkostemp: that creates
// mode 0600 whatever the umask, and the report is meant to be read by the job's user.
int create_temporary(const std::string& path, std::string* tmp) {
  std::string dir, base;
  split_path(path, &dir, &base);
  // ".NAME.XXXXXX" must fit NAME_MAX (255) where NAME itself does.
  if (base.size() > 200) base.resize(200);
  static const char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned char random[6];
    if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
      if (errno == EINTR) continue;
      return -1;
    }
    std::string suffix;
    for (unsigned char r : random) suffix += kAlphabet[r % (sizeof kAlphabet - 1)];
    *tmp = dir + "." + base + "." + suffix;
    int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

std::string what_it_is(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file, a character device or a FIFO";
}

std::string link_target(const std::string& path) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
}

// The standard streams and other descriptors named by path: the descriptor already open.
bool write_descriptor(int fd, const std::string& text, std::string* error) {
  if (fd == 1) return write_standard_stream(stdout, text, error);
  if (fd == 2) return write_standard_stream(stderr, text, error);
  // What this process already wrote to its streams comes first.
  std::fflush(stdout);
  std::fflush(stderr);
  if (write_all(fd, text)) return true;
  *error = fmt::format("cannot write to descriptor {}: {}", fd, std::strerror(errno));
  return false;
}

// A character device or a FIFO at `path`: opened as it is. O_NONBLOCK so that a FIFO nobody
// reads is an error at once (ENXIO) rather than a wait with no end; O_NOFOLLOW and the fstat
// after it so that a name swapped for a link or a file since lstat is not written through.
bool write_through(const std::string& path, const std::string& text, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *error = errno == ENXIO
                 ? fmt::format("{}: is a FIFO with no reader: start the reader first, or give a file name", path)
                 : fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    *error = fmt::format("{}: changed while it was opened: not written; run again", path);
    return false;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (!write_and_close(fd, text, false)) {
    *error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

bool replace_file(const std::string& path, const std::string& text, const struct stat* old,
                  std::string* error) {
  std::string tmp;
  int fd = create_temporary(path, &tmp);
  if (fd < 0) {
    *error = fmt::format("{}: cannot create a temporary file beside it: {}", path, std::strerror(errno));
    return false;
  }
  // The permission bits of the file replaced (a report made private stays private); never
  // its set-id bits.
  if (old && ::fchmod(fd, old->st_mode & 0777) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    *error = fmt::format("{}: cannot set the mode of {}: {}", path, tmp, std::strerror(e));
    return false;
  }
  if (!write_and_close(fd, text, true)) {
    *error = fmt::format("{}: cannot write {}: {}", path, tmp, std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = fmt::format("{}: cannot rename {} into place: {}", path, tmp, std::strerror(errno));
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

int standard_stream_fd(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const size_t n = std::strlen(prefix);
    if (path.compare(0, n, prefix) != 0 || path.size() == n || path.size() > n + 9) continue;
    int fd = 0;
    for (size_t i = n; i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9') return -1;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return -1;
}

bool write_standard_stream(std::FILE* stream, const std::string& text, std::string* error) {
  const char* name = stream == stderr ? "standard error" : "standard output";
  errno = 0;
  bool ok = std::fwrite(text.data(), 1, text.size(), stream) == text.size();
  int e = errno;
  if (std::fflush(stream) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) *error = fmt::format("cannot write to {}: {}", name, std::strerror(e ? e : EIO));
  return ok;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
  if (int fd = standard_stream_fd(path); fd >= 0) return write_descriptor(fd, text, error);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return replace_file(path, text, nullptr, error);
    *error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
    return false;
  }
  if (S_ISREG(st.st_mode)) return replace_file(path, text, &st, error);
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, text, error);
  if (S_ISLNK(st.st_mode)) {
    *error = fmt::format(
        "{}: is a symbolic link (to {}): an output is never written through a link; give the "
        "file's own path, or remove the link",
        path, link_target(path));
  } else {
    *error = fmt::format(
        "{}: is {}: not written; give the name of a regular file (or a character device or FIFO)",
        path, what_it_is(st.st_mode));
  }
  return false;
}

namespace {

NewFileStatus write_exclusive_in_place(const std::string& path, const std::string& text,
                                       std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = errno == EEXIST ? fmt::format("{}: exists", path)
                             : fmt::format("{}: cannot create: {}", path, std::strerror(errno));
    return errno == EEXIST ? NewFileStatus::exists : NewFileStatus::failed;
  }
  if (!write_and_close(fd, text, true)) {
    *error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
    ::unlink(path.c_str());
    return NewFileStatus::failed;
  }
  return NewFileStatus::written;
}

}  // namespace

NewFileStatus write_new_file(const std::string& path, const std::string& text,
                             std::string* error) {
  // lstat, not access(): a dangling link is a name taken, not a free one.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    *error = fmt::format("{}: exists", path);
    return NewFileStatus::exists;
  }
  std::string tmp;
  int fd = create_temporary(path, &tmp);
  if (fd < 0) {
    *error = fmt::format("{}: cannot create a temporary file beside it: {}", path, std::strerror(errno));
    return NewFileStatus::failed;
  }
  if (!write_and_close(fd, text, true)) {
    *error = fmt::format("{}: cannot write {}: {}", path, tmp, std::strerror(errno));
    ::unlink(tmp.c_str());
    return NewFileStatus::failed;
  }
  if (::link(tmp.c_str(), path.c_str()) == 0) {
    ::unlink(tmp.c_str());
    return NewFileStatus::written;
  }
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (link_errno == EEXIST) {
    *error = fmt::format("{}: exists", path);
    return NewFileStatus::exists;
  }
  // Filesystems without hard links (vfat, some FUSE and object-store mounts).
  if (link_errno == EPERM || link_errno == ENOTSUP ||
      link_errno == ENOSYS || link_errno == EMLINK)
    return write_exclusive_in_place(path, text, error);
  *error = fmt::format("{}: cannot link {} into place: {}", path, tmp, std::strerror(link_errno));
  return NewFileStatus::failed;
}

}  // namespace denpex
