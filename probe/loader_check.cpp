#include "probe/loader_check.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>

#include "probe/elf_file.h"
#include "probe/isolated_call.h"

namespace denpex {

namespace {

std::string getenv_string(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Runs in the isolated child: "L <real path>" or "E <dlerror>".
std::string ask_loader(const std::string& name) {
  void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return std::string("E ") + (e ? e : "dlopen failed");
  }
  link_map* lm = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
    return "E the loader mapped it but did not say where";
  char* real = ::realpath(lm->l_name, nullptr);
  std::string out = std::string("L ") + (real ? real : lm->l_name);
  std::free(real);
  return out;
}

}  // namespace

bool loader_check_possible(const ProbeContext& ctx) {
  return ctx.allow_load && !ctx.running_as_root && ctx.loader.fs.root == "/" &&
         env_value(ctx, "LD_LIBRARY_PATH") == getenv_string("LD_LIBRARY_PATH") &&
         env_value(ctx, "LD_PRELOAD") == getenv_string("LD_PRELOAD");
}

LoaderCheck check_against_loader(const ProbeContext& ctx, const std::string& name) {
  LoaderCheck c;
  c.name = name;
  // dlopen's search uses the RPATH/RUNPATH of the object that calls it: this executable
  // (denpex_probe is linked in statically). Normally it has none, as a plain program.
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
  ElfInfo exe_elf = exe.empty() ? ElfInfo{} : read_elf(exe, false);
  Requester requester;
  if (exe_elf.status == ElfStatus::ok) requester = Requester{exe, &exe_elf, {}, {}};
  Resolution res = resolve_library(ctx.loader, name, requester);
  c.emulated = res.status == LoadStatus::found ? res.real_path : "";

  IsolatedResult r = run_isolated([&] { return ask_loader(name); }, ctx.step_timeout);
  if (r.status != IsolatedStatus::ok) {
    c.error = "asking the loader " + describe(r, ctx.step_timeout);
  } else if (r.output.rfind("L ", 0) == 0) {
    c.loaded = r.output.substr(2);
  } else {
    c.error = r.output.size() > 2 ? r.output.substr(2) : "no answer";
  }
  return c;
}

}  // namespace denpex
