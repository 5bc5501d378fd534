#include "probe/isolated_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace denpex {

double monotonic_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

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

void kill_child(pid_t pid, int* status) {
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, status, 0);
}

}  // namespace

IsolatedChild start_isolated(const std::function<std::string()>& fn) {
  IsolatedChild c;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    c.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return c;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Its own process group, so a library that forks helpers is killed with it.
    ::setpgid(0, 0);
    std::string out = fn();
    write_all(fds[1], out);
    ::close(fds[1]);
    ::_exit(0);
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
  bool eof = false;
  char buf[65536];
  while (!eof) {
    double left = deadline - monotonic_seconds();
    if (left <= 0) break;
    pollfd p{child->fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (rc <= 0) continue;  // EINTR or timeout: the loop re-checks the deadline
    ssize_t n = ::read(child->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
    } else if (res.output.size() < max_output) {
      res.output.append(buf, std::min(static_cast<size_t>(n), max_output - res.output.size()));
    }
  }
  ::close(child->fd);
  child->fd = -1;
  const pid_t pid = child->pid;
  int status = 0;
  if (!eof) {
    kill_child(pid, &status);
    res.status = IsolatedStatus::timed_out;
    return res;
  }
  // The pipe closed: the child exited or is exiting. Bound the wait all the same, since a
  // library may close inherited descriptors and carry on.
  while (true) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      res.error = std::string("waitpid: ") + std::strerror(errno);
      return res;
    }
    if (monotonic_seconds() > deadline) {
      kill_child(pid, &status);
      res.status = IsolatedStatus::timed_out;
      return res;
    }
    ::usleep(500);
  }
  if (WIFSIGNALED(status)) {
    res.status = IsolatedStatus::crashed;
    res.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    res.status = IsolatedStatus::ok;
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

std::string describe(const IsolatedResult& r, double timeout_seconds) {
  switch (r.status) {
    case IsolatedStatus::ok: return "ok";
    case IsolatedStatus::timed_out:
      return fmt::format("did not return within {:.1f} s (hung; the probe killed it)",
                         timeout_seconds);
    case IsolatedStatus::crashed: {
      const char* name = sigabbrev_np(r.signal);
      return fmt::format("crashed with SIG{} ({})", name ? name : std::to_string(r.signal),
                         strsignal(r.signal));
    }
    case IsolatedStatus::failed: return r.error;
  }
  return r.error;
}

}  // namespace denpex
