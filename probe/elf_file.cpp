#include "probe/elf_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

#include "probe/fs_view.h"
#include "probe/text.h"

namespace denpex {

const char* to_string(ElfStatus s) {
  switch (s) {
    case ElfStatus::ok: return "ok";
    case ElfStatus::not_found: return "not found";
    case ElfStatus::not_file: return "not a regular file";
    case ElfStatus::io_error: return "unreadable";
    case ElfStatus::not_elf: return "not an ELF file";
    case ElfStatus::truncated: return "truncated ELF file";
    case ElfStatus::unsupported: return "unsupported ELF class";
  }
  return "unknown";
}

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return "ppc64le";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv64";
    case EM_S390: return "s390x";
    default: return "machine " + std::to_string(machine);
  }
}

uint16_t host_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__powerpc64__)
  return EM_PPC64;
#else
  return EM_NONE;
#endif
}

namespace {

// Tables larger than this are treated as corrupt: real dynsym/dynstr of libtorch_cuda.so are a
// few MB.
constexpr uint64_t kMaxTable = 64ull << 20;

// A regular file opened without blocking (fs_view.h open_regular_file): a FIFO or device where
// a library is expected is refused, never waited on.
class File {
 public:
  explicit File(const std::string& path, std::string* error = nullptr, int* err = nullptr)
      : fd_(open_regular_file(path, &st_, error, err)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int fd() const { return fd_; }
  const struct stat& st() const { return st_; }

  // Reads exactly n bytes at off. False on short read or error.
  bool read(uint64_t off, void* buf, uint64_t n) const {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(off));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      p += r;
      off += static_cast<uint64_t>(r);
      n -= static_cast<uint64_t>(r);
    }
    return true;
  }

 private:
  struct stat st_ {};
  int fd_;
};

bool in_file(uint64_t off, uint64_t size, uint64_t file_size) {
  return off <= file_size && size <= file_size - off;
}

// Bytes read from a file, left uninitialized until read: a zero fill would be a second pass
// over tables of many MB.
class Bytes {
 public:
  void resize(size_t n) {
    if (n > cap_) {
      p_.reset(new char[n]);
      cap_ = n;
    }
    n_ = n;
  }
  char* data() { return p_.get(); }
  const char* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  std::unique_ptr<char[]> p_;
  size_t n_ = 0;
  size_t cap_ = 0;
};

std::string string_at(const Bytes& table, uint64_t off) {
  if (off >= table.size()) return "";
  const char* s = table.data() + off;
  size_t max = table.size() - off;
  return std::string(s, strnlen(s, max));
}

struct Sections {
  std::vector<Elf64_Shdr> headers;
};

bool read_sections(const File& f, const Elf64_Ehdr& eh, uint64_t file_size, Sections* out,
                   ElfInfo* info) {
  if (eh.e_shoff == 0 || eh.e_shnum == 0) return true;  // stripped of section headers
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
    info->status = ElfStatus::truncated;
    info->error = "bad section header size";
    return false;
  }
  uint64_t bytes = uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (!in_file(eh.e_shoff, bytes, file_size)) {
    info->status = ElfStatus::truncated;
    info->error = "section headers lie past the end of the file";
    return false;
  }
  out->headers.resize(eh.e_shnum);
  if (!f.read(eh.e_shoff, out->headers.data(), bytes)) {
    info->status = ElfStatus::io_error;
    info->error = "cannot read section headers";
    return false;
  }
  return true;
}

// A table located in the file but not read: the dynamic section names a handful of strings in
// a string table that is 11 MB in libtorch_cuda.so, so each is read where it lies.
struct StringTable {
  uint64_t off = 0;
  uint64_t size = 0;
};

// False when the table is larger than kMaxTable or lies past the end of the file.
bool locate_table(uint64_t off, uint64_t size, uint64_t file_size, StringTable* out) {
  if (size > kMaxTable || !in_file(off, size, file_size)) return false;
  *out = {off, size};
  return true;
}

bool read_table(const File& f, uint64_t off, uint64_t size, uint64_t file_size, Bytes* out) {
  StringTable t;
  if (!locate_table(off, size, file_size, &t)) return false;
  out->resize(size);
  return size == 0 || f.read(off, out->data(), size);
}

