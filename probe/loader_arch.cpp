#include "probe/loader_arch.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <fmt/format.h>

#include "probe/elf_file.h"

namespace denpex {

LoaderArch loader_arch_for(uint16_t machine) {
  LoaderArch a;
  a.machine = machine;
  a.name = machine_name(machine);
  switch (machine) {
    case EM_X86_64:
      a.supported = true;
      a.cache_flags = 0x0303;  // FLAG_X8664_LIB64 | FLAG_ELF_LIBC6
      a.triplet = "x86_64-linux-gnu";
      a.platform = "x86_64";
      a.ldso_paths = {"/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                      "/usr/lib64/ld-linux-x86-64.so.2"};
      // glibc 2.33+ sysdeps/x86_64/dl-hwcaps-subdirs.c, most capable first.
      a.hwcaps = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
      break;
    case EM_AARCH64:
      a.supported = true;
      a.cache_flags = 0x0a03;  // FLAG_AARCH64_LIB64 | FLAG_ELF_LIBC6
      a.triplet = "aarch64-linux-gnu";
      a.platform = "aarch64";
      a.ldso_paths = {"/lib/ld-linux-aarch64.so.1", "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
                      "/usr/lib/ld-linux-aarch64.so.1", "/lib64/ld-linux-aarch64.so.1"};
      // glibc's generic dl-hwcaps-subdirs.c: aarch64 has no glibc-hwcaps subdirectories.
      break;
    default: break;
  }
  return a;
}

uint16_t machine_for_arch_name(const std::string& name) {
  if (name == "x86_64" || name == "amd64") return EM_X86_64;
  if (name == "aarch64" || name == "arm64") return EM_AARCH64;
  return 0;
}

namespace {

// A directory entry of glibc's SYSTEM_DIRS: absolute, ends in '/', names a lib directory.
bool looks_like_system_dir(const char* s, size_t n) {
  if (n < 5 || s[0] != '/' || s[n - 1] != '/') return false;
  bool has_lib = false;
  for (size_t i = 0; i < n; ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '/' || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
    if (i + 3 <= n && s[i] == 'l' && s[i + 1] == 'i' && s[i + 2] == 'b') has_lib = true;
  }
  return has_lib;
}

// ld.so's built-in directory list in the bytes `b` of its binary (see ldso_builtin_dirs).
std::vector<std::string> builtin_dirs_in(const std::string& b) {
  // The first run of at least two such strings, each NUL-terminated and right after a NUL.
  // find() jumps between slashes (memchr): a byte-by-byte loop over ld.so's 200 KB was a
  // visible share of every probe.
  for (size_t i = b.find('/', 1); i != std::string::npos; i = b.find('/', i + 1)) {
    if (b[i - 1] != '\0') continue;
    std::vector<std::string> run;
    size_t p = i;
    while (p < b.size() && b[p] == '/') {
      size_t end = b.find('\0', p);
      if (end == std::string::npos || !looks_like_system_dir(b.data() + p, end - p)) break;
      run.push_back(b.substr(p, end - p - 1));
      p = end + 1;
    }
    if (run.size() >= 2) return run;
  }
  return {};
}

}  // namespace

LdsoFacts read_ldso(const std::string& host_file) {
  constexpr off_t kMax = 16 << 20;
  LdsoFacts f;
  int fd = ::open(host_file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return f;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMax) {
    ::close(fd);
    return f;
  }
  std::string b(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < b.size()) {
    ssize_t n = ::read(fd, &b[got], b.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  b.resize(got);
  f.read = true;
  f.has_glibc_hwcaps = b.find("glibc-hwcaps") != std::string::npos;
  if (st.st_size >= 64) f.builtin_dirs = builtin_dirs_in(b);
  return f;
}

std::vector<std::string> ldso_builtin_dirs(const std::string& host_file) {
  return read_ldso(host_file).builtin_dirs;
}


SystemDirs system_dirs_for(const FsView& fs, const LoaderArch& arch) {
  SystemDirs s;
  for (const auto& ldso : arch.ldso_paths) {
    Resolved r = resolve(fs, ldso);
    if (r.status != ResolveStatus::ok) continue;
    LdsoFacts facts = read_ldso(host_path(fs, r.path));
    s.dirs = std::move(facts.builtin_dirs);
    if (!s.dirs.empty()) {
      s.from = ldso;
      s.glibc_hwcaps_possible = facts.has_glibc_hwcaps;
      break;
    }
  }
  if (s.dirs.empty()) {
    // glibc's defaults: Debian/Ubuntu build with the multiarch list, everyone else with lib64.
    Resolved multi = resolve(fs, "/usr/lib/" + arch.triplet);
    if (!arch.triplet.empty() && multi.status == ResolveStatus::ok)
      s.dirs = {"/lib/" + arch.triplet, "/usr/lib/" + arch.triplet, "/lib", "/usr/lib"};
    else
      s.dirs = {"/lib64", "/usr/lib64"};
    s.from = fmt::format("default for {} (no ld.so readable in the tree)", arch.name);
  }
  // $LIB is the first system directory's library part (glibc: DL_DST_LIB from slibdir).
  const std::string& first = s.dirs.front();
  s.dst_lib = first.size() > 1 && first[0] == '/' ? first.substr(1) : first;
  return s;
}

const char* to_string(TreeArchStatus s) {
  switch (s) {
    case TreeArchStatus::ok: return "ok";
    case TreeArchStatus::unknown: return "unknown";
    case TreeArchStatus::conflict: return "conflict";
    case TreeArchStatus::unsupported: return "unsupported";
    case TreeArchStatus::bad_name: return "bad-name";
  }
  return "?";
}

namespace {

// The machine of the ELF at view path `p`, 0 when it is absent or no ELF.
uint16_t elf_machine_at(const FsView& fs, const std::string& p) {
  Resolved r = resolve(fs, p);
  if (r.status != ResolveStatus::ok) return 0;
  ElfInfo e = read_elf(host_path(fs, r.path), false);
  if (e.status != ElfStatus::ok && e.status != ElfStatus::unsupported) return 0;
  return e.machine;
}

}  // namespace

TreeArch decide_tree_arch(const FsView& fs, const std::string& declared) {
  TreeArch t;
  uint16_t want = 0;
  if (!declared.empty()) {
    want = machine_for_arch_name(declared);
    if (want == 0) {
      t.status = TreeArchStatus::bad_name;
      t.error = fmt::format("--arch {}: not an architecture denpex-probe knows (use amd64/x86_64 "
                            "or arm64/aarch64)", declared);
      return t;
    }
  }
  uint16_t found = 0;
  std::string found_at;
  if (fs.root.empty() || fs.root == "/") {
    found = host_machine();
    found_at = "this system";
  } else {
    // The tree's dynamic loader, of whichever machine; /bin/sh decides when loaders disagree.
    std::vector<std::pair<uint16_t, std::string>> loaders;
    for (uint16_t m : {uint16_t(EM_X86_64), uint16_t(EM_AARCH64)})
      for (const auto& p : loader_arch_for(m).ldso_paths)
        if (uint16_t got = elf_machine_at(fs, p)) {
          loaders.emplace_back(got, p);
          break;
        }
    uint16_t sh = elf_machine_at(fs, "/bin/sh");
    if (loaders.size() == 1) {
      found = loaders[0].first;
      found_at = loaders[0].second;
    } else if (sh != 0) {
      found = sh;
      found_at = "/bin/sh";
    } else if (!loaders.empty()) {
      t.status = TreeArchStatus::unknown;
      t.error = fmt::format("the tree has dynamic loaders for {} ({}) and {} ({}) and no ELF "
                            "/bin/sh: pass --arch",
                            machine_name(loaders[0].first), loaders[0].second,
                            machine_name(loaders[1].first), loaders[1].second);
      if (want == 0) return t;
    }
  }
  if (want != 0 && found != 0 && want != found) {
    t.status = TreeArchStatus::conflict;
    t.error = fmt::format("the image is declared {} (--arch {}) but {} is built for {}: the "
                          "image config and its files disagree",
                          machine_name(want), declared, found_at, machine_name(found));
    return t;
  }
  t.machine = want != 0 ? want : found;
  t.source = want != 0 ? "--arch" : found_at;
  if (t.machine == 0) {
    t.status = TreeArchStatus::unknown;
    t.error = "no dynamic loader (ld-linux-*.so.*) and no ELF /bin/sh in the tree: its "
              "architecture is unknown; pass --arch (amd64 or arm64)";
    return t;
  }
  t.name = machine_name(t.machine);
  if (!loader_arch_for(t.machine).supported) {
    t.status = TreeArchStatus::unsupported;
    t.error = fmt::format("{} is built for {}: denpex-probe knows the loader rules of x86_64 and "
                          "aarch64 only", t.source, t.name);
    return t;
  }
  t.status = TreeArchStatus::ok;
  t.error.clear();
  return t;
}

}  // namespace denpex
