// The one file writer (compare/atomic_file.h): whole files or nothing, and a message naming the
// file when it cannot write.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "compare/atomic_file.h"

using namespace denpex;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "denpex-atomic.XXXXXX").string();
    path = ::mkdtemp(&tmpl[0]);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++n;
  return n;
}

}  // namespace

TEST_CASE("a file is written whole, replaces the old one, and leaves no temporary behind") {
  TempDir d;
  fs::path p = d.path / "report.json";
  std::string error;
  REQUIRE(write_file_atomically(p.string(), "first\n", &error));
  CHECK(slurp(p) == "first\n");
  REQUIRE(write_file_atomically(p.string(), std::string(1 << 20, 'x'), &error));
  CHECK(slurp(p) == std::string(1 << 20, 'x'));
  CHECK(entries(d.path) == 1);
}

TEST_CASE("a file that cannot be created is named, and nothing is left half-written") {
  TempDir d;
  fs::path p = d.path / "no-such-dir" / "report.json";
  std::string error;
  CHECK_FALSE(write_file_atomically(p.string(), "text", &error));
  CHECK(error.find(p.string()) == 0);
  CHECK(error.find("cannot create") != std::string::npos);
  CHECK(entries(d.path) == 0);

  // A directory where the file should go: refused before anything is created.
  fs::create_directories(d.path / "taken" / "inside");
  std::string taken = (d.path / "taken").string();
  CHECK_FALSE(write_file_atomically(taken, "text", &error));
  CHECK(error == taken + ": is a directory: not written; give the name of a regular file (or a "
                         "character device or FIFO)");
  CHECK(entries(d.path) == 1);
  CHECK(entries(d.path / "taken") == 1);
}

TEST_CASE("an output never follows a symbolic link, nor replaces one") {
  TempDir d;
  fs::path victim = d.path / "victim";
  std::ofstream(victim) << "secret\n";
  fs::create_symlink(victim, d.path / "report.json");
  std::string error;
  CHECK_FALSE(write_file_atomically((d.path / "report.json").string(), "report\n", &error));
  CHECK(error.find("report.json: is a symbolic link (to " + victim.string() + ")") != std::string::npos);
  CHECK(error.find("remove the link") != std::string::npos);
  CHECK(slurp(victim) == "secret\n");
  CHECK(fs::is_symlink(d.path / "report.json"));
  // A link to a device is refused too: only the standard streams' names are followed.
  fs::create_symlink("/dev/null", d.path / "null");
  CHECK_FALSE(write_file_atomically((d.path / "null").string(), "x", &error));
  CHECK(fs::is_symlink(d.path / "null"));
  CHECK(entries(d.path) == 3);
}

TEST_CASE("the temporary file has a name no one can place a link at") {
  TempDir d;
  fs::path victim = d.path / "victim";
  std::ofstream(victim) << "secret\n";
  // The name the old writer used (PATH.tmp.PID), planted as a link to the victim.
  const std::string path = (d.path / "report.json").string();
  fs::create_symlink(victim, path + ".tmp." + std::to_string(::getpid()));
  std::string error;
  REQUIRE(write_file_atomically(path, "report\n", &error));
  CHECK(slurp(victim) == "secret\n");
  CHECK(slurp(path) == "report\n");
  fs::remove(path);
  CHECK(write_new_file(path, "record\n", &error) == NewFileStatus::written);
  CHECK(slurp(victim) == "secret\n");
  CHECK(slurp(path) == "record\n");
  CHECK(entries(d.path) == 3);  // victim, the planted link, the file
}

