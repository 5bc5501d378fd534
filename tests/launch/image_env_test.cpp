#include "launch/image_env.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

using namespace denpex;

TEST_CASE("parse_image_env: NAME=VALUE strings as the image config holds them") {
  ImageEnv e = parse_image_env(
      R"(["PATH=/usr/bin:/bin", "LD_AUDIT=/x/audit.so", "EMPTY=", "EQ=a=b", "PATH=/opt/bin"])");
  REQUIRE(e.status == ImageEnvStatus::ok);
  CHECK(e.env.size() == 4);
  CHECK(e.env["PATH"] == "/opt/bin");  // the later entry wins, as with env(1)
  CHECK(e.env["LD_AUDIT"] == "/x/audit.so");
  CHECK(e.env["EMPTY"].empty());
  CHECK(e.env["EQ"] == "a=b");
  CHECK(e.notes.empty());
  CHECK(parse_image_env("[]").status == ImageEnvStatus::ok);
}

TEST_CASE("parse_image_env: entries that are no environment entry are ignored with a note") {
  ImageEnv e = parse_image_env(R"(["A=1", 5, "N=a\u0000b", "NOEQ", "=v", null])");
  REQUIRE(e.status == ImageEnvStatus::ok);
  CHECK(e.env.size() == 1);
  CHECK(e.env["A"] == "1");
  REQUIRE(e.notes.size() == 5);
  CHECK(e.notes[0] == "entry 2 is a JSON number, not a \"NAME=VALUE\" string; ignored");
  CHECK(e.notes[1] == "entry 3 holds a NUL byte; ignored");
  CHECK(e.notes[2] == "entry 4 is not NAME=VALUE; ignored");
  CHECK(e.notes[3] == "entry 5 is not NAME=VALUE; ignored");
  CHECK(e.notes[4] == "entry 6 is a JSON null, not a \"NAME=VALUE\" string; ignored");
  // Thousands of bad entries: a few lines and a count.
  std::string many = "[";
  for (int i = 0; i < 1000; ++i) many += "1,";
  many += "\"B=2\"]";
  ImageEnv m = parse_image_env(many);
  REQUIRE(m.status == ImageEnvStatus::ok);
  CHECK(m.env.size() == 1);
  CHECK(m.notes.size() == 6);
  CHECK(m.notes.back() == "995 more entries ignored");
  ImageEnv big = parse_image_env("[\"X=" + std::string(kMaxImageEnvEntryBytes, 'a') + "\"]");
  REQUIRE(big.status == ImageEnvStatus::ok);
  CHECK(big.env.empty());
  REQUIRE(big.notes.size() == 1);
}

TEST_CASE("parse_image_env: not an array of strings is malformed") {
  CHECK(parse_image_env("").status == ImageEnvStatus::malformed);
  CHECK(parse_image_env("{\"Env\": []}").status == ImageEnvStatus::malformed);
  CHECK(parse_image_env("\"PATH=/bin\"").status == ImageEnvStatus::malformed);
  CHECK(parse_image_env("[\"A=1\"").status == ImageEnvStatus::malformed);
  CHECK(parse_image_env("[[\"A=1\"]]").status == ImageEnvStatus::ok);      // an array entry: ignored
  CHECK(parse_image_env("[[[\"A=1\"]]]").status == ImageEnvStatus::malformed);  // nested deeper
  CHECK(!parse_image_env("{}").error.empty());
}

TEST_CASE("read_image_env: a regular file of bounded size") {
  char dir[] = "/tmp/image-env-test.XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string d = dir;
  auto write = [](const std::string& p, const std::string& text) {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  };
  write(d + "/ok.json", R"(["PATH=/bin"])");
  ImageEnv ok = read_image_env(d + "/ok.json");
  REQUIRE(ok.status == ImageEnvStatus::ok);
  CHECK(ok.env.at("PATH") == "/bin");

  write(d + "/huge.json", std::string(kMaxImageEnvBytes + 1, ' '));
  ImageEnv huge = read_image_env(d + "/huge.json");
  CHECK(huge.status == ImageEnvStatus::too_large);
  CHECK(huge.error.find("more than an image's environment can be (4 MiB)") != std::string::npos);

  REQUIRE(::mkfifo((d + "/fifo").c_str(), 0600) == 0);
  ImageEnv fifo = read_image_env(d + "/fifo");  // would block forever if waited on
  CHECK(fifo.status == ImageEnvStatus::unreadable);
  CHECK(fifo.error == "not a regular file");
  CHECK(read_image_env(d + "/missing").status == ImageEnvStatus::unreadable);
  CHECK(read_image_env(d).status == ImageEnvStatus::unreadable);

  for (const char* f : {"/ok.json", "/huge.json", "/fifo"}) ::unlink((d + f).c_str());
  ::rmdir(dir);
}
