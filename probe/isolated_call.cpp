#include "probe/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "probe/monotonic_clock.h"

namespace denpex {

namespace {

void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// Exit code of a child whose fn threw; its pipe then carries the exception's text.
constexpr int kThrewExitCode = 121;

// SIGKILL, then waitpid with a deadline: a process in uninterruptible sleep (a hung NFS mount,
// a wedged device) does not die until the kernel call returns, and a plain waitpid would block
// the probe with it. True when the child was reaped.
bool kill_child(pid_t pid, int* status) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  const double give_up = monotonic_seconds() + kReapGraceSeconds;
  while (true) {
    pid_t w = ::waitpid(pid, status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) return w == pid;
    if (monotonic_seconds() >= give_up) return false;
    ::usleep(2000);
  }
}

}  // namespace

IsolatedChild start_isolated(const std::function<std::string()>& fn) {
  IsolatedChild c;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    c.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return c;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // If the caller dies (mpirun kills a rank at the job's deadline), its children go too:
    // no orphaned probe keeps a hung library alive.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    // Its own process group, so a library that forks helpers is killed with it.
    ::setpgid(0, 0);
    // A crash must kill the child plainly so the parent sees the signal: handlers inherited
    // from the parent (a test framework's, a sanitizer's) would report it as their own.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT})
      ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // An exception must end here: unwinding further would run the parent's frames (its
    // destructors, its catch blocks, its MPI or test framework) inside this copy of it.
    int code = 0;
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = e.what();
      code = kThrewExitCode;
    } catch (...) {
      out = "an exception that is not a std::exception";
      code = kThrewExitCode;
    }
    write_all(fds[1], out);
    ::close(fds[1]);
    ::_exit(code);
  }
  ::setpgid(pid, pid);  // also from the parent: no race with the child's own call
  ::close(fds[1]);
  c.pid = pid;
  c.fd = fds[0];
  return c;
}

IsolatedResult wait_isolated(IsolatedChild* child, double deadline, size_t max_output) {
  IsolatedResult res;
  if (child->pid < 0) {
    res.error = child->error;
    return res;
  }
  const pid_t pid = child->pid;
  res.pid = pid;
  auto take = [&](const char* buf, ssize_t n) {
    if (res.output.size() < max_output)
      res.output.append(buf, std::min(static_cast<size_t>(n), max_output - res.output.size()));
  };
  // The answer is complete when the pipe reaches EOF or the child has exited; a helper the
  // library forked may hold the pipe open long after, so the child's exit is watched too.
  bool exited = false;
  int status = 0;
  char buf[65536];
  bool eof = false;
  while (!eof && !exited) {
    double left = deadline - monotonic_seconds();
    if (left <= 0) break;
    pollfd p{child->fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min(left, 0.02) * 1000) + 1);
    if (rc > 0) {
      ssize_t n = ::read(child->fd, buf, sizeof buf);
      if (n > 0) take(buf, n);
      else if (n == 0) eof = true;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) exited = true;
  }
  if (exited && !eof) {
    // Drain what the child wrote before it left.
    ::fcntl(child->fd, F_SETFL, O_NONBLOCK);
    ssize_t n;
    while ((n = ::read(child->fd, buf, sizeof buf)) > 0) take(buf, n);
  }
  ::close(child->fd);
  child->fd = -1;
  if (!exited && eof) {
    // The pipe closed: the child is exiting. Bound the wait all the same.
    while (monotonic_seconds() < deadline) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      ::usleep(500);
    }
  }
  // Whatever the child left behind in its process group goes with it.
  ::kill(-pid, SIGKILL);
  if (!exited) {
    res.status = IsolatedStatus::timed_out;
    if (!kill_child(pid, &status)) {
      res.reaped = false;
      res.error = fmt::format(
          "the child (pid {}) was killed but could not be reaped within {:.1f} s: it is stuck in "
          "the kernel (uninterruptible sleep, a hung file system or device); the probe went on "
          "without it",
          pid, kReapGraceSeconds);
    }
    return res;
  }
  if (WIFSIGNALED(status)) {
    res.status = IsolatedStatus::crashed;
    res.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    res.status = IsolatedStatus::ok;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kThrewExitCode) {
    res.status = IsolatedStatus::failed;
    res.error = fmt::format("failed with an exception: {}", res.output);
    res.output.clear();
  } else {
    res.status = IsolatedStatus::failed;
    res.error = fmt::format("exited with status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  return res;
}

IsolatedResult run_isolated(const std::function<std::string()>& fn, double timeout_seconds,
                            size_t max_output) {
  IsolatedChild c = start_isolated(fn);
  return wait_isolated(&c, monotonic_seconds() + timeout_seconds, max_output);
}

// The signal's name without "SIG", or its number. Not sigabbrev_np: that is glibc 2.32, above
// the portable build's floor (glibc 2.31, tools/portable-build.sh).
static std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SEGV";
    case SIGBUS: return "BUS";
    case SIGABRT: return "ABRT";
    case SIGILL: return "ILL";
    case SIGFPE: return "FPE";
    case SIGTRAP: return "TRAP";
    case SIGSYS: return "SYS";
    case SIGKILL: return "KILL";
    case SIGTERM: return "TERM";
    case SIGINT: return "INT";
    case SIGQUIT: return "QUIT";
    case SIGPIPE: return "PIPE";
    case SIGALRM: return "ALRM";
    case SIGHUP: return "HUP";
    case SIGUSR1: return "USR1";
    case SIGUSR2: return "USR2";
    case SIGXCPU: return "XCPU";
    case SIGXFSZ: return "XFSZ";
    default: return std::to_string(sig);
  }
}

std::string describe(const IsolatedResult& r, double timeout_seconds) {
  switch (r.status) {
    case IsolatedStatus::ok: return "ok";
    case IsolatedStatus::timed_out:
      if (!r.reaped)
        return fmt::format("did not return within {:.1f} s (hung; {})", timeout_seconds,
                           r.error);
      return fmt::format("did not return within {:.1f} s (hung; the probe killed it)",
                         timeout_seconds);
    case IsolatedStatus::crashed: {
      return fmt::format("crashed with SIG{} ({})", signal_name(r.signal), strsignal(r.signal));
    }
    case IsolatedStatus::failed: return r.error;
  }
  return r.error;
}

}  // namespace denpex