// The NUL-terminated string at `at` in the table (cut at the table's end, as string_at does),
// read in growing chunks. False when a read fails.
bool string_in(const File& f, const StringTable& t, uint64_t at, std::string* out) {
  out->clear();
  if (at >= t.size) return true;
  uint64_t chunk = 256;
  for (uint64_t pos = at; pos < t.size; chunk = std::min<uint64_t>(chunk * 2, 1u << 20)) {
    const uint64_t n = std::min(chunk, t.size - pos);
    const size_t old = out->size();
    out->resize(old + n);
    if (!f.read(t.off + pos, &(*out)[old], n)) return false;
    const size_t nul = out->find('\0', old);
    if (nul != std::string::npos) {
      out->resize(nul);
      return true;
    }
    pos += n;
  }
  return true;
}

bool names_string(const Elf64_Dyn& d) {
  return d.d_tag == DT_NEEDED || d.d_tag == DT_SONAME || d.d_tag == DT_RPATH ||
         d.d_tag == DT_RUNPATH;
}

// The strings the dynamic entries name lie close together in the string table: one read of the
// span they start in (when it is at most 64 KiB, plus a page for the last of them) serves them
// all, where one read each was four or five reads per object. A string that runs past the span
// is read alone (string_in).
class DynamicStrings {
 public:
  DynamicStrings(const File& f, const std::vector<Elf64_Dyn>& dyn, const StringTable& t)
      : f_(f), t_(t) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& d : dyn) {
      if (d.d_tag == DT_NULL) break;
      if (!names_string(d) || d.d_un.d_val >= t.size) continue;
      lo = std::min<uint64_t>(lo, d.d_un.d_val);
      hi = std::max<uint64_t>(hi, d.d_un.d_val);
    }
    if (lo > hi || hi - lo > (64u << 10)) return;
    span_.resize(std::min<uint64_t>(hi - lo + 4096, t.size - lo));
    if (f.read(t.off + lo, span_.data(), span_.size())) span_off_ = lo;
    else span_.resize(0);
  }
  // False when a read fails.
  bool at(uint64_t off, std::string* out) const {
    if (off >= span_off_ && off - span_off_ < span_.size()) {
      const char* p = span_.data() + (off - span_off_);
      const size_t left = span_.size() - static_cast<size_t>(off - span_off_);
      if (const void* nul = std::memchr(p, '\0', left)) {
        out->assign(p, static_cast<const char*>(nul));
        return true;
      }
    }
    return string_in(f_, t_, off, out);
  }

 private:
  const File& f_;
  const StringTable& t_;
  Bytes span_;
  uint64_t span_off_ = 0;
};

// NEEDED, SONAME, FLAGS_1, RPATH and RUNPATH from the dynamic entries, their strings read from
// `strtab`. False (io_error) when a string cannot be read.
bool dynamic_entries(const File& f, const std::vector<Elf64_Dyn>& dyn, const StringTable& strtab,
                     ElfInfo* info) {
  const DynamicStrings strings(f, dyn, strtab);
  std::string v;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    if (names_string(d) && !strings.at(d.d_un.d_val, &v)) {
      info->status = ElfStatus::io_error;
      info->error = "cannot read the dynamic string table";
      return false;
    }
    switch (d.d_tag) {
      case DT_NEEDED: info->needed.push_back(v); break;
      case DT_SONAME: info->soname = v; break;
      case DT_FLAGS_1: info->flags_1 = d.d_un.d_val; break;
      case DT_RPATH: info->rpath = split_nonempty(v, ':'); break;
      case DT_RUNPATH:
        info->runpath = split_nonempty(v, ':');
        info->has_runpath = true;
        break;
      default: break;
    }
  }
  return true;
}

