// Runs a risky step (dlopen of a library whose constructor may crash or hang, a driver call that
// may never return) in a forked child with a deadline, so the probe itself always survives and
// always finishes. The child sends back a short text result through a pipe.
//
// REQUIRES: called before MPI_Init (forking after it is unsafe with some transports) and from a
// single-threaded process.
#pragma once

#include <functional>
#include <string>

namespace denpex {

// ok         the child ran `fn` and exited 0; `output` is what it returned
// timed_out  no answer within the deadline; the child was killed (SIGKILL). When even that did
//            not end it within a short grace (a process in uninterruptible sleep, "D" state, on
//            a hung file system or device) `reaped` is false and `error` says so; the probe goes
//            on without it rather than block in waitpid
// crashed    the child died from a signal (`signal` says which) before answering
// failed     the child exited non-zero, fn threw an exception (caught in the child, never
//            unwound through the parent's frames), or fork/pipe failed; `error` says which
enum class IsolatedStatus { ok, timed_out, crashed, failed };

struct IsolatedResult {
  IsolatedStatus status = IsolatedStatus::failed;
  std::string output;
  int signal = 0;
  bool reaped = true;    // false: killed but still not gone (see timed_out)
  int pid = -1;          // the child's pid, for messages about a child that could not be reaped
  std::string error;
};

// Seconds wait_isolated waits for a child to disappear after SIGKILL before reporting that it
// could not be reaped.
constexpr double kReapGraceSeconds = 0.5;

// Calls fn() in a child process; its return value (at most `max_output` bytes) comes back as
// `output`. Waits at most `timeout_seconds` (plus kReapGraceSeconds when the child has to be
// killed). The child leaves with _exit, never running the parent's atexit handlers or flushing
// its stdio buffers; an exception fn throws is caught there and becomes status failed.
IsolatedResult run_isolated(const std::function<std::string()>& fn, double timeout_seconds,
                            size_t max_output = 64 * 1024);

// The same in two halves, for a caller that has other work to do while the child runs (the MPI
// launcher starts the whole probe this way, then calls MPI_Init).
struct IsolatedChild {
  int pid = -1;          // -1 when fork/pipe failed; `error` says why
  int fd = -1;           // read end of the result pipe
  std::string error;
};

// Forks and runs fn() in the child. Never throws.
IsolatedChild start_isolated(const std::function<std::string()>& fn);

// Collects the child's answer, waiting until `deadline` (CLOCK_MONOTONIC seconds, see
// probe/monotonic_clock.h); kills it when the deadline passes. Closes child.fd.
IsolatedResult wait_isolated(IsolatedChild* child, double deadline, size_t max_output);

// "crashed (SIGSEGV)" / "did not answer within 5.0 s" / ... for messages.
std::string describe(const IsolatedResult& r, double timeout_seconds);

}  // namespace denpex
