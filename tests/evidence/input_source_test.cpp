// open_input / open_decoded on real files: compressed ones made at test time by the real gzip,
// zstd and xz programs, truncated, concatenated, corrupt and bomb-like ones made from them, and
// binary files that must be named as such.
#include "evidence/input_source.h"

#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "evidence/decode.h"
#include "tests/evidence/scratch_dir.h"

namespace denpex::evidence {
namespace {

using test::have_program;
using test::ScratchDir;
using test::sh;

struct ReadAll {
  std::string text;
  bool failed = false;
  std::string error;
};

ReadAll read_all(ByteSource* src, size_t chunk = 4096) {
  ReadAll r;
  std::string buf(chunk, '\0');
  for (;;) {
    long n = src->read(&buf[0], buf.size(), &r.error);
    if (n < 0) {
      r.failed = true;
      return r;
    }
    if (n == 0) return r;
    r.text.append(buf.data(), static_cast<size_t>(n));
  }
}

// A few MB of log-like text with changing numbers, so it does not compress to nothing.
std::string sample_log(int lines) {
  std::string s;
  for (int i = 0; i < lines; ++i)
    s += "node01:1234:1234 [0] NCCL INFO AllReduce: opCount " + std::to_string(i) +
         " sendbuff 0x7f00 recvbuff 0x7f00 count " + std::to_string(i * 7 % 100003) +
         " datatype 7 op 0 root 0 comm 0x55d0 [nranks=8] stream 0x55e0\n";
  return s;
}

void require_programs() {
  for (const char* p : {"gzip", "zstd", "xz", "head", "tar"}) {
    INFO("needs the real " << p << " program (tools/install-deps.sh installs it)");
    REQUIRE(have_program(p));
  }
}

// Compresses `plain` (a file in `dir`) with `tool` ("gzip", "zstd", "xz") into `out`.
std::string compress(const ScratchDir& dir, const std::string& tool, const std::string& plain,
                     const std::string& out) {
  std::string path = dir.file(out);
  REQUIRE(sh(tool + " -c -q '" + dir.file(plain) + "' > '" + path + "'") == 0);
  return path;
}

}  // namespace

TEST_CASE("a plain text log is read as text, whatever its name") {
  ScratchDir dir;
  std::string log = sample_log(100);
  OpenedInput in = open_input(dir.write("rank0.log.gz", log));
  REQUIRE(in.status == OpenedInput::Status::ok);
  CHECK(in.encoding == "text");
  ReadAll r = read_all(in.source.get());
  CHECK_FALSE(r.failed);
  CHECK(r.text == log);
}

TEST_CASE("gzip, zstd and xz logs are decoded by content, not by name") {
  require_programs();
  ScratchDir dir;
  std::string log = sample_log(40000);  // about 5 MB: many input and output buffers
  dir.write("plain", log);
  for (const char* tool : {"gzip", "zstd", "xz"}) {
    SECTION(tool) {
      // Named like a plain log: the name must not matter.
      OpenedInput in = open_input(compress(dir, tool, "plain", "rank0.log"));
      REQUIRE(in.status == OpenedInput::Status::ok);
      CHECK(in.encoding == tool);
      CHECK(in.message.empty());
      ReadAll r = read_all(in.source.get(), 1000);
      INFO(r.error);
      CHECK_FALSE(r.failed);
      CHECK(r.text.size() == log.size());
      CHECK(r.text == log);
    }
  }
}

TEST_CASE("concatenated gzip members, zstd frames and xz streams read as one log") {
  require_programs();
  ScratchDir dir;
  std::string a = sample_log(3000), b = "second part\n" + sample_log(10);
  dir.write("a", a);
  dir.write("b", b);
  for (const char* tool : {"gzip", "zstd", "xz"}) {
    SECTION(tool) {
      std::string t = tool;
      std::string out = dir.file("both");
      REQUIRE(sh(t + " -c -q '" + dir.file("a") + "' > '" + out + "' && " + t + " -c -q '" +
                 dir.file("b") + "' >> '" + out + "'") == 0);
      OpenedInput in = open_input(out);
      REQUIRE(in.status == OpenedInput::Status::ok);
      ReadAll r = read_all(in.source.get());
      INFO(r.error);
      CHECK_FALSE(r.failed);
      CHECK(r.text == a + b);
    }
  }
}

TEST_CASE("a truncated compressed log: the text before the cut is read, then it ends, cut") {
  require_programs();
  ScratchDir dir;
  std::string log = sample_log(40000);
  dir.write("plain", log);
  for (const char* tool : {"gzip", "zstd", "xz"}) {
    SECTION(tool) {
      std::string whole = compress(dir, tool, "plain", "whole");
      std::string cut = dir.file("cut.log");
      REQUIRE(sh("head -c $(( $(stat -c %s '" + whole + "') / 2 )) '" + whole + "' > '" + cut +
                 "'") == 0);
      OpenedInput in = open_input(cut);
      REQUIRE(in.status == OpenedInput::Status::ok);
      ReadAll r = read_all(in.source.get());
      CHECK_FALSE(r.failed);
      InputCut c = in.source->cut();
      INFO(c.message);
      CHECK(c.why == InputCut::Why::damaged);
      CHECK(c.file == cut);
      CHECK(c.message.find(cut) == 0);
      CHECK(c.message.find("truncated") != std::string::npos);
      CHECK(c.message.find("the text before it was read") != std::string::npos);
      // Where: the damage is at the end of what the file holds; the line is the one cut.
      CHECK(c.compressed_offset > 0);
      CHECK(c.decoded_bytes == r.text.size());
      CHECK(c.line == static_cast<uint64_t>(std::count(r.text.begin(), r.text.end(), '\n')) + 1);
      CHECK(c.message.find(fmt::format("line {}", c.line)) != std::string::npos);
      // Roughly the first half (at least a third) was read, and it is the log's own start.
      CHECK(r.text.size() > log.size() / 3);
      CHECK(log.compare(0, r.text.size(), r.text) == 0);
    }
  }
}

TEST_CASE("a compressed file broken from its first bytes is corrupt, and says so") {
  ScratchDir dir;
  // Compression method 7: not deflate.
  std::string junk = std::string("\x1f\x8b\x07\x00", 4) + std::string(100, '\x5a');
  OpenedInput gz = open_input(dir.write("bad.gz", junk));
  CHECK(gz.status == OpenedInput::Status::corrupt);
  CHECK(gz.encoding == "gzip");
  CHECK(gz.message.find(dir.file("bad.gz") + ": gzip-compressed, but corrupt gzip data") == 0);
  CHECK(gz.message.find("gzip -t") != std::string::npos);
  CHECK(gz.cut.why == InputCut::Why::damaged);
  CHECK(gz.cut.decoded_bytes == 0);
  CHECK_FALSE(gz.source);
  std::string zjunk = std::string("\x28\xb5\x2f\xfd", 4) + std::string(50, '\xff');
  OpenedInput zs = open_input(dir.write("bad.zst", zjunk));
  CHECK(zs.status == OpenedInput::Status::corrupt);
  CHECK(zs.message.find("corrupt zstd data") != std::string::npos);
  std::string xjunk = std::string("\xfd" "7zXZ\x00", 6) + std::string(50, '\x01');
  OpenedInput xz = open_input(dir.write("bad.xz", xjunk));
  CHECK(xz.status == OpenedInput::Status::corrupt);
  CHECK(xz.message.find("xz-compressed") != std::string::npos);
}

TEST_CASE("bytes after the last gzip member that are not gzip are named after the text") {
  require_programs();
  ScratchDir dir;
  std::string log = sample_log(100);
  dir.write("plain", log);
  std::string gz = compress(dir, "gzip", "plain", "x.gz");
  REQUIRE(sh("printf 'not gzip' >> '" + gz + "'") == 0);
  OpenedInput in = open_input(gz);
  REQUIRE(in.status == OpenedInput::Status::ok);
  ReadAll r = read_all(in.source.get());
  CHECK(r.text == log);
  CHECK_FALSE(r.failed);
  InputCut c = in.source->cut();
  CHECK(c.why == InputCut::Why::damaged);
  CHECK(c.message.find("bytes that are not gzip follow the end of gzip member 1") !=
        std::string::npos);
  // The garbage starts right after the member.
  CHECK(c.compressed_offset + 8 == static_cast<uint64_t>(std::ifstream(gz, std::ios::binary | std::ios::ate).tellg()));
}

TEST_CASE("a decompression bomb stops at the size limit, with a clear message") {
  require_programs();
  CHECK(DecodeLimits{}.max_decoded_bytes == uint64_t{8} << 30);
  ScratchDir dir;
  // 64 MiB of one repeated line: what a bomb made of text looks like (zstd packs it to a few KB).
  std::string bomb = dir.file("bomb.zst");
  REQUIRE(sh("yes 'NCCL INFO ok' | head -c 67108864 | zstd -q -c > '" + bomb + "'") == 0);
  std::ifstream f(bomb, std::ios::binary);
  std::string packed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(packed.size() < 100000);
  DecodeLimits limits;
  limits.max_decoded_bytes = uint64_t{1} << 20;
  limits.max_ratio = 0;
  OpenedInput in = open_decoded(memory_source(packed), "bomb.zst", limits);
  REQUIRE(in.status == OpenedInput::Status::ok);
  ReadAll r = read_all(in.source.get(), 65536);
  CHECK_FALSE(r.failed);
  CHECK(r.text.size() == limits.max_decoded_bytes);
  InputCut c = in.source->cut();
  INFO(c.message);
  CHECK(c.why == InputCut::Why::size_limit);
  CHECK(c.decoded_bytes == limits.max_decoded_bytes);
  CHECK(c.message.find("bomb.zst: decodes to more than 1 MiB") == 0);
  CHECK(c.message.find("--max-decoded-size") != std::string::npos);
}

TEST_CASE("a decompression bomb stops at the ratio limit past its free bytes") {
  require_programs();
  ScratchDir dir;
  std::string bomb = dir.file("bomb.gz");
  REQUIRE(sh("head -c 67108864 /dev/zero | tr '\\0' '\\n' | gzip -c > '" + bomb + "'") == 0);
  std::ifstream f(bomb, std::ios::binary);
  std::string packed((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  DecodeLimits limits;
  limits.ratio_free_bytes = uint64_t{1} << 20;
  OpenedInput in = open_decoded(memory_source(packed), "bomb.gz", limits);
  REQUIRE(in.status == OpenedInput::Status::ok);
  ReadAll r = read_all(in.source.get(), 65536);
  CHECK_FALSE(r.failed);
  InputCut c = in.source->cut();
  INFO(c.message);
  CHECK(c.why == InputCut::Why::ratio_limit);
  // Cut where the decoded bytes first pass 500 per compressed byte plus the free 1 MiB.
  CHECK(r.text.size() == c.decoded_bytes);
  CHECK(c.decoded_bytes <= c.compressed_offset * 500 + limits.ratio_free_bytes);
  CHECK(c.decoded_bytes < uint64_t{40} << 20);
  CHECK(c.line == c.decoded_bytes + 1);
  CHECK(c.message.find("--max-decoded-ratio") != std::string::npos);
  // Raised past gzip's best ratio, the whole file is read.
  limits.max_ratio = 2000;
  OpenedInput whole = open_decoded(memory_source(packed), "bomb.gz", limits);
  REQUIRE(whole.status == OpenedInput::Status::ok);
  CHECK(read_all(whole.source.get(), 65536).text.size() == size_t{67108864});
  CHECK(whole.source->cut().why == InputCut::Why::none);
}

TEST_CASE("a zstd frame that needs a long window is refused with the command that reads it") {
  require_programs();
  ScratchDir dir;
  std::string z = dir.file("long.zst");
  // From a pipe the size is unknown, so the frame keeps --long=30's 1 GiB window.
  REQUIRE(sh("head -c 100000 /dev/zero | tr '\\0' a | zstd -q --long=30 -c > '" + z + "'") == 0);
  OpenedInput in = open_input(z);
  REQUIRE(in.status == OpenedInput::Status::corrupt);
  CHECK(in.message.find("more than 128 MiB of window") != std::string::npos);
  CHECK(in.message.find("zstd -d --long=31") != std::string::npos);
}

TEST_CASE("binary files are named as such, with what they look like and what to give") {
  require_programs();
  ScratchDir dir;
  SECTION("NUL bytes") {
    std::string p = dir.write("core.log", std::string("abc\0\0\0def", 9));
    OpenedInput in = open_input(p);
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK_FALSE(in.source);
    CHECK(in.message == p + ": binary data (NUL bytes in its first 1 KiB), not a text log: not "
                            "read; give the job's text logs, a Flight Recorder dump, NCCL RAS "
                            "output or a libdenpex-trace.so trace");
  }
  SECTION("control characters without NUL") {
    std::string noise;
    for (int i = 0; i < 4000; ++i) noise += static_cast<char>(1 + i % 30);
    OpenedInput in = open_input(dir.write("noise", noise));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("control characters") != std::string::npos);
  }
  SECTION("an ELF program") {
    REQUIRE(sh("cp /bin/true '" + dir.file("true") + "'") == 0);
    OpenedInput in = open_input(dir.file("true"));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("an ELF program or library, not a log") != std::string::npos);
  }
  SECTION("a zip archive") {
    // A local file header's signature and version, as every zip starts.
    dir.write("logs.zip", std::string("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10) + "inner.log");
    OpenedInput in = open_input(dir.file("logs.zip"));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("a zip archive") != std::string::npos);
    CHECK(in.message.find("unzip -d DIR " + dir.file("logs.zip")) != std::string::npos);
  }
  SECTION("a gzip-compressed tar archive") {
    dir.write("inner.log", sample_log(10));
    REQUIRE(sh("tar -C '" + dir.file("") + "' -czf '" + dir.file("logs.tgz") + "' inner.log") == 0);
    OpenedInput in = open_input(dir.file("logs.tgz"));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.encoding == "gzip");
    CHECK(in.message.find("gzip-compressed a tar archive: unpack it") != std::string::npos);
  }
  SECTION("bzip2, which is not decoded") {
    OpenedInput in = open_input(dir.write("x.bz2", std::string("BZh91AY&SY\x01\x02\x00\x00", 14)));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("bunzip2 -k") != std::string::npos);
  }
  SECTION("UTF-16 text") {
    OpenedInput in = open_input(dir.write("w.log", std::string("\xff\xfeh\0i\0\n\0", 8)));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("iconv -f UTF-16 -t UTF-8") != std::string::npos);
  }
  SECTION("gzip-compressed binary") {
    dir.write("zeros", std::string(5000, '\0'));
    OpenedInput in = open_input(compress(dir, "gzip", "zeros", "zeros.gz"));
    CHECK(in.status == OpenedInput::Status::binary);
    CHECK(in.message.find("gzip-compressed binary data (NUL bytes") != std::string::npos);
  }
}