// Section headers give the dynamic section and its string table directly; when they are absent
// (stripped objects) the program headers still locate PT_DYNAMIC, and DT_STRTAB is mapped from
// its virtual address through the PT_LOAD segments, as the loader does.
bool read_dynamic(const File& f, const Elf64_Ehdr& eh, const Sections& sec, uint64_t file_size,
                  ElfInfo* info) {
  uint64_t dyn_off = 0, dyn_size = 0;
  StringTable strtab;
  bool have_strtab = false;
  for (const auto& sh : sec.headers) {
    if (sh.sh_type == SHT_DYNAMIC) {
      dyn_off = sh.sh_offset;
      dyn_size = sh.sh_size;
      if (sh.sh_link < sec.headers.size()) {
        const auto& st = sec.headers[sh.sh_link];
        have_strtab = locate_table(st.sh_offset, st.sh_size, file_size, &strtab);
      }
      break;
    }
  }
  std::vector<Elf64_Phdr> phdrs;
  if (dyn_size == 0 && eh.e_phoff && eh.e_phnum && eh.e_phentsize == sizeof(Elf64_Phdr)) {
    uint64_t bytes = uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
    if (!in_file(eh.e_phoff, bytes, file_size)) {
      info->status = ElfStatus::truncated;
      info->error = "program headers lie past the end of the file";
      return false;
    }
    phdrs.resize(eh.e_phnum);
    if (!f.read(eh.e_phoff, phdrs.data(), bytes)) return false;
    for (const auto& ph : phdrs) {
      if (ph.p_type == PT_DYNAMIC) {
        dyn_off = ph.p_offset;
        dyn_size = ph.p_filesz;
      }
    }
  }
  if (dyn_size == 0) return true;  // a static executable or an object without dynamic info
  if (dyn_size > kMaxTable || !in_file(dyn_off, dyn_size, file_size)) {
    info->status = ElfStatus::truncated;
    info->error = "dynamic section lies past the end of the file";
    return false;
  }
  std::vector<Elf64_Dyn> dyn(dyn_size / sizeof(Elf64_Dyn));
  if (!f.read(dyn_off, dyn.data(), dyn.size() * sizeof(Elf64_Dyn))) {
    info->status = ElfStatus::io_error;
    info->error = "cannot read dynamic section";
    return false;
  }
  if (!have_strtab) {
    uint64_t str_vaddr = 0, str_size = 0;
    for (const auto& d : dyn) {
      if (d.d_tag == DT_STRTAB) str_vaddr = d.d_un.d_ptr;
      if (d.d_tag == DT_STRSZ) str_size = d.d_un.d_val;
    }
    for (const auto& ph : phdrs) {
      if (ph.p_type == PT_LOAD && str_vaddr >= ph.p_vaddr &&
          str_vaddr - ph.p_vaddr < ph.p_filesz) {
        have_strtab = locate_table(ph.p_offset + (str_vaddr - ph.p_vaddr), str_size, file_size,
                                   &strtab);
      }
    }
    if (!have_strtab) {
      info->status = ElfStatus::truncated;
      info->error = "dynamic string table not found";
      return false;
    }
  }
  return dynamic_entries(f, dyn, strtab, info);
}

ElfSymbol symbol_of(const Elf64_Sym& s, std::string name) {
  ElfSymbol out;
  out.name = std::move(name);
  out.defined = s.st_shndx != SHN_UNDEF;
  out.weak = ELF64_ST_BIND(s.st_info) == STB_WEAK;
  out.function = ELF64_ST_TYPE(s.st_info) == STT_FUNC;
  return out;
}

Elf64_Sym symbol_at(const Bytes& raw, size_t i) {
  Elf64_Sym s;
  std::memcpy(&s, raw.data() + i * sizeof(Elf64_Sym), sizeof s);
  return s;
}

// Every named symbol, the string table read whole.
bool all_dynsyms(const File& f, const StringTable& t, const Bytes& raw, ElfInfo* info) {
  Bytes strtab;
  strtab.resize(t.size);
  if (t.size > 0 && !f.read(t.off, strtab.data(), t.size)) return false;
  const size_t n = raw.size() / sizeof(Elf64_Sym);
  info->dynsyms.reserve(n);
  for (size_t i = 1; i < n; ++i) {  // entry 0 is the reserved null symbol
    const Elf64_Sym s = symbol_at(raw, i);
    std::string name = string_at(strtab, s.st_name);
    if (!name.empty()) info->dynsyms.push_back(symbol_of(s, std::move(name)));
  }
  return true;
}

struct KeptSymbol {
  uint32_t index;  // in the symbol table
  Elf64_Sym sym;
};

