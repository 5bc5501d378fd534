#include "probe/trust.h"

#include <link.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <set>

#include <fmt/format.h>

#include "probe/elf_file.h"

namespace denpex {

namespace {

// One component of the walk from "/" down to the file.
bool check_one(const std::string& path, bool is_dir, TrustCheck* out) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    out->trusted = false;
    out->reason = fmt::format("cannot stat {}: {}", path, std::strerror(errno));
    return false;
  }
  const char* what = is_dir ? "directory" : "file";
  if (st.st_uid != 0) {
    out->trusted = false;
    out->reason = fmt::format("{} {} is owned by uid {}, not root", what, path, st.st_uid);
    return false;
  }
  // Sticky directory: others may add entries but not rename or remove root's, and the next
  // component (checked after this one) must itself be root's.
  const bool sticky = is_dir && (st.st_mode & S_ISVTX);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky) {
    out->trusted = false;
    out->reason = fmt::format("{} {} is writable by {}", what, path,
                              (st.st_mode & S_IWOTH) ? "every user" : "its group");
    return false;
  }
  return true;
}

// Sonames (and paths) of the objects this process has mapped: the loader answers a request for
// one of these names with the mapped object and opens no file.
int collect_loaded(dl_phdr_info* info, size_t, void* data) {
  auto* names = static_cast<std::set<std::string>*>(data);
  if (info->dlpi_name && info->dlpi_name[0] == '/') {
    names->insert(info->dlpi_name);
    ElfInfo elf = read_elf(info->dlpi_name, false);
    if (elf.status == ElfStatus::ok && !elf.soname.empty()) names->insert(elf.soname);
  }
  return 0;
}

}  // namespace

TrustCheck check_trusted(const std::string& host_path, bool running_as_root) {
  TrustCheck t;
  if (!running_as_root) return t;
  // From "/" down, so the message names the highest offending directory.
  if (!check_one("/", true, &t)) return t;
  size_t pos = 0;
  while ((pos = host_path.find('/', pos + 1)) != std::string::npos) {
    if (!check_one(host_path.substr(0, pos), true, &t)) return t;
  }
  check_one(host_path, false, &t);
  return t;
}

TrustCheck check_trusted_with_needed(const LoaderEnv& env, const std::string& view_path,
                                     bool running_as_root) {
  TrustCheck t = check_trusted(host_path(env.fs, view_path), running_as_root);
  if (!running_as_root || !t.trusted) return t;
  std::set<std::string> loaded;
  ::dl_iterate_phdr(collect_loaded, &loaded);
  std::set<std::string> seen{view_path};
  std::deque<std::string> todo{view_path};
  while (!todo.empty() && seen.size() <= 256) {
    const std::string object = todo.front();
    todo.pop_front();
    ElfInfo elf = read_elf(host_path(env.fs, object), false);
    if (elf.status != ElfStatus::ok) continue;  // the loader would fail; not a trust question
    for (const std::string& name : elf.needed) {
      if (loaded.count(name)) continue;
      Resolution r = resolve_library(env, name, Requester{object, &elf, {}, {}});
      if (r.status != LoadStatus::found || !seen.insert(r.real_path).second) continue;
      if (loaded.count(host_path(env.fs, r.real_path))) continue;
      TrustCheck dep = check_trusted(host_path(env.fs, r.real_path), true);
      if (!dep.trusted) {
        dep.reason = fmt::format("needs {} ({}{}): {}", r.real_path, name,
                                 object == view_path ? "" : ", through " + object, dep.reason);
        return dep;
      }
      todo.push_back(r.real_path);
    }
  }
  return t;
}

}  // namespace denpex
