// Writes an /etc/ld.so.cache in glibc's new-only format ("glibc-ld.so.cache1.1", glibc 2.32+)
// for a tree of another architecture: the host's `ldconfig -r TREE` skips libraries of a
// foreign machine (an x86_64 ldconfig writes no entry for aarch64 files), so the arm64 image
// tests build their cache with this.
//
// usage: mk_ld_cache OUT FLAGS:SONAME=PATH...   (FLAGS: 0x0a03 aarch64, 0x0303 x86_64)
// Entries are written in the order given (ldconfig sorts by name; entries of one name for
// several architectures are then adjacent, as here). Exit 2 on bad use.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void put32(std::string* b, uint32_t v) { b->append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: mk_ld_cache OUT FLAGS:SONAME=PATH...\n");
    return 2;
  }
  struct Entry {
    uint32_t flags;
    std::string name, path;
  };
  std::vector<Entry> entries;
  for (int i = 2; i < argc; ++i) {
    const char* colon = std::strchr(argv[i], ':');
    const char* eq = colon ? std::strchr(colon, '=') : nullptr;
    char* end = nullptr;
    unsigned long flags = std::strtoul(argv[i], &end, 0);
    if (!eq || end != colon) {
      std::fprintf(stderr, "mk_ld_cache: %s: expected FLAGS:SONAME=PATH\n", argv[i]);
      return 2;
    }
    entries.push_back({static_cast<uint32_t>(flags), std::string(colon + 1, eq), std::string(eq + 1)});
  }
  const size_t header = 48, entry = 24;
  const size_t strings_at = header + entries.size() * entry;
  std::string strings;
  std::string table;
  for (const auto& [flags, name, path] : entries) {
    uint32_t key = static_cast<uint32_t>(strings_at + strings.size());
    strings += name;
    strings.push_back('\0');
    uint32_t value = static_cast<uint32_t>(strings_at + strings.size());
    strings += path;
    strings.push_back('\0');
    put32(&table, flags);
    put32(&table, key);
    put32(&table, value);
    put32(&table, 0);  // osversion
    table.append(8, '\0');  // hwcap
  }
  std::string out = "glibc-ld.so.cache1.1";
  put32(&out, static_cast<uint32_t>(entries.size()));
  put32(&out, static_cast<uint32_t>(strings.size()));
  out.push_back(2);  // flags: little-endian (cache_file_new.flags, glibc 2.32+)
  out.append(3, '\0');
  put32(&out, 0);  // extension_offset: none
  out.append(12, '\0');  // unused
  out += table;
  out += strings;
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(out.data(), 1, out.size(), f) != out.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "mk_ld_cache: cannot write %s\n", argv[1]);
    return 2;
  }
  return 0;
}