// The symbols a filter can name (a name inside the string table; with `undefined_only` only
// the imports), the table read through one reused 64 KiB buffer: it is 1.1 MB in
// libtorch_cuda.so, where 3,000 of its 48,000 entries are imports. Entry 0, the reserved null
// symbol, is left out. False when a read fails.
bool kept_symbols(const File& f, uint64_t off, uint64_t size, uint64_t table_size,
                  bool undefined_only, std::vector<KeptSymbol>* kept) {
  constexpr uint64_t kChunk = (64u << 10) / sizeof(Elf64_Sym) * sizeof(Elf64_Sym);
  const uint64_t n = size / sizeof(Elf64_Sym);
  Bytes chunk;
  for (uint64_t at = 0; at < n * sizeof(Elf64_Sym); at += kChunk) {
    const uint64_t len = std::min(kChunk, n * sizeof(Elf64_Sym) - at);
    chunk.resize(len);
    if (!f.read(off + at, chunk.data(), len)) return false;
    for (size_t i = 0; i < len / sizeof(Elf64_Sym); ++i) {
      const auto index = static_cast<uint32_t>(at / sizeof(Elf64_Sym) + i);
      const Elf64_Sym s = symbol_at(chunk, i);
      if (index == 0 || s.st_name >= table_size || (undefined_only && s.st_shndx != SHN_UNDEF))
        continue;
      kept->push_back(KeptSymbol{index, s});
    }
  }
  return true;
}

// `kept` grouped by the page of the string table their names start in (a counting sort, table
// order kept within a page): page p is order[first[p] .. first[p + 1]).
void bucket_names(const std::vector<KeptSymbol>& kept, uint64_t table_size, uint64_t page,
                  std::vector<uint32_t>* first, std::vector<KeptSymbol>* order) {
  const size_t pages = static_cast<size_t>((table_size + page - 1) / page);
  first->assign(pages + 1, 0);
  for (const KeptSymbol& k : kept) ++(*first)[k.sym.st_name / page + 1];
  for (size_t p = 0; p < pages; ++p) (*first)[p + 1] += (*first)[p];
  order->resize(kept.size());
  std::vector<uint32_t> next(first->begin(), first->end() - 1);
  for (const KeptSymbol& k : kept) (*order)[next[k.sym.st_name / page]++] = k;
}

// The symbols whose names start with `prefix`, in table order. The string table (11 MB in
// libtorch_cuda.so, for a few dozen nccl* names among 3,000 imports) is read only in the 4 KiB
// pages where a wanted name starts: the imports' names cluster, so that is about 1.4 MB there,
// not the 6.9 MB of the 64 KiB windows holding one. Pages that follow each other are read
// together, up to 64 KiB at a time through one reused buffer; each name's first bytes are
// compared there and only a match is read whole.
bool prefixed_dynsyms(const File& f, const StringTable& t, uint64_t sym_off, uint64_t sym_size,
                      const SymbolFilter& want, ElfInfo* info) {
  const std::string_view prefix = want.prefix;
  constexpr uint64_t kPage = 4u << 10;
  constexpr size_t kMaxRun = 16;
  std::vector<KeptSymbol> kept;
  if (!kept_symbols(f, sym_off, sym_size, t.size, want.undefined_only, &kept)) return false;
  std::vector<uint32_t> first;
  std::vector<KeptSymbol> order;
  bucket_names(kept, t.size, kPage, &first, &order);
  const size_t pages = first.size() - 1;
  std::vector<KeptSymbol> hits;
  Bytes window;
  for (size_t w = 0; w < pages;) {
    if (first[w] == first[w + 1]) {
      ++w;
      continue;
    }
    size_t end = w + 1;  // one past the run of pages with a wanted name
    while (end < pages && end - w < kMaxRun && first[end] != first[end + 1]) ++end;
    const uint64_t base = w * kPage;
    const uint64_t len = std::min<uint64_t>((end - w) * kPage + prefix.size(), t.size - base);
    window.resize(len);
    if (!f.read(t.off + base, window.data(), len)) return false;
    for (uint32_t k = first[w]; k < first[end]; ++k) {
      const uint64_t at = order[k].sym.st_name - base;
      if (at + prefix.size() <= len &&
          (prefix.empty() || (window.data()[at] == prefix[0] &&
                              std::memcmp(window.data() + at, prefix.data(), prefix.size()) == 0)))
        hits.push_back(order[k]);
    }
    w = end;
  }
  std::sort(hits.begin(), hits.end(),
            [](const KeptSymbol& a, const KeptSymbol& b) { return a.index < b.index; });
  std::string name;
  for (const KeptSymbol& h : hits) {
    if (!string_in(f, t, h.sym.st_name, &name)) return false;
    if (!name.empty()) info->dynsyms.push_back(symbol_of(h.sym, name));
  }
  return true;
}

