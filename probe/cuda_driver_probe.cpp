#include "probe/cuda_driver_probe.h"

#include <sys/stat.h>

#include <cctype>

#include <fmt/format.h>

#include "probe/cuda_compat.h"
#include "probe/elf_file.h"
#include "probe/library_probe.h"

namespace denpex {

namespace {

constexpr int kCudaErrorStubLibrary = 34;

// The toolkit's stub (lib/stubs/libcuda.so) is about 100 KB and is built from stub.c, whose
// name its symbol table keeps; a real driver is tens of MB. A small file in a stubs/ directory
// is taken as the stub too (a stripped copy), but the location alone never decides: a stub
// copied to /usr/lib as libcuda.so.1 is still the stub.
constexpr long long kStubMaxBytes = 2 << 20;

bool is_version(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  int dots = 0;
  for (char c : s) {
    if (c == '.') ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return dots >= 1;
}

}  // namespace

bool is_toolkit_stub(const std::string& host_file, const std::string& view_path) {
  for (const auto& source : source_file_symbols(host_file))
    if (source == "stub.c") return true;
  struct stat st {};
  if (::stat(host_file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return view_path.find("/stubs/") != std::string::npos && st.st_size < kStubMaxBytes &&
         driver_version_from_filename(view_path).empty();
}

bool in_cuda_compat_dir(const std::string& path) {
  // cuda-compat installs into /usr/local/cuda-X.Y/compat/ (NGC images: compat/lib.real, reached
  // through compat/lib).
  size_t at = path.find("/compat/");
  if (at == std::string::npos) return false;
  size_t dir = path.rfind('/', at == 0 ? 0 : at - 1);
  return dir != std::string::npos && path.compare(dir + 1, 4, "cuda") == 0;
}

std::string driver_version_from_filename(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  const std::string prefix = "libcuda.so.";
  if (base.rfind(prefix, 0) != 0) return "";
  std::string v = base.substr(prefix.size());
  return is_version(v) ? v : "";
}

std::string parse_kernel_module_version(const std::string& text) {
  std::string first = text.substr(0, text.find('\n'));
  // /proc/driver/nvidia/version puts the version after "Kernel Module" (and, for the open
  // module, after "for <arch>"); /sys/module/nvidia/version holds just the version.
  size_t from = first.find("Kernel Module");
  std::string rest = from == std::string::npos ? first : first.substr(from);
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
    size_t j = i;
    while (j < rest.size() && !std::isspace(static_cast<unsigned char>(rest[j]))) ++j;
    std::string word = rest.substr(i, j - i);
    if (is_version(word)) return word;
    i = j;
  }
  return "";
}

std::string cuda_version_from_code(int code) {
  if (code <= 0) return "";
  return fmt::format("{}.{}", code / 1000, (code % 1000) / 10);
}

namespace {

// Not loaded (not trusted, or an image's): the file speaks for itself.
void driver_read_statically(const LibraryProbe& lp, CudaDriverInfo* out) {
  CudaDriverInfo& d = *out;
  const char* why = lp.not_loaded == NotLoaded::image
                        ? "read from the image, not loaded"
                        : "read, not loaded (writable by another user)";
  // Without loading it the file speaks for itself: the stub by its contents, a real driver
  // by its file name (libcuda.so.<driver version>), and the CUDA version that driver
  // supports by NVIDIA's table.
  if (is_toolkit_stub(lp.host, d.library)) {
    d.status = DriverStatus::stub;
    d.error = fmt::format("{} is the CUDA toolkit's stub driver (built from stub.c, {}); "
                          "every CUDA call would return CUDA_ERROR_STUB_LIBRARY",
                          d.library, why);
    return;
  }
  if (d.library_version.empty()) {
    d.status = DriverStatus::version_unknown;
    d.error = fmt::format("{}: {}; its file name carries no driver version, so the CUDA "
                          "version it supports is unknown",
                          d.library, why);
    return;
  }
  d.status = DriverStatus::ok;
  d.cuda_version = cuda_version_for_driver(d.library_version);
  if (!d.cuda_version.empty()) d.cuda_version_from = "driver-table";
}

// What cuDriverGetVersion, called in the isolated child, answered.
void driver_from_call(const LibraryProbe& lp, CudaDriverInfo* out) {
  CudaDriverInfo& d = *out;
  switch (lp.call.status) {
    case VersionCallStatus::no_library:
      d.status = DriverStatus::error;
      d.error = fmt::format("loading {}: {}", d.library, lp.call.error);
      return;
    case VersionCallStatus::no_symbol:
      d.status = DriverStatus::error;
      d.error = fmt::format("loading {}: does not export cuDriverGetVersion", d.library);
      return;
    case VersionCallStatus::loaded:
      break;
  }
  const int rc = lp.call.rc;
  const int v = lp.call.value;
  if (rc == kCudaErrorStubLibrary) {
    d.status = DriverStatus::stub;
    d.error = fmt::format("{} is the CUDA toolkit's stub driver (cuDriverGetVersion returned "
                          "CUDA_ERROR_STUB_LIBRARY)", d.library);
    return;
  }
  if (rc != 0) {
    d.status = DriverStatus::error;
    d.error = fmt::format("cuDriverGetVersion returned CUDA error {}", rc);
    return;
  }
  d.status = DriverStatus::ok;
  d.driver_api_version = v;
  d.cuda_version = cuda_version_from_code(v);
  if (!d.cuda_version.empty()) d.cuda_version_from = "cuDriverGetVersion";
}

}  // namespace

CudaDriverInfo probe_cuda_driver(const ProbeContext& ctx, std::vector<std::string>* untrusted) {
  CudaDriverInfo d;
  for (const auto& f : ctx.kernel_version_files) {
    std::string text;
    if (read_small_file(FsView{}, f, 4096, &text, nullptr)) {
      d.kernel_module_version = parse_kernel_module_version(text);
      if (!d.kernel_module_version.empty()) break;
    }
  }
  Resolution res = resolve_library(ctx.loader, kDriverLibrary, Requester{});
  LibraryProbe lp = probe_library(ctx, res, kDriverVersionSymbol, untrusted);
  switch (lp.step) {
    case LibraryStep::not_found:
      d.status = DriverStatus::missing;
      d.error = res.skipped.empty()
                    ? "no libcuda.so.1 in LD_LIBRARY_PATH, the loader cache or the system "
                      "library directories"
                    : fmt::format("{} is {}", res.skipped.front().path, res.skipped.front().reason);
      return d;
    case LibraryStep::fatal:
      d.status = DriverStatus::error;
      d.library = res.path;
      d.error = fmt::format("{}: {}", res.path, res.error);
      return d;
    case LibraryStep::not_loaded:
    case LibraryStep::isolation_failed:
    case LibraryStep::called:
      break;
  }
  d.library = lp.path;
  d.library_version = driver_version_from_filename(d.library);
  d.forward_compat = in_cuda_compat_dir(d.library);
  if (lp.step == LibraryStep::not_loaded) {
    driver_read_statically(lp, &d);
  } else if (lp.step == LibraryStep::isolation_failed) {
    d.status = DriverStatus::error;
    d.error = fmt::format("cuDriverGetVersion in {} {}", d.library, lp.error);
  } else {
    driver_from_call(lp, &d);
  }
  return d;
}

}  // namespace denpex
