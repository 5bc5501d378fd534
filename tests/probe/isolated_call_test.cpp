#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

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

TEST_CASE("a hanging call is killed at the deadline") {
  double t0 = monotonic_seconds();
  IsolatedResult r = run_isolated([]() -> std::string { for (;;) ::pause(); }, 0.3);
  double took = monotonic_seconds() - t0;
  CHECK(r.status == IsolatedStatus::timed_out);
  // Not a timing assertion (the machine may be busy): without the kill this never returns.
  CHECK(took >= 0.3);
  CHECK(took < 60.0);
}

TEST_CASE("a call whose helper keeps the pipe open is still bounded") {
  double t0 = monotonic_seconds();
  IsolatedResult r = run_isolated(
      []() -> std::string {
        if (::fork() == 0)
          for (;;) ::pause();  // a grandchild holding the pipe's write end
        return "done";
      },
      120.0);
  // The answer counts once the child exits, though a grandchild still holds the pipe open; the
  // grandchild is killed with the child's process group. Waiting for the pipe instead would
  // end in a timeout at the 120 s deadline: half of it tells the two apart even under load.
  CHECK(monotonic_seconds() - t0 < 60.0);
  CHECK(r.status == IsolatedStatus::ok);
  CHECK(r.output == "done");
}
