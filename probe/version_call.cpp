#include "probe/version_call.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

namespace denpex {

VersionCall call_version_function(const std::string& path, const char* symbol) {
  VersionCall c;
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    c.error = e ? e : "dlopen failed";
    return c;
  }
  link_map* lm = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) {
    char* real = ::realpath(lm->l_name, nullptr);
    c.loaded_path = real ? real : lm->l_name;
    std::free(real);
  }
  using GetVersion = int (*)(int*);
  auto fn = reinterpret_cast<GetVersion>(::dlsym(h, symbol));
  if (!fn) {
    c.status = VersionCallStatus::no_symbol;
    return c;
  }
  c.status = VersionCallStatus::loaded;
  c.rc = fn(&c.value);
  return c;
}

}  // namespace denpex
