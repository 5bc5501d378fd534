#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include "probe/isolated_call.h"

using namespace denpex;

TEST_CASE("an isolated call returns its output") {
  IsolatedResult r = run_isolated([] { return std::string("hello"); }, 5.0);
  CHECK(r.status == IsolatedStatus::ok);
  CHECK(r.output == "hello");
}

TEST_CASE("a crashing call is reported with its signal, the caller survives") {
  IsolatedResult r = run_isolated([]() -> std::string { ::raise(SIGSEGV); return ""; }, 5.0);
  CHECK(r.status == IsolatedStatus::crashed);
  CHECK(r.signal == SIGSEGV);
  CHECK(describe(r, 5.0).find("SIGSEGV") != std::string::npos);
}

TEST_CASE("a crash is described by the signal's name, an unnamed one by its number") {
  IsolatedResult r;
  r.status = IsolatedStatus::crashed;
  r.signal = SIGABRT;
  CHECK(describe(r, 5.0).find("crashed with SIGABRT (") != std::string::npos);
  r.signal = SIGBUS;
  CHECK(describe(r, 5.0).find("crashed with SIGBUS (") != std::string::npos);
  r.signal = SIGRTMIN + 1;
  CHECK(describe(r, 5.0).find(fmt::format("crashed with SIG{} (", SIGRTMIN + 1)) != std::string::npos);
}

TEST_CASE("a hanging call is killed at the deadline") {
  double t0 = monotonic_seconds();
  IsolatedResult r = run_isolated([]() -> std::string { for (;;) ::pause(); }, 0.3);
  double took = monotonic_seconds() - t0;
  CHECK(r.status == IsolatedStatus::timed_out);
  CHECK(took < 2.0);
}

TEST_CASE("a call whose helper keeps the pipe open is still bounded") {
  double t0 = monotonic_seconds();
  IsolatedResult r = run_isolated(
      []() -> std::string {
        if (::fork() == 0)
          for (;;) ::pause();  // a grandchild holding the pipe's write end
        return "done";
      },
      5.0);
  // The answer counts once the child exits, though a grandchild still holds the pipe open; the
  // grandchild is killed with the child's process group.
  CHECK(monotonic_seconds() - t0 < 0.4);
  CHECK(r.status == IsolatedStatus::ok);
  CHECK(r.output == "done");
}
