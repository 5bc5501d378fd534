#include <catch2/catch.hpp>

#include <cstdio>

#include "probe/cuda_driver_probe.h"
#include "probe/monotonic_clock.h"
#include "probe/probe.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

ProbeContext context(const std::string& llp) { return context_with_only(llp); }

// Whether the loader cache lists libcuda.so.1 (a driver is installed), as `ldconfig -p` says.
bool cache_lists_driver() {
  FILE* p = ::popen("/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null", "r");
  if (!p) return false;
  bool listed = false;
  char line[4096];
  while (std::fgets(line, sizeof line, p))
    if (std::string(line).find("libcuda.so.1 (") != std::string::npos) listed = true;
  ::pclose(p);
  return listed;
}

}  // namespace

TEST_CASE("the machine's own driver: missing exactly when the loader cache has no libcuda.so.1") {
  ProbeContext ctx;
  ctx.loader = make_loader_env(FsView{}, "", "");
  ctx.kernel_version_files.clear();
  CudaDriverInfo d = probe_cuda_driver(ctx, nullptr);
  if (cache_lists_driver())
    CHECK(d.status != DriverStatus::missing);
  else
    CHECK(d.status == DriverStatus::missing);
}

TEST_CASE("the CUDA toolkit's real stub is recognised by its answer, 34", "[cuda-stub]") {
  const std::string stub = cuda_stub();
  REQUIRE_FALSE(stub.empty());  // run only where the toolkit is (tests/run_catch.sh)
  Scratch s;
  // The classic container mistake: the stub made to look like the driver.
  s.link(stub, "fake-driver/libcuda.so.1");
  CudaDriverInfo d = probe_cuda_driver(context(s.path("fake-driver")), nullptr);
  CHECK(d.status == DriverStatus::stub);
  char* real = ::realpath(stub.c_str(), nullptr);
  CHECK(d.library == std::string(real ? real : ""));
  std::free(real);
  CHECK(d.error.find("CUDA_ERROR_STUB_LIBRARY") != std::string::npos);
}

TEST_CASE("a driver stand-in reports its CUDA version and file-name version") {
  Scratch s;
  CudaDriverInfo d = probe_cuda_driver(context(standin("cuda-550.54.15")), nullptr);
  CHECK(d.status == DriverStatus::ok);
  CHECK(d.cuda_version == "12.4");
  CHECK(d.driver_api_version == 12040);
  CHECK(d.library_version == "550.54.15");
  CHECK(d.library == standin("cuda-550.54.15/libcuda.so.550.54.15"));

  // Kernel module versions from both files NVIDIA's driver provides.
  ProbeContext ctx = context(standin("cuda-550.54.15"));
  ctx.kernel_version_files = {s.path("none"),
                              s.write("proc-version",
                                      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                      "535.104.05  Release Build  (dvs-builder@U16)  Thu Aug 10\n"
                                      "GCC version:  gcc version 12.2.0\n")};
  CHECK(probe_cuda_driver(ctx, nullptr).kernel_module_version == "535.104.05");
}

TEST_CASE("a driver call that never returns is cut off") {
  ProbeContext ctx = context(standin("cuda-hang"));
  ctx.step_timeout = 0.5;
  double t0 = monotonic_seconds();
  CudaDriverInfo d = probe_cuda_driver(ctx, nullptr);
  CHECK(monotonic_seconds() - t0 < 2.0);
  CHECK(d.status == DriverStatus::error);
  CHECK(d.error.find("did not return") != std::string::npos);
  CHECK(d.library_version == "535.104.05");
}

namespace {

// The driver as probe_rank reads it from an image tree under --root: nothing is loaded.
CudaDriverInfo static_driver(const Scratch& s) {
  ProbeOptions o = options_with({});
  o.root = s.dir();
  return probe_rank(o).cuda_driver;
}

const std::string kImageLib = image_lib_dir();

}  // namespace