TEST_CASE("colour codes and Latin-1 bytes keep a log text") {
  ScratchDir dir;
  std::string log = "\x1b[36m(RayWorker pid=12)\x1b[0m NCCL INFO ok\ncaf\xe9 \xc3\xa9t\xc3\xa9\n";
  OpenedInput in = open_input(dir.write("ray.log", log));
  REQUIRE(in.status == OpenedInput::Status::ok);
  CHECK(read_all(in.source.get()).text == log);
}

TEST_CASE("a pickle (a Flight Recorder dump) passes as pickle, compressed or not") {
  require_programs();
  ScratchDir dir;
  // pickle.dumps({'version': '2.4', 'entries': []}, protocol=2), as Python 3.11 writes it.
  std::string p = dir.write(
      "nccl_trace_rank_0",
      std::string("\x80\x02}q\x00(X\x07\x00\x00\x00" "versionq\x01X\x03\x00\x00\x00" "2.4q\x02X"
                  "\x07\x00\x00\x00" "entriesq\x03]q\x04u.", 49));
  OpenedInput in = open_input(p);
  REQUIRE(in.status == OpenedInput::Status::ok);
  CHECK(in.encoding == "pickle");
  ReadAll r = read_all(in.source.get());
  CHECK(r.text.compare(0, 2, "\x80\x02") == 0);
  REQUIRE(sh("gzip -c '" + p + "' > '" + p + ".gz'") == 0);
  OpenedInput gz = open_input(p + ".gz");
  REQUIRE(gz.status == OpenedInput::Status::ok);
  CHECK(gz.encoding == "gzip+pickle");
}

TEST_CASE("missing files, directories and empty files") {
  ScratchDir dir;
  OpenedInput missing = open_input(dir.file("nope.log"));
  CHECK(missing.status == OpenedInput::Status::missing);
  CHECK(missing.message.find(dir.file("nope.log") + ": cannot open") == 0);
  OpenedInput d = open_input(dir.file(""));
  CHECK(d.status == OpenedInput::Status::unreadable);
  CHECK(d.message.find("not a regular file") != std::string::npos);
  OpenedInput empty = open_input(dir.write("empty.log", ""));
  REQUIRE(empty.status == OpenedInput::Status::ok);
  CHECK(read_all(empty.source.get()).text.empty());
}

TEST_CASE("prefixed_source hands back what was looked at, then the rest") {
  auto src = prefixed_source("head ", memory_source("and rest"));
  CHECK(read_all(src.get(), 3).text == "head and rest");
  auto alone = prefixed_source("only", nullptr);
  CHECK(read_all(alone.get()).text == "only");
}

}  // namespace denpex::evidence
