// Whether a library may be loaded into a probe running as root. A file that another user could
// have written (the file itself, or any directory on its path) is code that user would get to
// run as root on every node the prolog runs on; such files are only read, never loaded.
#pragma once

#include <string>

namespace denpex {

struct TrustCheck {
  bool trusted = true;
  std::string reason;   // "directory /tmp/x is writable by others", "owned by uid 1000"
};

// For a process not running as root every file is trusted (it can only hurt its own user).
// For root: the resolved file and every directory from "/" down to it must be owned by root and
// not writable by group or others. `host_path` is the path to open (symlinks already resolved).
TrustCheck check_trusted(const std::string& host_path, bool running_as_root);

}  // namespace denpex