void read_dynsyms(const File& f, const Sections& sec, uint64_t file_size,
                  const SymbolFilter& want, ElfInfo* info) {
  if (sec.headers.empty()) {
    info->dynsyms_error = "it has no section headers (stripped), so its dynamic symbol table "
                          "cannot be located";
    return;
  }
  for (const auto& sh : sec.headers) {
    if (sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_link >= sec.headers.size()) {
      info->dynsyms_error = "its dynamic symbol table names no string table";
      return;
    }
    StringTable strtab;
    const auto& st = sec.headers[sh.sh_link];
    if (!locate_table(st.sh_offset, st.sh_size, file_size, &strtab)) {
      info->dynsyms_error = "its dynamic string table lies past the end of the file";
      return;
    }
    const bool whole = want.prefix.empty() && !want.undefined_only;
    Bytes raw;
    StringTable symtab;
    // A filtered read streams the table (prefixed_dynsyms); the bounds are the same.
    if (whole ? !read_table(f, sh.sh_offset, sh.sh_size, file_size, &raw)
              : !locate_table(sh.sh_offset, sh.sh_size, file_size, &symtab)) {
      info->dynsyms_error = "its dynamic symbol table lies past the end of the file";
      return;
    }
    const bool read = whole ? all_dynsyms(f, strtab, raw, info)
                            : prefixed_dynsyms(f, strtab, symtab.off, symtab.size, want, info);
    if (!read) {
      info->dynsyms.clear();
      info->dynsyms_error = "its dynamic string table cannot be read";
      return;
    }
    info->dynsyms_read = true;
    return;
  }
  info->dynsyms_error = "it has no dynamic symbol table (.dynsym)";
}

}  // namespace

ElfInfo read_elf(const std::string& path, bool symbols, const SymbolFilter& want) {
  ElfInfo info;
  std::string why;
  int err = 0;
  File f(path, &why, &err);
  if (f.fd() < 0) {
    info.error = why;
    if (err == ENOENT || err == ENOTDIR) info.status = ElfStatus::not_found;
    else if (err != 0) info.status = ElfStatus::io_error;
    else info.status = ElfStatus::not_file;  // a directory, FIFO, socket or device
    return info;
  }
  info.file_size = static_cast<uint64_t>(f.st().st_size);
  // One read for the identification, e_type/e_machine and the 64-bit header: a probe reads the
  // headers of some fifty objects.
  Elf64_Ehdr eh{};
  const uint64_t head = std::min<uint64_t>(info.file_size, sizeof eh);
  const unsigned char* ident = eh.e_ident;
  if (info.file_size < EI_NIDENT || !f.read(0, &eh, head) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    info.status = ElfStatus::not_elf;
    info.error = "no ELF magic";
    return info;
  }
  info.elf_class = ident[EI_CLASS];
  // e_type and e_machine sit at the same offsets for both classes, so a 32-bit object can still
  // be named ("built for i386").
  if (info.file_size < 20) {
    info.status = ElfStatus::truncated;
    info.error = "ELF header is cut short";
    return info;
  }
  info.type = eh.e_type;
  info.machine = eh.e_machine;
  info.osabi = ident[EI_OSABI];
  if (ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB) {
    info.status = ElfStatus::unsupported;
    info.error = ident[EI_CLASS] == ELFCLASS32 ? "32-bit ELF" : "big-endian ELF";
    return info;
  }
  if (info.file_size < sizeof eh) {
    info.status = ElfStatus::truncated;
    info.error = "ELF header is cut short";
    return info;
  }
  Sections sec;
  if (!read_sections(f, eh, info.file_size, &sec, &info)) return info;
  if (!read_dynamic(f, eh, sec, info.file_size, &info)) return info;
  if (symbols) read_dynsyms(f, sec, info.file_size, want, &info);
  info.status = ElfStatus::ok;
  return info;
}

