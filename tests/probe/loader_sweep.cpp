// The loader emulation against the real ld.so for every ELF object in this
// system's library and program directories. For each object ld.so accepts (`ld.so --list FILE`,
// run with no LD_LIBRARY_PATH/LD_PRELOAD), each of its own DT_NEEDED entries must resolve to the
// same file in the emulation (resolve_library with the object as the requester). Objects ld.so
// refuses ("not a dynamic executable", static programs) are passed over and counted.
//
// usage: loader_sweep [MAX_OBJECTS] DIR...   exit 0 all agree, 1 a disagreement (listed), 2 no
// ld.so found or nothing compared.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "probe/elf_file.h"
#include "probe/loader.h"
#include "probe/loader_arch.h"

using namespace denpex;

namespace {

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// `ld.so --list file` output: "name => path (addr)", "name => not found". False when ld.so
// refused the file.
bool ldso_list(const std::string& ldso, const std::string& file,
               std::map<std::string, std::string>* out) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);
    ::close(fds[0]);
    char* const argv[] = {const_cast<char*>(ldso.c_str()), const_cast<char*>("--list"),
                          const_cast<char*>(file.c_str()), nullptr};
    char* const envp[] = {const_cast<char*>("LC_ALL=C"), nullptr};
    ::execve(ldso.c_str(), argv, envp);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t arrow = line.find(" => ");
    if (arrow == std::string::npos) continue;
    size_t b = line.find_first_not_of("\t ");
    std::string name = line.substr(b, arrow - b);
    std::string rest = line.substr(arrow + 4);
    if (rest.rfind("not found", 0) == 0) {
      (*out)[name] = "";
    } else {
      size_t paren = rest.find(" (");
      (*out)[name] = rest.substr(0, paren);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int first_dir = 1;
  size_t max_objects = 100000;
  if (argc > 1 && argv[1][0] != '/') {
    max_objects = std::strtoul(argv[1], nullptr, 10);
    first_dir = 2;
  }
  LoaderArch arch = loader_arch_for(host_machine());
  std::string ldso;
  for (const auto& p : arch.ldso_paths)
    if (::access(p.c_str(), X_OK) == 0) {
      ldso = p;
      break;
    }
  if (ldso.empty()) {
    std::fprintf(stderr, "loader_sweep: no ld.so for %s found\n", arch.name.c_str());
    return 2;
  }
  LoaderEnv env = make_loader_env(FsView{}, "", "");
  std::printf("system dirs (%s):", env.system_dirs_from.c_str());
  for (const auto& d : env.system_dirs) std::printf(" %s", d.c_str());
  std::printf("\n");
  size_t objects = 0, refused = 0, compared = 0, disagree = 0;
  for (int d = first_dir; d < argc; ++d) {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(argv[d])) {
      while (dirent* e = ::readdir(dir)) names.emplace_back(e->d_name);
      ::closedir(dir);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      if (objects >= max_objects) break;
      std::string path = std::string(argv[d]) + "/" + n;
      ElfInfo elf = read_elf(path, false);
      if (elf.status != ElfStatus::ok || elf.machine != env.machine || elf.needed.empty()) continue;
      ++objects;
      std::map<std::string, std::string> got;
      if (!ldso_list(ldso, path, &got)) {
        ++refused;
        continue;
      }
      std::string rpath = real(path);
      for (const auto& need : elf.needed) {
        auto it = got.find(need);
        if (it == got.end()) continue;  // satisfied by ld.so itself or listed by another name
        Resolution r = resolve_library(env, need, Requester{rpath, &elf, {}, {}});
        std::string emu = r.status == LoadStatus::found ? real(r.real_path) : "";
        std::string real_loader = it->second.empty() ? "" : real(it->second);
        ++compared;
        if (emu != real_loader) {
          ++disagree;
          std::printf("DISAGREE %s needs %s: ld.so %s, emulation %s (%s)\n", path.c_str(),
                      need.c_str(), real_loader.empty() ? "not found" : real_loader.c_str(),
                      emu.empty() ? "not found" : emu.c_str(), r.origin.c_str());
        }
      }
    }
  }
  std::printf("%zu objects, %zu refused by ld.so, %zu NEEDED entries compared, %zu disagree\n",
              objects, refused, compared, disagree);
  if (compared == 0) return 2;
  return disagree == 0 ? 0 : 1;
}
