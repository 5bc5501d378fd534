#include <catch2/catch.hpp>

#include <elf.h>
#include <link.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "probe/elf_file.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

TEST_CASE("read_elf reads soname, needed, rpath and imports of a stand-in libtorch_cuda.so") {
  ElfInfo e = read_elf(standin("torch-dyn-reg/libtorch_cuda.so"), true);
  REQUIRE(e.status == ElfStatus::ok);
  CHECK(e.machine == host_machine());  // the stand-ins are built for this machine
  CHECK(e.soname == "libtorch_cuda.so");
  // libc.so.6 is there or not by the compiler's choice (clang's code calls into libc where GCC's
  // does not); the stand-in's own dependency is the one under test.
  std::vector<std::string> needed = e.needed;
  needed.erase(std::remove(needed.begin(), needed.end(), "libc.so.6"), needed.end());
  CHECK(needed == std::vector<std::string>{"libnccl.so.2"});
  CHECK(e.rpath == std::vector<std::string>{"$ORIGIN/../../nvidia/nccl/lib"});
  CHECK_FALSE(e.has_runpath);
  bool imports_register = false;
  for (const auto& s : e.dynsyms)
    if (s.name == "ncclCommRegister") imports_register = !s.defined;
  CHECK(imports_register);
}

namespace {

// The symbols of a whole read that a filter names, in table order.
std::vector<std::string> filtered(const ElfInfo& all, const SymbolFilter& want) {
  std::vector<std::string> out;
  for (const auto& s : all.dynsyms)
    if (s.name.rfind(want.prefix, 0) == 0 && (!want.undefined_only || !s.defined))
      out.push_back(s.name + (s.defined ? " D" : " U") + (s.weak ? "W" : "") +
                    (s.function ? "F" : ""));
  return out;
}

std::vector<std::string> described(const ElfInfo& e) { return filtered(e, SymbolFilter{}); }

}  // namespace

TEST_CASE("a filtered read of the dynamic symbols keeps exactly what a whole read would") {
  // The stand-in and this test program itself: one imports nccl* names, the other a few
  // thousand C++ names across a string table of many windows.
  // The shared libraries this program runs with (libstdc++, libc, ...) are the distribution's
  // own, linked by its linker: an imports-only read bounds them by .gnu.hash's symoffset.
  char self[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(n > 0);
  std::vector<std::string> paths = {standin("torch-dyn-reg/libtorch_cuda.so"), std::string(self)};
  ::dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find(".so") != std::string::npos && name.find("vdso") == std::string::npos)
          static_cast<std::vector<std::string>*>(out)->push_back(name);
        return 0;
      },
      &paths);
  CHECK(paths.size() > 3);
  for (const std::string& path : paths) {
    INFO(path);
    const ElfInfo all = read_elf(path, true);
    REQUIRE(all.dynsyms_read);
    for (const SymbolFilter& want : {SymbolFilter{"nccl", false}, SymbolFilter{"nccl", true},
                                    SymbolFilter{"_ZN", false}, SymbolFilter{"_ZN", true},
                                    SymbolFilter{"", true}, SymbolFilter{"no such name", false}}) {
      INFO(std::string(want.prefix) << (want.undefined_only ? " (imports)" : ""));
      const ElfInfo some = read_elf(path, true, want);
      CHECK(some.dynsyms_read);
      CHECK(some.needed == all.needed);
      CHECK(some.soname == all.soname);
      CHECK(described(some) == filtered(all, want));
    }
  }
  CHECK_FALSE(filtered(read_elf(standin("torch-dyn-reg/libtorch_cuda.so"), true),
                       SymbolFilter{"nccl", true})
                  .empty());
}

TEST_CASE("read_elf on the real NCCL reads its soname and exports without reading 218 MB", "[real-nccl]") {
  std::string nccl = real_nccl();
  REQUIRE_FALSE(nccl.empty());  // run only where the loader cache has one (tests/run_catch.sh)
  ElfInfo e = read_elf(nccl, true);
  REQUIRE(e.status == ElfStatus::ok);
  CHECK(e.soname == "libnccl.so.2");
  bool exports = false;
  for (const auto& s : e.dynsyms)
    if (s.name == "ncclCommRegister" && s.defined) exports = true;
  CHECK(exports);
}

