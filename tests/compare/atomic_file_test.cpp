// The one file writer (compare/atomic_file.h): whole files or nothing, and a message naming the
// file when it cannot write.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

  // A directory where the file should go: the rename fails, the temporary goes.
  fs::create_directories(d.path / "taken" / "inside");
  std::string taken = (d.path / "taken").string();
  CHECK_FALSE(write_file_atomically(taken, "text", &error));
  CHECK(error.find("cannot rename") != std::string::npos);
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
