// Launcher summaries pasted at the end of a failed job: Open MPI's end-of-job block naming the
// first process that exited non-zero, the dump of Open MPI's signal handler in a crashed
// process, and torchrun's ChildFailedError summary pasted through a page that lost its layout.
// Formats of the threads SOURCES.md lists in survey E, with the project's own values.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "diagnose/diagnosis.h"
#include "evidence/log_reader.h"
#include "tests/diagnose/diagnose_test_support.h"

using namespace denpex;
using namespace denpex::diag;
using namespace denpex::evidence;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/families/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kOrteBlock =
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n"
    "\n"
    "  Process name: [[61904,1],13]\n"
    "  Exit code:    1\n"
    "--------------------------------------------------------------------------\n";

}  // namespace

TEST_CASE("the new entries read their own examples") {
  denpex::diag::test::check_examples_read_by_own_entry({"openmpi.first_process", "openmpi.signal_handler"});
}

TEST_CASE("Open MPI's end-of-job block: the first process's MPI rank and exit code") {
  LogReader r = test::read_log(kOrteBlock);
  REQUIRE(r.launcher.size() == 1);
  CHECK(r.launcher[0].rank == 13);
  CHECK_FALSE(r.launcher[0].local);
  CHECK(r.launcher[0].exitcode == "1");
  CHECK(r.launcher[0].evidence.signal == "openmpi.first_process");
  CHECK(r.launcher[0].evidence.line == 5);
  CHECK(r.launcher[0].evidence.text.find("Exit code:    1") != std::string::npos);
}

TEST_CASE("Open MPI's end-of-job block: Open MPI 5's names, prefixes, a glued line, a cut block") {
  LogReader r = test::read_log(
      "   Process name: [prterun-dgx-a4-20931@1,22]\n"
      "   Exit code:    139\n"
      "2025-03-02 11:04:19 Process name: [[7,1],2] Exit code: 255\n"
      "  Process name: [[7,1],6]\n"
      "some later output\n");
  REQUIRE(r.launcher.size() == 2);
  CHECK(r.launcher[0].rank == 22);
  CHECK(r.launcher[0].exitcode == "139");
  CHECK(r.launcher[1].rank == 2);
  CHECK(r.launcher[1].exitcode == "255");
  CHECK(r.launcher[1].when.known());
}

TEST_CASE("Open MPI's end-of-job block alone: the rank it names started the failure") {
  LogReader r = test::read_log(fixture("mpirun_first_process.log"));
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{3});
  CHECK(d.blame.initiating.what.find("exit code 3") != std::string::npos);
}

TEST_CASE("Open MPI's signal handler: the crashed process by host and pid, or by its tagged rank") {
  LogReader r = test::read_log(
      "[gpu-b12:51877] *** Process received signal ***\n"
      "[gpu-b12:51877] Signal: Segmentation fault (11)\n"
      "[gpu-b12:51877] Signal code: Address not mapped (1)\n"
      "[gpu-b12:51877] Failing at address: 0x40\n"
      "[gpu-b12:51877] [ 0] /lib64/libc.so.6(+0x3e6f0)[0x7f00aa03e6f0]\n"
      "[gpu-b12:51877] *** End of error message ***\n"
      "[1,6]<stderr>:[gpu-b14:3120] Signal: Bus error (7)\n"
      "[1,2]<stderr>:[gpu-b13:3002] Signal: Aborted (6)\n"
      "[gpu-b15:411] Signal: Terminated (15)\n");
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].kind == Failure::Kind::own_error);
  CHECK(r.failures[0].who.proc == "gpu-b12:51877");
  CHECK(r.failures[0].who.host == "gpu-b12");
  CHECK(r.failures[0].what.find("Segmentation fault (11)") != std::string::npos);
  CHECK(r.failures[1].kind == Failure::Kind::own_error);
  CHECK(r.failures[1].who.rank == 6);
  CHECK(r.failures[1].who.host == "gpu-b14");
  // An abort most often follows an error elsewhere (the watchdog's exception after a timeout).
  CHECK(r.failures[2].kind == Failure::Kind::aborted);
  CHECK(r.failures[2].who.rank == 2);
}

TEST_CASE("Open MPI's signal handler alone: that process started the failure, named by host and pid") {
  LogReader r = test::read_log(fixture("ompi_segv_handler.log"));
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.procs == std::vector<std::string>{"gpu-r7-14:90412"});
  CHECK(d.blame.initiating.hosts == std::vector<std::string>{"gpu-r7-14"});
  CHECK(d.blame.initiating.what.find("Segmentation fault") != std::string::npos);
}

TEST_CASE("torchrun's summary with its fields glued and its names standing alone") {
  LogReader r = test::read_log(fixture("torchrun_flattened.log"));
  REQUIRE(r.launcher.size() == 1);
  const LauncherEntry& e = r.launcher[0];
  CHECK(e.root_cause);
  CHECK(e.rank == 5);
  CHECK_FALSE(e.local);
  CHECK(e.host == "lab-ws-3090");
  CHECK(e.exitcode == "-9");
  CHECK(e.pid == 184220);
  CHECK(e.signal == "SIGKILL");
  Diagnosis d = diagnose(r);
  CHECK(d.exit_code == 1);
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{5});
  CHECK(d.blame.initiating.what.find("SIGKILL") != std::string::npos);
}

TEST_CASE("torchrun's summary glued on one line keeps each field apart") {
  LogReader r = test::read_log(
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "time : 2025-01-20_16:02:11host : node-rank3rank : 11 (local_rank: 3)exitcode : 1 (pid: 9155)\n"
      "error_file: <N/A>traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n");
  REQUIRE(r.launcher.size() == 1);
  CHECK(r.launcher[0].rank == 11);
  CHECK(r.launcher[0].host == "node-rank3");
  CHECK(r.launcher[0].exitcode == "1");
  CHECK(r.launcher[0].pid == 9155);
  CHECK(r.launcher[0].when.text() == "01-20 16:02:11");
}
