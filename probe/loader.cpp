#include "probe/loader.h"

#include <elf.h>
#include <unistd.h>

#include <climits>

#include "probe/text.h"

namespace denpex {

std::vector<std::string> split_library_path(const std::string& value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find_first_of(":;", start);
    if (end == std::string::npos) end = value.size();
    std::string e = value.substr(start, end - start);
    out.push_back(e.empty() ? "." : e);
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_preload(const std::string& value) {
  return split_nonempty(value, ": \t");
}

std::string expand_dst(const std::string& entry, const std::string& origin_dir,
                       const std::string& lib, const std::string& platform) {
  std::string out;
  for (size_t i = 0; i < entry.size();) {
    if (entry[i] == '$') {
      struct Token { const char* name; std::string value; };
      const Token tokens[] = {
          {"${ORIGIN}", origin_dir}, {"$ORIGIN", origin_dir},
          {"${LIB}", lib}, {"$LIB", lib},
          {"${PLATFORM}", platform}, {"$PLATFORM", platform}};
      bool hit = false;
      for (const auto& t : tokens) {
        std::string n(t.name);
        if (entry.compare(i, n.size(), n) == 0) {
          out += t.value;
          i += n.size();
          hit = true;
          break;
        }
      }
      if (hit) continue;
    }
    out += entry[i++];
  }
  return out;
}

namespace {

// LD_LIBRARY_PATH entries with their dynamic string tokens expanded for the main program (glibc
// _dl_init_paths with the main map). An entry needing $ORIGIN when the program is unknown is
// dropped, as ld.so drops an entry whose origin it cannot tell.
std::vector<std::string> expand_library_path(const std::vector<std::string>& entries,
                                             const std::string& program_dir,
                                             const std::string& lib, const std::string& platform) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    const bool uses_origin = expand_dst(e, "", lib, platform) != expand_dst(e, "/", lib, platform);
    if (uses_origin && program_dir.empty()) continue;
    out.push_back(expand_dst(e, program_dir, lib, platform));
  }
  return out;
}

}  // namespace

LoaderEnv make_loader_env(const FsView& fs, const std::string& ld_preload,
                          const std::string& ld_library_path, uint16_t machine,
                          const Requester* program) {
  LoaderEnv env;
  env.fs = fs;
  env.image = !(fs.root == "/" || fs.root.empty());
  env.image_arch_known = env.image && machine != 0;
  if (machine == 0) {
    TreeArch t = env.image ? decide_tree_arch(fs, "") : TreeArch{};
    env.image_arch_known = t.status == TreeArchStatus::ok;
    machine = env.image_arch_known ? t.machine : host_machine();
  }
  env.machine = machine;
  env.arch = loader_arch_for(machine);
  // In an image /etc/ld.so.cache may be a symlink; it is followed inside the root.
  Resolved cache = resolve(fs, "/etc/ld.so.cache");
  env.cache = read_ld_cache(host_path(fs, cache.status == ResolveStatus::ok ? cache.path
                                                                           : "/etc/ld.so.cache"));
  if (env.cache.status != LdCacheStatus::ok) env.conf_dirs = read_ld_so_conf(fs.root, "/etc/ld.so.conf");
  // ld.so's built-in list ("system search path" in `ld.so --help`), read from the target's ld.so.
  SystemDirs sd = system_dirs_for(fs, env.arch);
  env.system_dirs = std::move(sd.dirs);
  env.system_dirs_from = std::move(sd.from);
  env.dst_lib = std::move(sd.dst_lib);
  env.hwcaps = hwcaps_for(env.arch, sd.glibc_hwcaps_possible, !env.image);
  // The main program's $ORIGIN is the directory of its real file (glibc: /proc/self/exe).
  const std::string program_dir =
      program && !program->path.empty() ? dir_name(program->path) : "";
  env.library_path = expand_library_path(split_library_path(ld_library_path), program_dir,
                                         env.dst_lib, env.arch.platform);
  if (fs.root == "/" || fs.root.empty()) {
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf)) env.cwd = buf;
  }
  // Preloads last: they are searched with the directories above, and each one sees the ones
  // before it as already loaded (a second entry naming the first one's soname is that object).
  for (const std::string& entry : split_preload(ld_preload)) {
    Preloaded p;
    p.entry = entry;
    Resolution r = resolve_library(env, entry, program ? *program : Requester{});
    if (r.status == LoadStatus::found) {
      p.found = true;
      p.path = r.path;
      p.real_path = r.real_path;
      p.soname = read_elf(host_path(fs, r.real_path), false).soname;
    }
    env.preload.push_back(std::move(p));
  }
  return env;
}

