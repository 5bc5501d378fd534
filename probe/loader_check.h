// The probe checking its loader emulation (loader.h) against the real loader, on every live
// run: an isolated child asks ld.so for a library by name, as a plain program would, and reports
// the file ld.so really mapped (dlinfo RTLD_DI_LINKMAP); it is compared with the file the
// emulation resolves for the same request. A difference means the emulation lacks a rule this
// system's loader follows (glibc-hwcaps subdirectories, a distribution patch): the record then
// describes a library the process does not get, and the report says so
// (probe-loader-disagreement).
#pragma once

#include <string>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

// Whether the real loader can be asked in this run. False:
//   under --root (nothing is loaded);
//   as root (ld.so might map a file the emulation never saw and so never trust-checked);
//   when ctx.env's LD_LIBRARY_PATH or LD_PRELOAD differ from what this process's ld.so read at
//   start-up (a test, or a caller probing another environment): the answers would not be about
//   the same question.
bool loader_check_possible(const ProbeContext& ctx);

// Asks the real loader in an isolated child for `name` (requested by the main program), and the
// emulation for the same request (this executable as the requester, its RPATH/RUNPATH if any).
// `loaded` is "" with `error` = dlerror() when the loader found nothing, or the child's fate
// when it crashed or hung. Never throws. REQUIRES: loader_check_possible(ctx).
LoaderCheck check_against_loader(const ProbeContext& ctx, const std::string& name);

}  // namespace denpex
