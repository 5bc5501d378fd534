// Helpers shared by the fuzz targets: the readers under test take a path, so the input is put in
// an anonymous memory file (memfd) and handed over as /proc/self/fd/N: no disk traffic, nothing
// left behind, and regular-file semantics (stat size, pread) like a real file.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace denpex_fuzz {

class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size) : fd_(::memfd_create("denpex-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) return;
    size_t done = 0;
    while (done < size) {
      ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace denpex_fuzz

// A directory tree built from fuzz input, for the readers that walk trees (fs_view, the loader):
// regular files, symlinks with any target (absolute, "..", loops: what fs_view must contain) and
// directories, under a private directory made once per process and emptied for each input.
// Names are kept to [a-z0-9._-] components, at most 3 deep, without "..", so building the tree
// never writes outside it; link targets are taken as they come.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace denpex_fuzz {

class FuzzTree {
 public:
  FuzzTree() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/denpex-fuzz.XXXXXX";
    char* made = ::mkdtemp(&tmpl[0]);
    if (!made) std::abort();
    root_ = made;
  }
  ~FuzzTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FuzzTree(const FuzzTree&) = delete;
  FuzzTree& operator=(const FuzzTree&) = delete;

  const std::string& root() const { return root_; }

  // Empties the tree, then adds up to 16 entries taken from `in`.
  void build(FuzzedDataProvider* in) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root_, ec))
      std::filesystem::remove_all(e.path(), ec);
    for (int i = 0; i < 16 && in->remaining_bytes() > 0; ++i) {
      int kind = in->ConsumeIntegralInRange<int>(0, 2);
      std::string rel = safe_name(in->ConsumeRandomLengthString(64));
      std::string body = in->ConsumeRandomLengthString(16384);
      if (rel.empty()) continue;
      std::filesystem::path p = std::filesystem::path(root_) / rel;
      std::filesystem::create_directories(p.parent_path(), ec);
      if (kind == 0) {
        std::ofstream(p, std::ios::binary) << body;
      } else if (kind == 1) {
        std::filesystem::create_symlink(body, p, ec);
      } else {
        std::filesystem::create_directories(p, ec);
      }
    }
  }

 private:
  static std::string safe_name(const std::string& raw) {
    std::string out, comp;
    int depth = 0;
    auto flush = [&]() {
      if (comp.empty() || comp == "." || comp == ".." || depth == 3) {
        comp.clear();
        return;
      }
      out += (out.empty() ? "" : "/") + comp;
      comp.clear();
      ++depth;
    };
    for (char c : raw) {
      if (c == '/') {
        flush();
      } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                 c == '-') {
        comp += c;
      }
    }
    flush();
    return out;
  }

  std::string root_;
};

// True when `host` (an existing path) really lies inside `root`, by the kernel's resolution.
inline bool really_inside(const std::string& root, const std::string& host) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(host, ec);
  if (ec) return true;  // gone or unreadable: nothing was escaped to
  std::string r = std::filesystem::canonical(root, ec).string();
  std::string s = real.string();
  return s == r || s.compare(0, r.size() + 1, r + "/") == 0;
}

}  // namespace denpex_fuzz