namespace {

enum class Verdict { accept, skip, absent, fatal };

std::string this_is(const LoaderEnv& env) {
  return (env.image_arch_known ? ", the image is " : ", this is ") + machine_name(env.machine);
}

// What the loader does with `view_path` when it meets it in the search.
Verdict check(const LoaderEnv& env, const std::string& view_path, Resolution* res) {
  Resolved r = resolve(env.fs, view_path);
  if (r.status == ResolveStatus::not_found) return Verdict::absent;
  if (r.status != ResolveStatus::ok) {
    res->error = r.status == ResolveStatus::loop ? "too many levels of symbolic links" : r.error;
    return Verdict::fatal;
  }
  ElfInfo elf = read_elf(host_path(env.fs, r.path), false);
  switch (elf.status) {
    case ElfStatus::not_found: return Verdict::absent;
    case ElfStatus::unsupported:
      // glibc open_verify checks the byte order before the machine: a big-endian file stops the
      // search whatever it was built for; another ELF class is passed over.
      if (elf.error == "big-endian ELF") {
        res->error = "ELF file data encoding not little-endian";
        return Verdict::fatal;
      }
      res->skipped.push_back(
          {view_path, "a " + elf.error + " built for " + machine_name(elf.machine) +
                          this_is(env)});
      return Verdict::skip;
    case ElfStatus::ok:
      if (elf.osabi != ELFOSABI_SYSV && elf.osabi != ELFOSABI_GNU) {
        res->error = "ELF file OS ABI invalid";
        return Verdict::fatal;
      }
      if (elf.machine != env.machine) {
        res->skipped.push_back({view_path, "built for " + machine_name(elf.machine) + this_is(env)});
        return Verdict::skip;
      }
      // _dl_map_object_from_fd: a program is never mapped as a library.
      if (elf.type == ET_EXEC) {
        res->error = "cannot dynamically load executable";
        return Verdict::fatal;
      }
      if (elf.type == ET_DYN && (elf.flags_1 & DF_1_PIE)) {
        res->error = "cannot dynamically load position-independent executable";
        return Verdict::fatal;
      }
      res->real_path = r.path;
      return Verdict::accept;
    case ElfStatus::not_elf:
      res->error = "not an ELF shared library (invalid ELF header)";
      return Verdict::fatal;
    case ElfStatus::truncated:
      res->error = "truncated (file too short: " + elf.error + ")";
      return Verdict::fatal;
    case ElfStatus::not_file:
      res->error = elf.error;
      return Verdict::fatal;
    case ElfStatus::io_error:
      res->error = "cannot read: " + elf.error;
      return Verdict::fatal;
  }
  return Verdict::fatal;
}

// Tries `dir/name` alone; true when the search is over (found or fatal).
bool try_file(const LoaderEnv& env, const std::string& dir, const std::string& name,
              const char* origin, Resolution* res) {
  std::string candidate = join_path(dir, name);
  switch (check(env, candidate, res)) {
    case Verdict::accept:
      res->status = LoadStatus::found;
      res->path = candidate;
      res->origin = origin;
      return true;
    case Verdict::fatal:
      res->status = LoadStatus::fatal;
      res->path = candidate;
      res->origin = origin;
      return true;
    case Verdict::skip:
    case Verdict::absent: return false;
  }
  return false;
}

// With the CPU unknown: what `dir`'s glibc-hwcaps subdirectory `name` would give a CPU of that
// level, added to res->cpu_alternatives (once per level: a CPU of that level stops at the first).
void note_cpu_alternative(const LoaderEnv& env, const std::string& dir, const std::string& level,
                          const std::string& name, Resolution* res) {
  for (const auto& a : res->cpu_alternatives)
    if (a.hwcaps == level) return;
  Resolution alt;
  if (!try_file(env, join_path(dir, hwcaps_subdir(level)), name, "", &alt)) {
    res->skipped.insert(res->skipped.end(), alt.skipped.begin(), alt.skipped.end());
    return;
  }
  res->cpu_alternatives.push_back({level, alt.status, alt.path, alt.real_path, alt.error});
}

// Tries one search directory: its glibc-hwcaps subdirectories first, then `dir/name`; true when
// the search is over (found or fatal).
bool try_dir(const LoaderEnv& env, const std::string& dir, const std::string& name,
             const char* origin, Resolution* res) {
  std::string d = dir;
  if (d.empty() || d[0] != '/') d = join_path(env.cwd, d);
  switch (env.hwcaps.mode) {
    case HwcapsMode::none: break;
    case HwcapsMode::cpu_known:
      for (const auto& level : env.hwcaps.supported)
        if (try_file(env, join_path(d, hwcaps_subdir(level)), name, origin, res)) return true;
      break;
    case HwcapsMode::cpu_unknown:
      for (const auto& level : env.hwcaps.names) note_cpu_alternative(env, d, level, name, res);
      break;
  }
  return try_file(env, d, name, origin, res);
}

// The cache's entries for `name`: its glibc-hwcaps copies as the CPU allows (glibc
// _dl_cache_libmap picks the most capable supported level), then the plain entry; true when the
// search is over.
bool try_cache(const LoaderEnv& env, const std::string& name, Resolution* res) {
  std::vector<const LdCacheEntry*> all = find_all_in_cache(env.cache, name, env.arch.cache_flags);
  auto file_of = [&](const std::string& level, Resolution* into) {
    for (const LdCacheEntry* e : all)
      if (e->hwcaps == level)
        return try_file(env, dir_name(e->path), base_name(e->path), "ld.so.cache", into);
    return false;
  };
  switch (env.hwcaps.mode) {
    case HwcapsMode::none: break;
    case HwcapsMode::cpu_known:
      for (const auto& level : env.hwcaps.supported)
        if (file_of(level, res)) return true;
      break;
    case HwcapsMode::cpu_unknown:
      for (const auto& level : env.hwcaps.names) {
        bool listed = false;
        for (const auto& a : res->cpu_alternatives) listed = listed || a.hwcaps == level;
        Resolution alt;
        if (!listed && file_of(level, &alt))
          res->cpu_alternatives.push_back({level, alt.status, alt.path, alt.real_path, alt.error});
      }
      break;
  }
  return file_of("", res);
}

// An object already mapped that answers to `name` by its soname (glibc _dl_name_match_p with
// l_soname), or nullptr.
const LoaderLink* already_loaded(const Requester& rq, const std::string& name) {
  for (const auto* list : {&rq.loaders, &rq.loaded})
    for (const auto& l : *list)
      if (l.elf && !l.elf->soname.empty() && l.elf->soname == name) return &l;
  return nullptr;
}

}  // namespace