namespace {

// Scans [off, off+size) of the file in chunks for needle-prefixed NUL-terminated strings.
// Chunks overlap by 256 bytes so a string that straddles a boundary is still seen whole.
void scan_range(const File& f, uint64_t off, uint64_t size, const std::string& needle,
                std::vector<std::string>* out) {
  constexpr uint64_t kChunk = 4ull << 20;
  constexpr uint64_t kOverlap = 256;
  Bytes buf;
  uint64_t pos = off;
  const uint64_t end = off + size;
  while (pos < end) {
    uint64_t n = std::min(kChunk, end - pos);
    buf.resize(n);
    if (!f.read(pos, buf.data(), n)) return;
    const char* b = buf.data();
    const char* e = b + n;
    for (const char* p = b; (p = static_cast<const char*>(
                                 memmem(p, static_cast<size_t>(e - p), needle.data(),
                                        needle.size()))) != nullptr;
         ++p) {
      // Strings starting in the overlap tail are picked up by the next chunk.
      if (pos + n < end && static_cast<uint64_t>(p - b) >= n - kOverlap) break;
      size_t len = strnlen(p, static_cast<size_t>(std::min<std::ptrdiff_t>(e - p, 256)));
      std::string s(p, len);
      if (std::find(out->begin(), out->end(), s) == out->end()) out->push_back(s);
    }
    if (pos + n >= end) break;
    pos += n - kOverlap;
  }
}

}  // namespace

std::vector<std::string> find_strings(const std::string& path, const std::string& needle,
                                      uint64_t max_scan) {
  std::vector<std::string> out;
  if (needle.empty()) return out;
  File f(path);
  if (f.fd() < 0) return out;
  const uint64_t file_size = static_cast<uint64_t>(f.st().st_size);
  Elf64_Ehdr eh{};
  bool elf64 = file_size >= sizeof eh && f.read(0, &eh, sizeof eh) &&
               std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
               eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr);
  if (elf64 && eh.e_shnum > 0 && eh.e_shstrndx < eh.e_shnum) {
    uint64_t bytes = uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    Bytes names;
    if (in_file(eh.e_shoff, bytes, file_size) && f.read(eh.e_shoff, sh.data(), bytes) &&
        read_table(f, sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size, file_size,
                   &names)) {
      bool any = false;
      for (const auto& s : sh) {
        std::string name = string_at(names, s.sh_name);
        if (s.sh_type != SHT_PROGBITS || name.rfind(".rodata", 0) != 0) continue;
        if (!in_file(s.sh_offset, s.sh_size, file_size)) continue;
        any = true;
        scan_range(f, s.sh_offset, std::min(s.sh_size, max_scan), needle, &out);
      }
      if (any) return out;
    }
  }
  // Not an ELF at all: nothing a loader would map, so nothing to report (and no reason to read
  // a planted multi-GB file).
  if (file_size < SELFMAG || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return out;
  // An ELF without section headers or .rodata (stripped): a bounded scan of the whole file.
  scan_range(f, 0, std::min(file_size, max_scan), needle, &out);
  return out;
}

std::vector<std::string> source_file_symbols(const std::string& path, size_t max) {
  std::vector<std::string> out;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
  File f(path);
  if (f.fd() < 0) return out;
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  Elf64_Ehdr eh{};
  if (file_size < sizeof eh || !f.read(0, &eh, sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return out;
  Sections sec;
  ElfInfo ignored;
  if (!read_sections(f, eh, file_size, &sec, &ignored)) return out;
  for (const auto& s : sec.headers) {
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= sec.headers.size()) continue;
    const Elf64_Shdr& strtab = sec.headers[s.sh_link];
    Bytes strings, symbols;
    // STT_FILE entries are local symbols, which come first: the head of the table suffices.
    uint64_t bytes = std::min<uint64_t>(s.sh_size, 65536 * sizeof(Elf64_Sym));
    bytes -= bytes % sizeof(Elf64_Sym);
    if (!read_table(f, strtab.sh_offset, strtab.sh_size, file_size, &strings) ||
        !read_table(f, s.sh_offset, bytes, file_size, &symbols))
      return out;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= symbols.size(); off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      std::memcpy(&sym, symbols.data() + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FILE) continue;
      std::string name = string_at(strings, sym.st_name);
      if (!name.empty()) out.push_back(name);
      if (out.size() >= max) return out;
    }
    return out;
  }
  return out;
}

}  // namespace denpex
