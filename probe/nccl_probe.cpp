#include "probe/nccl_probe.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "probe/elf_file.h"
#include "probe/isolated_call.h"
#include "probe/nccl_version.h"
#include "probe/trust.h"
#include "probe/version_call.h"

namespace denpex {

bool read_nccl_literal(const std::string& host, std::string* version, std::string* cuda_build) {
  NcclVersion v = pick_nccl_literal(find_strings(host, "NCCL version "));
  if (!v.ok) return false;
  *version = v.version;
  *cuda_build = v.cuda_build;
  return true;
}

namespace {

// Runs in the isolated child. Answers one line: "V <code> <loaded path>", "E <reason>" or
// "S <missing symbol>".
std::string load_and_ask(const std::string& what) {
  VersionCall c = call_version_function(what, "ncclGetVersion");
  switch (c.status) {
    case VersionCallStatus::no_library: return "E " + c.error;
    case VersionCallStatus::no_symbol: return "S ncclGetVersion";
    case VersionCallStatus::loaded: break;
  }
  if (c.rc != 0) return fmt::format("E ncclGetVersion returned {}", c.rc);
  return fmt::format("V {} {}", c.value, c.loaded_path);
}

}  // namespace

NcclInfo inspect_nccl(const ProbeContext& ctx, const Resolution& res,
                      std::vector<std::string>* untrusted) {
  NcclInfo n;
  n.origin = res.origin;
  n.depends_on_cpu = describe_cpu_alternatives(res);
  // Each CPU-dependent copy with its version (read statically): what differs is what matters.
  for (size_t i = 0; i < res.cpu_alternatives.size() && i < n.depends_on_cpu.size(); ++i) {
    const CpuAlternative& a = res.cpu_alternatives[i];
    std::string version, cuda_build;
    if (a.status == LoadStatus::found &&
        read_nccl_literal(host_path(ctx.loader.fs, a.real_path), &version, &cuda_build))
      n.depends_on_cpu[i] += " (NCCL " + version + ")";
  }
  if (res.status == LoadStatus::not_found) {
    if (!res.skipped.empty()) {
      n.status = NcclStatus::unloadable;
      n.path = res.skipped.front().path;
      n.error = fmt::format("{} is {}; the loader skips it and finds no other libnccl.so.2 "
                            "(dlopen says \"No such file or directory\")",
                            res.skipped.front().path, res.skipped.front().reason);
    } else {
      n.status = NcclStatus::missing;
      n.error = "no libnccl.so.2 in LD_PRELOAD, LD_LIBRARY_PATH, the loader cache or the "
                "system library directories";
    }
    return n;
  }
  if (res.status == LoadStatus::fatal) {
    n.status = NcclStatus::unloadable;
    n.path = res.path;
    n.error = fmt::format("{}: {}", res.path, res.error);
    return n;
  }
  n.path = res.real_path;
  n.method = "dlopen";
  const std::string host = host_path(ctx.loader.fs, n.path);
  read_nccl_literal(host, &n.static_version, &n.cuda_build);

  // Under --root nothing is loaded: the tree's host path is no trust question (issue 11).
  TrustCheck trust =
      check_trusted_with_needed(ctx.loader, n.path, ctx.running_as_root && ctx.allow_load);
  if (!ctx.allow_load || !trust.trusted) {
    if (!trust.trusted && untrusted)
      untrusted->push_back(fmt::format("{} ({})", n.path, trust.reason));
    // What the live check learns from dlsym, the symbol table says too: a library without
    // ncclGetVersion is no NCCL a program could use. (An unreadable symbol table proves
    // nothing either way.)
    ElfInfo elf = read_elf(host, true);
    const bool exports_get_version =
        elf.status != ElfStatus::ok || elf.dynsyms.empty() ||
        std::any_of(elf.dynsyms.begin(), elf.dynsyms.end(), [](const ElfSymbol& s) {
          return s.defined && s.name == "ncclGetVersion";
        });
    if (!exports_get_version) {
      n.status = NcclStatus::unloadable;
      n.error = fmt::format("{} does not export ncclGetVersion: not an NCCL library (read "
                            "statically)",
                            n.path);
      return n;
    }
    n.status = NcclStatus::not_loaded;
    n.version = n.static_version;
    NcclVersion v = parse_nccl_literal("NCCL version " + n.version);
    n.version_code = nccl_version_code(v);
    if (n.version.empty()) n.error = "no NCCL version literal in the file";
    return n;
  }

  IsolatedResult r = run_isolated([&] { return load_and_ask(host); }, ctx.step_timeout);
  if (r.status != IsolatedStatus::ok) {
    n.status = NcclStatus::unloadable;
    n.error = fmt::format("loading {} {}", n.path, describe(r, ctx.step_timeout));
    return n;
  }
  const std::string& out = r.output;
  if (out.rfind("V ", 0) == 0) {
    char* end = nullptr;
    n.version_code = static_cast<int>(std::strtol(out.c_str() + 2, &end, 10));
    n.version = nccl_version_from_code(n.version_code);
    n.status = NcclStatus::ok;
    // The literal may carry a suffix ("2.21.5a") the code cannot; keep the richer spelling when
    // both agree on the number.
    if (!n.static_version.empty() && n.static_version.rfind(n.version, 0) == 0)
      n.version = n.static_version;
    return n;
  }
  n.status = NcclStatus::unloadable;
  if (out.rfind("S ", 0) == 0) {
    n.error = fmt::format("{} does not export ncclGetVersion: not an NCCL library", n.path);
  } else if (out.rfind("E ", 0) == 0) {
    n.error = fmt::format("dlopen of {} failed: {}", n.path, out.substr(2));
  } else {
    n.error = fmt::format("loading {} gave no answer", n.path);
  }
  return n;
}

NcclInfo probe_system_nccl(const ProbeContext& ctx, std::vector<std::string>* untrusted) {
  Resolution res = resolve_library(ctx.loader, "libnccl.so.2", Requester{});
  return inspect_nccl(ctx, res, untrusted);
}

}  // namespace denpex
