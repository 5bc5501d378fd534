// The steps every probe of a shared library takes, in one place: where the loader's resolution
// points, whether the file may be loaded at all (as root: trust.h; under --root: never), and,
// when it may, dlopen + a version call (version_call.h) in an isolated child (isolated_call.h)
// whose answer comes back through the pipe. The NCCL, driver and plugin probes supply only what
// differs: the symbol to call, how to read the file statically, and their messages.
#pragma once

#include <string>
#include <vector>

#include "probe/isolated_call.h"
#include "probe/loader.h"
#include "probe/probe_context.h"
#include "probe/version_call.h"

namespace denpex {

// not_found         the loader finds nothing; res.skipped lists what it passed over
// fatal             the loader would stop at res.path (res.error says why)
// not_loaded        found, not loaded (`not_loaded` says why): read it statically
// isolation_failed  the child crashed, hung, failed, or gave no answer; `error` is a clause to
//                   follow the file name ("crashed with SIGSEGV (...)", "gave no answer", the
//                   rest of isolated_call.h describe())
// called            the child loaded it: `call` is what dlopen, dlsym and the function said
enum class LibraryStep { not_found, fatal, not_loaded, isolation_failed, called };

// image      under --root nothing from the tree is loaded
// untrusted  as root, a file another user could have written (it or a library it needs); its
//            "path (reason)" was appended to the caller's `untrusted` list
// no_call    the caller asked for no version call (a plugin is only read)
enum class NotLoaded { image, untrusted, no_call };

struct LibraryProbe {
  LibraryStep step = LibraryStep::not_found;
  std::string path;   // the file the loader maps (view path, symlinks resolved), once found
  std::string host;   // where this process opens it (host_path of `path`)
  NotLoaded not_loaded = NotLoaded::no_call;  // step == not_loaded only
  VersionCall call;   // step == called only
  std::string error;  // step == isolation_failed only
};

// Follows `res` through the steps above; `version_symbol` names an `int f(int*)` entry point
// to call in the child, or nullptr for a library that is only ever read (no trust check: nothing
// is loaded). `untrusted` may be null. The call is made in a child of its own, unless
// ctx.prefetched holds its answer for this file and symbol (a child that had other work made
// it: probe/device_probe.h). Never throws; every failure is a step.
LibraryProbe probe_library(const ProbeContext& ctx, const Resolution& res,
                           const char* version_symbol, std::vector<std::string>* untrusted);

// probe_library's steps before the call: true when `version_symbol` may be called (lp->host
// names the file to load), false with lp's step saying why not.
bool prepare_library_call(const ProbeContext& ctx, const Resolution& res,
                          const char* version_symbol, std::vector<std::string>* untrusted,
                          LibraryProbe* lp);

// What a child that ran call_version_function() for the library answers, into lp (called, or
// isolation_failed with why).
void take_version_answer(const IsolatedResult& r, double timeout_seconds, LibraryProbe* lp);

// The child's answer on the pipe and back: a VersionCall survives the round trip exactly (any
// bytes in the path and the error). decode returns false for text encode did not make (a child
// whose library's constructor ended the process before the answer was written).
std::string encode_version_call(const VersionCall& call);
bool decode_version_call(const std::string& text, VersionCall* call);

}  // namespace denpex
