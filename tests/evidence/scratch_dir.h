// A private directory for one test case, removed with everything in it when the case ends, and
// the shell helpers the evidence tests use to make inputs with real programs.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace denpex::evidence::test {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/denpex-evidence.XXXXXX";
    if (char* made = ::mkdtemp(&tmpl[0])) path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(file(name), std::ios::binary) << bytes;
    return file(name);
  }

 private:
  std::string path_;
};

// Runs `cmd` with /bin/sh; returns its exit status (-1 when it did not exit normally).
inline int sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline bool have_program(const std::string& name) {
  return sh("command -v " + name + " >/dev/null 2>&1") == 0;
}

}  // namespace denpex::evidence::test
