#include <catch2/catch.hpp>

#include "probe/cuda_driver_probe.h"
#include "probe/isolated_call.h"
#include "scratch.h"

using namespace denpex;
using namespace denpex_test;

namespace {

ProbeContext context(const std::string& llp) {
  ProbeContext ctx;
  ctx.loader = make_loader_env(FsView{}, "", llp);
  ctx.loader.cache = LdCache{};
  ctx.loader.system_dirs.clear();
  ctx.running_as_root = ::geteuid() == 0;
  ctx.step_timeout = 2.0;
  ctx.kernel_version_files.clear();
  return ctx;
}

const char* kStubDir = "/usr/local/cuda-13.0/lib64/stubs";

}  // namespace

TEST_CASE("no driver on this machine: missing") {
  ProbeContext ctx;
  ctx.loader = make_loader_env(FsView{}, "", "");
  ctx.kernel_version_files.clear();
  CudaDriverInfo d = probe_cuda_driver(ctx, nullptr);
  if (d.status == DriverStatus::ok) return;  // a machine with a real driver
  CHECK(d.status == DriverStatus::missing);
}

TEST_CASE("the CUDA toolkit's real stub is recognised by its answer, 34") {
  if (::access((std::string(kStubDir) + "/libcuda.so").c_str(), R_OK) != 0) return;
  Scratch s;
  // The classic container mistake: the stub made to look like the driver.
  s.link(std::string(kStubDir) + "/libcuda.so", "fake-driver/libcuda.so.1");
  CudaDriverInfo d = probe_cuda_driver(context(s.path("fake-driver")), nullptr);
  CHECK(d.status == DriverStatus::stub);
  char* real = ::realpath((std::string(kStubDir) + "/libcuda.so").c_str(), nullptr);
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
