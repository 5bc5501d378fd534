// compare/shell_command: the one renderer of printed commands. Every rendered command is run
// through the real /bin/sh and bash here, so a quoting mistake shows as a wrong word or a marker
// file, not as a string that merely looks quoted.
#include "compare/shell_command.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using denpex::CommandStatus;
using denpex::ShellCommand;

namespace {

// What `shell -c text` prints on stdout (at most 64 KiB), text run as it would be pasted.
std::string run_in(const std::string& shell, const std::string& text) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execl(shell.c_str(), shell.c_str(), "-c", text.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0 && out.size() < 65536) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("plain words stay as they are; others are single-quoted") {
  CHECK(*denpex::shell_quote("node01") == "node01");
  CHECK(*denpex::shell_quote("node-01.cluster,node02") == "node-01.cluster,node02");
  CHECK(*denpex::shell_quote("/opt/denpex/lib/libdenpex-trace.so") == "/opt/denpex/lib/libdenpex-trace.so");
  CHECK(*denpex::shell_quote("") == "''");
  CHECK(*denpex::shell_quote("a b") == "'a b'");
  CHECK(*denpex::shell_quote("nodeA$(touch /tmp/x)") == "'nodeA$(touch /tmp/x)'");
  CHECK(*denpex::shell_quote("it's") == "'it'\\''s'");
  CHECK(*denpex::shell_quote("~root") == "'~root'");
  CHECK(*denpex::shell_quote("#c") == "'#c'");
  CHECK(*denpex::shell_quote("=ls") == "'=ls'");
  CHECK(*denpex::shell_quote("nvidia-nccl-cu12==2.20.5") == "nvidia-nccl-cu12==2.20.5");
  CHECK(*denpex::shell_quote("nvidia-nccl-cu12>=2.20") == "'nvidia-nccl-cu12>=2.20'");
}

TEST_CASE("a word no quoting makes safe to paste is refused") {
  for (const std::string& w : {std::string("a\nb"), std::string("a\rb"), std::string("a\x1b]0;owned\x07"),
                              std::string("a\0b", 3), std::string("a\x7f"), std::string("a\xc2\x9b" "2J"),
                              std::string("evil\xe2\x80\xae" "gpj.sh"), std::string("bad\xff"), std::string("a\tb")}) {
    INFO(w);
    CHECK_FALSE(denpex::shell_quote(w).has_value());
    ShellCommand c;
    std::string bad;
    CHECK(denpex::make_command({"denpex-probe", "diagnose", w}, &c, &bad) == CommandStatus::unsafe);
    CHECK(c.text.empty());
    CHECK(c.argv.empty());
    CHECK(bad.find('\x1b') == std::string::npos);
  }
  ShellCommand c = denpex::command_or({"mpirun", "-H", "a\nrm -rf ~"}, "the gate on these hosts");
  CHECK(c.argv.empty());
  CHECK(c.text == "the gate on these hosts");
}

TEST_CASE("assignments keep their name unquoted so the shell still reads them as assignments") {
  ShellCommand c;
  REQUIRE(denpex::make_command({"NCCL_DEBUG=INFO", "X=a b", "E=", "prog", "Y=z"}, &c) == CommandStatus::ok);
  CHECK(c.text == "NCCL_DEBUG=INFO X='a b' E= prog Y=z");
  CHECK(run_in("/bin/sh", "X=1; " + denpex::command_or({"X=a b", "sh", "-c", "printf '[%s]' \"$X\""}, "").text) == "[a b]");
}

TEST_CASE("hostile words come back out of /bin/sh and bash as one word each, and run nothing") {
  char dir_template[] = "/tmp/denpex-shell-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template, marker = dir + "/marker";
  const std::vector<std::string> words = {
      "nodeA$(touch " + marker + ")", "`touch " + marker + "`", "a;touch " + marker, "a|touch " + marker,
      "a&&touch " + marker, "a>" + marker, "'; touch " + marker + "; '", "\"$(touch " + marker + ")\"",
      "${IFS}", "$HOME", "*", "?", "[a]", "{a,b}", "~", "#x", "!!", "a\\b", "-rf", "", " ", "h\xc3\xa9llo",
      "\xe4\xb8\xad\xe6\x96\x87"};
  for (const char* shell_path : {"/bin/sh", "/bin/bash"}) {
    const std::string shell = shell_path;
    if (!exists(shell)) continue;
    for (const auto& w : words) {
      INFO(shell << " word: " << w);
      ShellCommand c;
      REQUIRE(denpex::make_command({"printf", "[%s]", w, "end"}, &c) == CommandStatus::ok);
      CHECK(run_in(shell, c.text) == "[" + w + "][end]");
      CHECK_FALSE(exists(marker));
      // The checker's own reading of the text agrees with the shells'.
      auto back = denpex::shell_words(c.text);
      REQUIRE(back.has_value());
      CHECK(*back == c.argv);
    }
  }
  ::rmdir(dir.c_str());
}

TEST_CASE("an authored verify line becomes words; prose with placeholders stays text") {
  ShellCommand c = denpex::authored_command("denpex-probe diagnose -", "/opt/x");
  CHECK(c.argv == std::vector<std::string>{"denpex-probe", "diagnose", "-"});
  CHECK(c.text == "denpex-probe diagnose -");
  c = denpex::authored_command("LD_PRELOAD=@RECORDER@ python3 -c pass", "/my lib/libdenpex-trace.so");
  CHECK(c.argv == std::vector<std::string>{"LD_PRELOAD=/my lib/libdenpex-trace.so", "python3", "-c", "pass"});
  CHECK(c.text == "LD_PRELOAD='/my lib/libdenpex-trace.so' python3 -c pass");
  c = denpex::authored_command("denpex-probe collectives @RECORDER@", "/my dir/lib.so");
  CHECK(c.argv == std::vector<std::string>{"denpex-probe", "collectives", "/my dir/lib.so"});
  CHECK(c.text == "denpex-probe collectives '/my dir/lib.so'");
  c = denpex::authored_command("NCCL_DEBUG=INFO <your launch command>; then denpex-probe diagnose /tmp/nccl.*.log", "/x");
  CHECK(c.argv.empty());
  CHECK(c.text == "NCCL_DEBUG=INFO <your launch command>; then denpex-probe diagnose /tmp/nccl.*.log");
  nlohmann::json j = denpex::command_json(c);
  CHECK(j["argv"].is_null());
}

TEST_CASE("the checker refuses what the renderer never writes") {
  for (const char* t : {"a $(b)", "a `b`", "a; b", "a | b", "a > b", "'open", "\"open", "a *", "a \"$x\""}) {
    INFO(t);
    CHECK_FALSE(denpex::shell_words(t).has_value());
  }
  CHECK(*denpex::shell_words("a 'b c' \"d e\" f\\ g") == std::vector<std::string>{"a", "b c", "d e", "f g"});
}

TEST_CASE("what only the user knows is a variable set on its own line before the command") {
  ShellCommand c;
  REQUIRE(denpex::make_command_with({{"LAUNCH", "torchrun --nproc-per-node=8 train.py"}},
                                    {"NCCL_DEBUG=INFO", "sh", "-c", "$LAUNCH"}, &c) == denpex::CommandStatus::ok);
  CHECK(c.text == "LAUNCH='torchrun --nproc-per-node=8 train.py'\nNCCL_DEBUG=INFO sh -c \"$LAUNCH\"");
  CHECK(c.argv == std::vector<std::string>{"NCCL_DEBUG=INFO", "sh", "-c", "$LAUNCH"});
  nlohmann::json j = denpex::command_json(c);
  CHECK(j["vars"]["LAUNCH"] == "torchrun --nproc-per-node=8 train.py");
  // A value with a quote is quoted as any word; the command line after it reads as its words.
  REQUIRE(denpex::make_command_with({{"DIR", "it's here"}}, {"denpex-probe", "--site-packages", "$DIR"}, &c) ==
          denpex::CommandStatus::ok);
  CHECK(c.text == "DIR='it'\\''s here'\ndenpex-probe --site-packages \"$DIR\"");
  CHECK(*denpex::shell_words(c.text.substr(c.text.find('\n') + 1, c.text.find('"') - c.text.find('\n') - 2)) ==
        std::vector<std::string>{"denpex-probe", "--site-packages"});
  // A reference to a variable not set, a bad name, or a value that cannot be quoted: nothing.
  CHECK(denpex::make_command_with({}, {"echo", "$HOME"}, &c) == denpex::CommandStatus::unsafe);
  CHECK(c.text.empty());
  CHECK(denpex::make_command_with({{"1X", "v"}}, {"echo", "$1X"}, &c) == denpex::CommandStatus::unsafe);
  CHECK(denpex::make_command_with({{"X", "a\x1b[2Jb"}}, {"echo", "$X"}, &c) == denpex::CommandStatus::unsafe);
}
