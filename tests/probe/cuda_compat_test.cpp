#include <catch2/catch.hpp>

#include "probe/cuda_compat.h"

using namespace denpex;

TEST_CASE("a driver's CUDA version follows NVIDIA's toolkit driver table") {
  CHECK(cuda_version_for_driver("550.54.15") == "12.4");
  CHECK(cuda_version_for_driver("550.54.14") == "12.4");  // the 12.4 toolkit's own driver
  CHECK(cuda_version_for_driver("550.40.07") == "12.3");
  CHECK(cuda_version_for_driver("535.104.05") == "12.2");
  CHECK(cuda_version_for_driver("525.60.13") == "12.0");
  CHECK(cuda_version_for_driver("470.57.02") == "11.4");
  CHECK(cuda_version_for_driver("580.65.06") == "13.0");
  CHECK(cuda_version_for_driver("999.1") == "13.0");
  CHECK(cuda_version_for_driver("390.12") == "");
  CHECK(cuda_version_for_driver("not.a.version") == "");
  CHECK(cuda_version_for_driver("") == "");
}

TEST_CASE("driver versions compare numerically, missing parts as zero") {
  CHECK(compare_driver_versions("535.104.05", "535.54.03") > 0);
  CHECK(compare_driver_versions("580", "580.65.06") < 0);
  CHECK(compare_driver_versions("580.0.0", "580") == 0);
  CHECK(compare_driver_versions("x", "580") == 0);
}

TEST_CASE("minor version compatibility within a major family, from its minimum driver") {
  // NCCL +cuda12.9 and PyTorch cu128 on a 550 or 535 driver: the common case on clusters.
  CHECK(cuda_compat("12.9", "12.4", "550.54.15") == CudaCompat::minor);
  CHECK(cuda_compat("12.8", "12.2", "535.104.05") == CudaCompat::minor);
  CHECK(cuda_compat("12.4", "12.4", "550.54.15") == CudaCompat::native);
  CHECK(cuda_compat("12.1", "12.4", "550.54.15") == CudaCompat::native);
  // A newer major family never runs.
  CHECK(cuda_compat("13.0", "12.9", "575.51.03") == CudaCompat::too_old);
  CHECK(cuda_compat("12.4", "11.4", "470.57.02") == CudaCompat::too_old);
  // Below the family minimum (11.x needs 450.80.02): CUDA 11.0's own driver is too old.
  CHECK(cuda_compat("11.4", "11.0", "450.36.06") == CudaCompat::too_old);
  CHECK(cuda_compat("11.8", "11.0", "450.80.02") == CudaCompat::minor);
  // Before CUDA 11 there is no minor version compatibility.
  CHECK(cuda_compat("10.2", "10.1", "418.39") == CudaCompat::too_old);
  // The driver's own version unknown: its CUDA version's toolkit driver stands in.
  CHECK(cuda_compat("12.9", "12.0", "") == CudaCompat::minor);
  CHECK(cuda_compat("11.4", "11.0", "") == CudaCompat::too_old);
  CHECK(cuda_compat("", "12.4", "550.54.15") == CudaCompat::unknown);
  CHECK(minor_compat_minimum_driver(12) == "525.60.13");
  CHECK(minor_compat_minimum_driver(13) == "580");
  CHECK(minor_compat_minimum_driver(10) == "");
}
