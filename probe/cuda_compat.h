// NVIDIA's CUDA compatibility rules, in one place: which CUDA version a driver supports natively,
// and whether a build for some CUDA version runs on a given driver (natively, through minor
// version compatibility, or not at all). probe/ uses the table to derive a driver's CUDA version
// when the driver cannot be asked (read statically); compare/ uses the verdicts.
//
// Source: NVIDIA's CUDA Compatibility guide and each toolkit's release notes, table 3 ("CUDA
// Toolkit and corresponding driver versions"), and its "Minor Version Compatibility" section.
// Depends on nothing (part of the record target, which every layer links).
#pragma once

#include <string>

namespace denpex {

// Compares dotted driver versions ("550.54.15", "580") component by component, numerically;
// missing components count as 0. Returns -1, 0 or 1; 0 when either does not parse.
int compare_driver_versions(const std::string& a, const std::string& b);

// The newest CUDA version ("12.4") whose toolkit driver (release notes, table 3, Linux) is at or
// below `driver_version` ("550.54.15" -> "12.4", "535.104.05" -> "12.2"). "" when the version
// does not parse or is older than every row (before CUDA 10.0).
std::string cuda_version_for_driver(const std::string& driver_version);

// The minimum driver of a major release family for minor version compatibility ("12" ->
// "525.60.13"); "" for families without it (before CUDA 11) or unknown ones.
std::string minor_compat_minimum_driver(int cuda_major);

// How a build for CUDA `built_for` ("12.9") runs on a driver:
//   native      the driver supports that CUDA version (or newer)
//   minor       same major family, driver at or above the family's minimum: runs with a limited
//               feature set (no JIT of PTX newer than the driver; some APIs return
//               CUDA_ERROR_NOT_SUPPORTED)
//   too_old     a newer major family than the driver's, below the family's minimum, or a
//               family without minor version compatibility
//   unknown     a version does not parse: nothing can be said
enum class CudaCompat { native, minor, too_old, unknown };

// `driver_cuda` is the CUDA version the driver reports ("12.4"); `driver_version` its version
// ("550.54.15"), "" when unknown (then the family minimum is checked against the oldest driver
// of `driver_cuda`'s toolkit, so a driver of the same family counts only if that toolkit's
// driver already meets it).
CudaCompat cuda_compat(const std::string& built_for, const std::string& driver_cuda,
                       const std::string& driver_version);

}  // namespace denpex
