// Loading a library and asking it its version through an `int f(int*)` entry point
// (ncclGetVersion, cuDriverGetVersion). Runs inside an isolated child (isolated_call.h): the
// library's constructor and the call itself may crash or hang.
#pragma once

#include <string>

namespace denpex {

// loaded      dlopen and dlsym worked; `rc` and `value` are what the function returned
// no_library  dlopen failed; `error` is dlerror()
// no_symbol   the library does not export the function
enum class VersionCallStatus { loaded, no_library, no_symbol };

struct VersionCall {
  VersionCallStatus status = VersionCallStatus::no_library;
  int rc = 0;
  int value = 0;
  std::string loaded_path;  // the real path of what the loader mapped (dlinfo), "" if unknown
  std::string error;
};

// dlopen(path, RTLD_NOW | RTLD_LOCAL), dlsym(symbol), call it. Never throws.
VersionCall call_version_function(const std::string& path, const char* symbol);

}  // namespace denpex
