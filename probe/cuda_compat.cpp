#include "probe/cuda_compat.h"

#include <cstdlib>
#include <vector>

namespace denpex {

namespace {

// CUDA toolkit -> the driver it shipped with (Linux x86_64, GA release), from each toolkit's
// release notes, table 3 (REFERENCE.md cites 12.4 -> 550.54.14, 12.2 -> 535.54.03,
// 12.0 -> 525.60.13, 11.8 -> 520.61.05). Newest first.
struct ToolkitDriver {
  const char* cuda;
  const char* driver;
};
constexpr ToolkitDriver kToolkitDrivers[] = {
    {"13.0", "580.65.06"}, {"12.9", "575.51.03"}, {"12.8", "570.26"},    {"12.6", "560.28.03"},
    {"12.5", "555.42.02"}, {"12.4", "550.54.14"}, {"12.3", "545.23.06"}, {"12.2", "535.54.03"},
    {"12.1", "530.30.02"}, {"12.0", "525.60.13"}, {"11.8", "520.61.05"}, {"11.7", "515.43.04"},
    {"11.6", "510.39.01"}, {"11.5", "495.29.05"}, {"11.4", "470.42.01"}, {"11.3", "465.19.01"},
    {"11.2", "460.27.03"}, {"11.1", "455.23"},    {"11.0", "450.36.06"}, {"10.2", "440.33"},
    {"10.1", "418.39"},    {"10.0", "410.48"},
};

// Minor version compatibility (CUDA 11 and later): a build of one major family runs on any
// driver at or above the family's minimum (REFERENCE.md: 11.x >= 450.80.02, 12.x >= 525.60.13,
// 13.x >= 580).
struct FamilyMinimum {
  int major;
  const char* driver;
};
constexpr FamilyMinimum kFamilyMinimums[] = {{11, "450.80.02"}, {12, "525.60.13"}, {13, "580"}};

bool parse_numbers(const std::string& s, std::vector<long>* out) {
  out->clear();
  if (s.empty()) return false;
  size_t i = 0;
  while (i <= s.size()) {
    size_t dot = s.find('.', i);
    std::string part = s.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    if (part.empty() || part.size() > 9) return false;
    for (char c : part)
      if (c < '0' || c > '9') return false;
    out->push_back(std::strtol(part.c_str(), nullptr, 10));
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  return true;
}

int compare_numbers(std::vector<long> a, std::vector<long> b) {
  while (a.size() < b.size()) a.push_back(0);
  while (b.size() < a.size()) b.push_back(0);
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

std::string toolkit_driver(const std::string& cuda) {
  std::vector<long> want, row;
  if (!parse_numbers(cuda, &want)) return "";
  for (const auto& t : kToolkitDrivers) {
    parse_numbers(t.cuda, &row);
    if (compare_numbers(row, want) <= 0) return t.driver;  // newest toolkit at or below `cuda`
  }
  return "";
}

}  // namespace

int compare_driver_versions(const std::string& a, const std::string& b) {
  std::vector<long> x, y;
  if (!parse_numbers(a, &x) || !parse_numbers(b, &y)) return 0;
  return compare_numbers(x, y);
}

std::string cuda_version_for_driver(const std::string& driver_version) {
  std::vector<long> d;
  if (!parse_numbers(driver_version, &d)) return "";
  for (const auto& t : kToolkitDrivers)
    if (compare_driver_versions(driver_version, t.driver) >= 0) return t.cuda;
  return "";
}

std::string minor_compat_minimum_driver(int cuda_major) {
  for (const auto& f : kFamilyMinimums)
    if (f.major == cuda_major) return f.driver;
  return "";
}

CudaCompat cuda_compat(const std::string& built_for, const std::string& driver_cuda,
                       const std::string& driver_version) {
  std::vector<long> build, have;
  if (!parse_numbers(built_for, &build) || !parse_numbers(driver_cuda, &have))
    return CudaCompat::unknown;
  if (compare_numbers(build, have) <= 0) return CudaCompat::native;
  // Minor version compatibility works within a major family only: a 12.x build never runs on
  // an 11.x driver.
  if (build[0] != have[0]) return CudaCompat::too_old;
  std::string minimum = minor_compat_minimum_driver(static_cast<int>(build[0]));
  if (minimum.empty()) return CudaCompat::too_old;
  // Without the driver's own version, the driver is at least the one its CUDA version's
  // toolkit shipped with.
  std::string driver = driver_version.empty() ? toolkit_driver(driver_cuda) : driver_version;
  if (driver.empty() || compare_driver_versions(driver, minimum) < 0) return CudaCompat::too_old;
  return CudaCompat::minor;
}

}  // namespace denpex