TEST_CASE("read_elf names what is wrong with a file that is not a library") {
  Scratch s;
  CHECK(read_elf(s.path("nope"), false).status == ElfStatus::not_found);
  CHECK(read_elf(s.dir(), false).status == ElfStatus::not_file);
  CHECK(read_elf(s.write("text", "hello world, not an ELF at all"), false).status ==
        ElfStatus::not_elf);
  CHECK(read_elf(s.write("empty", ""), false).status == ElfStatus::not_elf);

  // The first 8 KiB of a real library: the header is there, the tables it points to are not.
  std::ifstream in(standin("nccl-2.21.5/libnccl.so.2.21.5"), std::ios::binary);
  std::string head(2048, '\0');
  in.read(&head[0], 2048);
  ElfInfo cut = read_elf(s.write("cut.so", head), false);
  CHECK(cut.status == ElfStatus::truncated);
}

TEST_CASE("read_elf reports the machine of a library built for another architecture") {
  Scratch s;
  std::string p = s.copy(standin("nccl-2.21.5/libnccl.so.2.21.5"), "arm/libnccl.so.2");
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    uint16_t aarch64 = EM_AARCH64;
    f.seekp(18);
    f.write(reinterpret_cast<const char*>(&aarch64), 2);
  }
  ElfInfo e = read_elf(p, false);
  REQUIRE(e.status == ElfStatus::ok);
  CHECK(machine_name(e.machine) == "aarch64");
}

TEST_CASE("find_strings finds the version literal in .rodata") {
  auto found = find_strings(standin("nccl-2.8.4/libnccl.so.2.8.4"), "NCCL version ");
  REQUIRE(found.size() == 1);
  CHECK(found[0] == "NCCL version 2.8.4+cuda11.2");
  Scratch s;
  // A stripped ELF (no section headers) is scanned whole, and a literal spanning the 4 MiB
  // chunks is found whole.
  std::string blob(5u << 20, 'x');
  blob.replace(0, 64, std::string("\x7f" "ELF\x02\x01\x01") + std::string(57, '\0'));
  const std::string lit = "NCCL version 2.19.3+cuda12.2";
  blob.replace((4u << 20) - 10, lit.size() + 1, lit + std::string(1, '\0'));
  auto in_blob = find_strings(s.write("blob", blob), "NCCL version ");
  REQUIRE(in_blob.size() == 1);
  CHECK(in_blob[0] == lit);
  // Not an ELF at all: nothing is searched.
  blob.replace(0, 4, "junk");
  CHECK(find_strings(s.write("junk", blob), "NCCL version ").empty());
}

// A FIFO is refused by the open itself (stat() then open() would block in the open).
TEST_CASE("read_elf and find_strings refuse a FIFO without blocking") {
  Scratch s;
  std::string fifo = s.path("libnccl.so.2");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  ElfInfo e = read_elf(fifo, true);
  CHECK(e.status == ElfStatus::not_file);
  CHECK(e.error == "is a FIFO (named pipe), not a regular file");
  CHECK(find_strings(fifo, "NCCL version ").empty());
}

// A symbol table that cannot be read is said to be unreadable, so nothing
// counts its (absent) symbols as missing.
TEST_CASE("a library without section headers loads but its dynamic symbols cannot be read") {
  Scratch s;
  std::string lib = s.copy(standin("nccl-2.27.3/libnccl.so.2.27.3"), "libnccl.so.2");
  ElfInfo intact = read_elf(lib, true);
  REQUIRE(intact.status == ElfStatus::ok);
  CHECK(intact.dynsyms_read);
  CHECK(intact.dynsyms_error.empty());
  {
    std::fstream f(lib, std::ios::in | std::ios::out | std::ios::binary);
    const char zeros[8] = {};
    f.seekp(40);  // e_shoff
    f.write(zeros, 8);
    f.seekp(60);  // e_shnum, e_shstrndx
    f.write(zeros, 4);
  }
  ElfInfo stripped = read_elf(lib, true);
  REQUIRE(stripped.status == ElfStatus::ok);
  CHECK(stripped.soname == "libnccl.so.2");  // the dynamic section is still found
  CHECK_FALSE(stripped.dynsyms_read);
  CHECK(stripped.dynsyms.empty());
  CHECK(stripped.dynsyms_error.find("no section headers") != std::string::npos);
}