TEST_CASE("read statically, the stub is recognised by what it is, wherever it lies") {
  Scratch s;
  // The stub copied over the driver's name outside any stubs/ directory: only its contents
  // (built from stub.c) give it away.
  s.copy(standin("cuda-stub/libcuda.so.1"), std::string(kImageLib) + "/libcuda.so.1");
  CudaDriverInfo d = static_driver(s);
  CHECK(d.status == DriverStatus::stub);
  CHECK(d.error.find("stub.c") != std::string::npos);
  CHECK(is_toolkit_stub(standin("cuda-stub/libcuda.so.1"), "/usr/lib/libcuda.so.1"));
  // A small real-looking driver in an ordinary directory is not the stub.
  CHECK_FALSE(is_toolkit_stub(standin("cuda-550.54.15/libcuda.so.550.54.15"),
                              "/usr/lib/libcuda.so.550.54.15"));
}

TEST_CASE("read statically, the toolkit's real stub is the stub too", "[cuda-stub]") {
  // About 100 KB, stub.c in .symtab.
  const std::string real = cuda_stub();
  REQUIRE_FALSE(real.empty());
  CHECK(is_toolkit_stub(real, "/opt/libcuda.so.1"));
  Scratch t;
  t.copy(real, std::string(kImageLib) + "/libcuda.so.1");
  CHECK(static_driver(t).status == DriverStatus::stub);
}

TEST_CASE("read statically, the CUDA version comes from the driver version by NVIDIA's table") {
  Scratch s;
  s.copy(standin("cuda-550.54.15/libcuda.so.550.54.15"),
         std::string(kImageLib) + "/libcuda.so.550.54.15");
  s.link("libcuda.so.550.54.15", std::string(kImageLib) + "/libcuda.so.1");
  CudaDriverInfo d = static_driver(s);
  CHECK(d.status == DriverStatus::ok);
  CHECK(d.library_version == "550.54.15");
  CHECK(d.cuda_version == "12.4");
  CHECK(d.cuda_version_from == "driver-table");
  CHECK(d.driver_api_version == 0);  // never asked
  CHECK_FALSE(d.forward_compat);
}

TEST_CASE("read statically, a driver without a version in its name is version-unknown, not ok") {
  Scratch s;
  s.copy(standin("cuda-550.54.15/libcuda.so.550.54.15"), std::string(kImageLib) + "/libcuda.so.1");
  CudaDriverInfo d = static_driver(s);
  CHECK(d.status == DriverStatus::version_unknown);
  CHECK(d.cuda_version.empty());
  CHECK(d.error.find("no driver version") != std::string::npos);
  CHECK(std::string(to_string(d.status)) == "version-unknown");
}

TEST_CASE("a libcuda from the cuda-compat package is marked as forward compatibility") {
  Scratch s;
  s.copy(standin("cuda-550.54.15/libcuda.so.550.54.15"),
         "usr/local/cuda-12.4/compat/libcuda.so.550.54.15");
  s.link("libcuda.so.550.54.15", "usr/local/cuda-12.4/compat/libcuda.so.1");
  // Live: NGC images put the compat directory on LD_LIBRARY_PATH.
  ProbeContext ctx = context(s.path("usr/local/cuda-12.4/compat"));
  ctx.kernel_version_files = {s.write("sys-version", "470.57.02\n")};
  CudaDriverInfo d = probe_cuda_driver(ctx, nullptr);
  CHECK(d.status == DriverStatus::ok);
  CHECK(d.forward_compat);
  CHECK(d.cuda_version_from == "cuDriverGetVersion");
  CHECK(d.kernel_module_version == "470.57.02");
  CHECK(in_cuda_compat_dir("/usr/local/cuda/compat/lib.real/libcuda.so.1"));
  CHECK_FALSE(in_cuda_compat_dir("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  CHECK_FALSE(in_cuda_compat_dir("/opt/compat/libcuda.so.1"));
}

TEST_CASE("version strings parse") {
  CHECK(driver_version_from_filename("/usr/lib/libcuda.so.550.54.15") == "550.54.15");
  CHECK(driver_version_from_filename("/usr/lib/libcuda.so.1") == "");
  CHECK(driver_version_from_filename("/x/libcuda.so") == "");
  CHECK(parse_kernel_module_version("550.54.15\n") == "550.54.15");
  CHECK(parse_kernel_module_version(
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC "
            "2023\n") == "535.104.05");
  CHECK(parse_kernel_module_version("garbage") == "");
  CHECK(cuda_version_from_code(12040) == "12.4");
  CHECK(cuda_version_from_code(13000) == "13.0");
}