TEST_CASE("a replaced file keeps its permission bits; a new one is 0644 less the umask") {
  TempDir d;
  const std::string path = (d.path / "report.json").string();
  std::string error;
  const mode_t mask = ::umask(022);
  REQUIRE(write_file_atomically(path, "one\n", &error));
  CHECK((fs::status(path).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  REQUIRE(write_file_atomically(path, "two\n", &error));
  CHECK((fs::status(path).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(slurp(path) == "two\n");
  ::umask(mask);
}

TEST_CASE("a FIFO is written through, and one without a reader is an error at once") {
  TempDir d;
  const std::string fifo = (d.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string error;
  CHECK_FALSE(write_file_atomically(fifo, "x", &error));
  CHECK(error == fifo + ": is a FIFO with no reader: start the reader first, or give a file name");
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo);
    got.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  // The reader's open blocks until a writer comes: try until it is there.
  bool ok = false;
  for (int i = 0; i < 200 && !ok; ++i) {
    ok = write_file_atomically(fifo, "through\n", &error);
    if (!ok) ::usleep(10000);
  }
  reader.join();
  CHECK(ok);
  CHECK(got == "through\n");
  CHECK(fs::is_fifo(fifo));
  CHECK(entries(d.path) == 1);
}

TEST_CASE("a character device is written through, never replaced") {
  TempDir d;
  // A node of its own (root only), so that a regression replaces it rather than /dev/null.
  const std::string node = (d.path / "null").string();
  if (::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) {
    WARN("cannot make a device node here (not root, or a nodev mount): /dev/null itself is used");
    std::string error;
    CHECK(write_file_atomically("/dev/null", "x", &error));
    CHECK(fs::is_character_file("/dev/null"));
    return;
  }
  std::string error;
  const bool ok = write_file_atomically(node, "discarded\n", &error);
  if (!ok && error.find("Permission denied") != std::string::npos) {
    WARN("the device node cannot be opened here (a nodev mount)");
  } else {
    CHECK(ok);
  }
  CHECK(fs::is_character_file(node));
  CHECK(entries(d.path) == 1);
}

TEST_CASE("directories, sockets and the standard streams' names") {
  CHECK(standard_stream_fd("-") == 1);
  CHECK(standard_stream_fd("/dev/stdout") == 1);
  CHECK(standard_stream_fd("/dev/stderr") == 2);
  CHECK(standard_stream_fd("/dev/fd/7") == 7);
  CHECK(standard_stream_fd("/proc/self/fd/12") == 12);
  CHECK(standard_stream_fd("/dev/fd/") == -1);
  CHECK(standard_stream_fd("/dev/fd/1x") == -1);
  CHECK(standard_stream_fd("/proc/1/fd/1") == -1);
  CHECK(standard_stream_fd("report.json") == -1);

  // /dev/fd/N is the descriptor this process has open: here a pipe, read back.
  int p[2];
  REQUIRE(::pipe(p) == 0);
  std::string error;
  CHECK(write_file_atomically("/dev/fd/" + std::to_string(p[1]), "piped\n", &error));
  ::close(p[1]);
  char buf[16] = {};
  CHECK(::read(p[0], buf, sizeof buf) == 6);
  CHECK(std::string(buf) == "piped\n");
  ::close(p[0]);

  TempDir d;
  const std::string sock = (d.path / "s").string();
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  CHECK_FALSE(write_file_atomically(sock, "x", &error));
  CHECK(error.find(sock + ": is a socket: not written") == 0);
  ::close(s);
}

TEST_CASE("a standard stream that cannot be written says why") {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (!full) return;
  std::string error;
  CHECK_FALSE(write_standard_stream(full, "text\n", &error));
  CHECK(error == "cannot write to standard output: No space left on device");
  std::fclose(full);
}

TEST_CASE("write_new_file takes a dangling link for a file, and never writes through it") {
  TempDir d;
  const std::string path = (d.path / "r.json").string();
  fs::create_symlink(d.path / "absent", path);
  std::string error;
  CHECK(write_new_file(path, "x", &error) == NewFileStatus::exists);
  CHECK_FALSE(fs::exists(d.path / "absent"));
  CHECK(entries(d.path) == 1);
}

TEST_CASE("write_new_file never replaces a file") {
  char dir[] = "/tmp/denpex-newfile-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/r.json";
  std::string error;
  CHECK(write_new_file(path, "first\n", &error) == NewFileStatus::written);
  CHECK(write_new_file(path, "second\n", &error) == NewFileStatus::exists);
  CHECK(error == path + ": exists");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "first\n");
  CHECK(write_new_file(std::string(dir) + "/no/such/dir/r.json", "x", &error) ==
        NewFileStatus::failed);
  CHECK(error.find("cannot create") != std::string::npos);
  std::remove(path.c_str());
  ::rmdir(dir);
}
