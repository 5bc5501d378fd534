#include "launch/image_env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "compare/bounded_json.h"

namespace denpex {

namespace {

// Notes name entries by position; an image with thousands of bad entries gets a count, not
// thousands of lines.
constexpr size_t kMaxNotes = 5;

void note(ImageEnv* out, size_t* ignored, std::string line) {
  ++*ignored;
  if (out->notes.size() < kMaxNotes) out->notes.push_back(std::move(line));
}

}  // namespace

ImageEnv parse_image_env(const std::string& text) {
  ImageEnv out;
  // Entries are strings: an array nested inside is not an environment entry, and is
  // refused before anything walks it.
  BoundedJson j = parse_bounded_json(text, 2);
  if (j.status == BoundedJsonStatus::invalid) {
    out.error = "not JSON (expected an array of \"NAME=VALUE\" strings)";
    return out;
  }
  if (j.status == BoundedJsonStatus::too_deep || !j.value.is_array()) {
    out.error = "not an array of \"NAME=VALUE\" strings";
    return out;
  }
  size_t ignored = 0, index = 0;
  for (const auto& e : j.value) {
    ++index;
    if (!e.is_string()) {
      note(&out, &ignored, fmt::format("entry {} is a JSON {}, not a \"NAME=VALUE\" string; ignored",
                                       index, e.type_name()));
      continue;
    }
    const std::string& kv = e.get_ref<const std::string&>();
    const size_t eq = kv.find('=');
    if (kv.find('\0') != std::string::npos) {
      note(&out, &ignored, fmt::format("entry {} holds a NUL byte; ignored", index));
    } else if (kv.size() > kMaxImageEnvEntryBytes) {
      note(&out, &ignored,
           fmt::format("entry {} is {} bytes, longer than a process's environment entry can be "
                       "({} KiB); ignored",
                       index, kv.size(), kMaxImageEnvEntryBytes >> 10));
    } else if (eq == std::string::npos || eq == 0) {
      note(&out, &ignored, fmt::format("entry {} is not NAME=VALUE; ignored", index));
    } else {
      out.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  if (ignored > out.notes.size())
    out.notes.push_back(fmt::format("{} more entries ignored", ignored - out.notes.size()));
  out.status = ImageEnvStatus::ok;
  return out;
}

ImageEnv read_image_env(const std::string& path) {
  ImageEnv out;
  out.status = ImageEnvStatus::unreadable;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    out.error = std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    out.error = "not a regular file";
    ::close(fd);
    return out;
  }
  if (static_cast<unsigned long long>(st.st_size) > kMaxImageEnvBytes) {
    out.status = ImageEnvStatus::too_large;
    out.error = fmt::format("{} bytes, more than an image's environment can be ({} MiB)",
                            static_cast<long long>(st.st_size), kMaxImageEnvBytes >> 20);
    ::close(fd);
    return out;
  }
  // Read one byte past the bound: a file that grew after fstat is still refused.
  std::string text(kMaxImageEnvBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, &text[got], text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = std::strerror(errno);
      ::close(fd);
      return out;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > kMaxImageEnvBytes) {
    out.status = ImageEnvStatus::too_large;
    out.error = fmt::format("more than an image's environment can be ({} MiB)",
                            kMaxImageEnvBytes >> 20);
    return out;
  }
  text.resize(got);
  return parse_image_env(text);
}

}  // namespace denpex
