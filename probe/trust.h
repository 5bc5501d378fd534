// Whether a library may be loaded into a probe running as root. A file that another user could
// have written or replaced (the file itself, or any directory on its path) is code that user
// would get to run as root on every node the prolog runs on; such files are only read, never
// loaded. Under --root nothing is loaded at all, so nothing there is a trust question.
#pragma once

#include <string>

#include "probe/loader.h"

namespace denpex {

struct TrustCheck {
  bool trusted = true;
  std::string reason;   // "directory /x is writable by every user", "file /x is owned by uid 1000"
};

// For a process not running as root every file is trusted (it can only hurt its own user).
// For root: the file and every directory from "/" down to it must be owned by root; none may be
// writable by group or others, except a directory with the sticky bit (/tmp, /var/tmp): there
// only an entry's owner (here root) can rename or remove it, so another user cannot replace the
// root-owned entry below it. `host_path` is the path to open (symlinks already resolved). The
// walk goes from "/" down, so `reason` names the highest offending directory.
TrustCheck check_trusted(const std::string& host_path, bool running_as_root);

// check_trusted for `view_path` (a library about to be dlopened) and for every library the
// loader would map with it: its DT_NEEDED entries, resolved in `env` with each object's own
// RPATH/RUNPATH, recursively (at most 256 objects). Names the probe process has already loaded
// (libc.so.6, libstdc++.so.6 ...) are skipped: the loader answers those with the loaded copy.
// `reason` of an untrusted dependency says which library needs it.
TrustCheck check_trusted_with_needed(const LoaderEnv& env, const std::string& view_path,
                                     bool running_as_root);

}  // namespace denpex
