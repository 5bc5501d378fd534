// Reading what the loader would read from an ELF shared object, without loading it: class and
// machine, the dynamic section (SONAME, NEEDED, RPATH, RUNPATH), the dynamic symbol table, and
// the contents of a named section. Every read is bounded by the file size and by explicit caps,
// so a truncated, hostile or 200 MB file costs at most a few reads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace denpex {

// ok          parsed; every field below is valid
// not_found   the path does not exist (or is a dangling symlink)
// not_file    a directory, device or other non-regular file
// io_error    open/read failed for another reason (permissions...); `error` has errno text
// not_elf     no ELF magic: random bytes, a text file, a linker script
// truncated   ELF header or tables point past the end of the file
// unsupported a 32-bit or big-endian ELF (the probe only reads 64-bit little-endian objects)
enum class ElfStatus { ok, not_found, not_file, io_error, not_elf, truncated, unsupported };

const char* to_string(ElfStatus s);

struct ElfSymbol {
  std::string name;
  bool defined = false;   // st_shndx != SHN_UNDEF
  bool weak = false;
  bool function = false;
};

struct ElfInfo {
  ElfStatus status = ElfStatus::not_found;
  std::string error;                 // for io_error/truncated: what failed
  uint16_t machine = 0;              // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183)
  uint8_t elf_class = 0;             // 1 = 32-bit, 2 = 64-bit
  uint16_t type = 0;                 // e_type (ET_DYN = 3)
  uint64_t file_size = 0;
  std::string soname;
  std::vector<std::string> needed;
  std::vector<std::string> rpath;    // DT_RPATH split on ':', unexpanded ($ORIGIN kept)
  std::vector<std::string> runpath;  // DT_RUNPATH split on ':', unexpanded
  bool has_runpath = false;
  uint8_t osabi = 0;                 // e_ident[EI_OSABI] (ld.so accepts SYSV 0 and GNU 3)
  uint64_t flags_1 = 0;              // DT_FLAGS_1 (DF_1_NODEFLIB, DF_1_PIE), 0 when absent
  std::vector<ElfSymbol> dynsyms;    // only when read with symbols=true
  // With symbols=true: whether the dynamic symbol table was found and read. False with
  // `dynsyms_error` when it could not be (no section headers, a table past the end of the
  // file): `dynsyms` then says nothing about what the object exports or imports.
  bool dynsyms_read = false;
  std::string dynsyms_error;
};

// Machine name for messages: "x86_64", "aarch64", "ppc64le", or "machine 1234".
std::string machine_name(uint16_t machine);

// The e_machine of the running program's architecture.
uint16_t host_machine();

// Which dynamic symbols read_elf keeps: those whose names start with `prefix` (every name when
// empty), and with `undefined_only` only those the object imports. The NCCL ABI check wants the
// nccl* imports of a library that has tens of thousands of symbols; only the names that can
// match are then read.
struct SymbolFilter {
  std::string_view prefix;
  bool undefined_only = false;
};

// Reads headers, the dynamic section, and (when `symbols`) the dynamic symbol table of `path`,
// keeping the symbols `want` names (dynsyms_read still says whether the whole table was read).
// Never throws; failure is in the returned status (an unreadable symbol table alone leaves the
// status ok and sets dynsyms_read = false). Follows symlinks (callers resolve first when
// that matters).
ElfInfo read_elf(const std::string& path, bool symbols, const SymbolFilter& want = {});

// Searches the read-only data of `path` for every occurrence of `needle` and returns the
// NUL-terminated strings that start with it (each capped at 256 bytes). Looks in .rodata (and
// .rodata.*) when section headers exist; otherwise (a stripped ELF) in the whole file, up to
// `max_scan` bytes. Returns an empty vector when the file is unreadable, is not an ELF, or has
// no such string.
std::vector<std::string> find_strings(const std::string& path, const std::string& needle,
                                      uint64_t max_scan = 512ull << 20);

// The source file names a linker kept in the full symbol table (.symtab STT_FILE entries, e.g.
// "stub.c"), at most `max` of them. Empty when the file is unreadable, not a 64-bit ELF, or
// stripped of .symtab (release builds of real libraries usually are).
std::vector<std::string> source_file_symbols(const std::string& path, size_t max = 256);

}  // namespace denpex