Resolution resolve_library(const LoaderEnv& env, const std::string& name,
                           const Requester& requester) {
  Resolution res;
  if (name.find('/') != std::string::npos) {
    try_file(env, "", name[0] == '/' ? name : join_path(env.cwd, name), "path", &res);
    if (res.status == LoadStatus::not_found && res.skipped.empty())
      res.error = name + ": no such file";
    return res;
  }
  // A preloaded object answers to its soname and to the name it was preloaded by.
  for (const auto& p : env.preload) {
    if (!p.found || (p.soname != name && p.entry != name)) continue;
    res.status = LoadStatus::found;
    res.path = p.path;
    res.real_path = p.real_path;
    res.origin = "LD_PRELOAD";
    return res;
  }
  if (const LoaderLink* l = already_loaded(requester, name)) {
    Resolved r = resolve(env.fs, l->path);
    res.status = LoadStatus::found;
    res.path = l->path;
    res.real_path = r.status == ResolveStatus::ok ? r.path : l->path;
    res.origin = "already-loaded";
    return res;
  }
  std::string origin_dir = requester.path.empty() ? "" : dir_name(requester.path);
  const ElfInfo* rq = requester.elf;
  if (!rq || !rq->has_runpath) {
    if (rq) {
      for (const auto& e : rq->rpath)
        if (try_dir(env, expand_dst(e, origin_dir, env.dst_lib, env.arch.platform), name, "rpath",
                    &res))
          return res;
    }
    for (const auto& l : requester.loaders) {
      if (!l.elf || l.elf->has_runpath) continue;
      const std::string dir = l.path.empty() ? "" : dir_name(l.path);
      for (const auto& e : l.elf->rpath)
        if (try_dir(env, expand_dst(e, dir, env.dst_lib, env.arch.platform), name,
                    "rpath-of-loader", &res))
          return res;
    }
  }
  for (const auto& d : env.library_path)
    if (try_dir(env, d, name, "LD_LIBRARY_PATH", &res)) return res;
  if (rq && rq->has_runpath) {
    for (const auto& e : rq->runpath)
      if (try_dir(env, expand_dst(e, origin_dir, env.dst_lib, env.arch.platform), name, "runpath", &res)) return res;
  }
  // DF_1_NODEFLIB (-z nodefaultlib) on the requester: neither the cache nor the system
  // directories are searched for its dependencies.
  if (rq && (rq->flags_1 & DF_1_NODEFLIB)) return res;
  if (env.cache.status == LdCacheStatus::ok) {
    if (try_cache(env, name, &res)) return res;
  } else {
    // No cache (an image where ldconfig never ran): the loader would not know these directories,
    // but ldconfig run at container start would. Reported with its own origin so it can be told
    // apart.
    for (const auto& d : env.conf_dirs)
      if (try_dir(env, d, name, "ld.so.conf", &res)) return res;
  }
  for (const auto& d : env.system_dirs)
    if (try_dir(env, d, name, "system-dir", &res)) return res;
  return res;
}

std::vector<std::string> describe_cpu_alternatives(const Resolution& r) {
  std::vector<std::string> out;
  if (r.cpu_alternatives.empty()) return out;
  for (const auto& a : r.cpu_alternatives)
    out.push_back(a.hwcaps + ": " + a.path +
                  (a.status == LoadStatus::fatal ? " (" + a.error + ")" : ""));
  out.push_back("otherwise: " + (r.status == LoadStatus::not_found ? std::string("not found")
                                                                   : r.path));
  return out;
}

}  // namespace denpex
