#include "probe/nccl_probe.h"

#include <algorithm>

#include <fmt/format.h>

#include "probe/elf_file.h"
#include "probe/library_probe.h"
#include "probe/nccl_version.h"

namespace denpex {

bool read_nccl_literal(const std::string& host, std::string* version, std::string* cuda_build) {
  NcclVersion v = pick_nccl_literal(find_strings(host, "NCCL version "));
  if (!v.ok) return false;
  *version = v.version;
  *cuda_build = v.cuda_build;
  return true;
}

namespace {

// No library found, or only ones the loader skips.
void nccl_not_found(const Resolution& res, NcclInfo* n) {
  if (!res.skipped.empty()) {
    n->status = NcclStatus::unloadable;
    n->path = res.skipped.front().path;
    n->error = fmt::format("{} is {}; the loader skips it and finds no other libnccl.so.2 "
                           "(dlopen says \"No such file or directory\")",
                           res.skipped.front().path, res.skipped.front().reason);
  } else {
    n->status = NcclStatus::missing;
    n->error = "no libnccl.so.2 in LD_PRELOAD, LD_LIBRARY_PATH, the loader cache or the "
               "system library directories";
  }
}

// Not loaded (not trusted): what the live check learns from dlsym, the symbol table says too: a
// library without ncclGetVersion is no NCCL a program could use. (An unreadable symbol table
// proves nothing either way.) The version is the file's literal.
void nccl_read_statically(const LibraryProbe& lp, NcclInfo* n) {
  ElfInfo elf = read_elf(lp.host, true);
  const bool exports_get_version =
      elf.status != ElfStatus::ok || elf.dynsyms.empty() ||
      std::any_of(elf.dynsyms.begin(), elf.dynsyms.end(), [](const ElfSymbol& s) {
        return s.defined && s.name == "ncclGetVersion";
      });
  if (!exports_get_version) {
    n->status = NcclStatus::unloadable;
    n->error = fmt::format("{} does not export ncclGetVersion: not an NCCL library (read "
                           "statically)",
                           n->path);
    return;
  }
  n->status = NcclStatus::not_loaded;
  n->version = n->static_version;
  NcclVersion v = parse_nccl_literal("NCCL version " + n->version);
  n->version_code = nccl_version_code(v);
  if (n->version.empty()) n->error = "no NCCL version literal in the file";
}

// What ncclGetVersion, called in the isolated child, answered.
void nccl_from_call(const VersionCall& c, NcclInfo* n) {
  n->status = NcclStatus::unloadable;
  switch (c.status) {
    case VersionCallStatus::no_library:
      n->error = fmt::format("dlopen of {} failed: {}", n->path, c.error);
      return;
    case VersionCallStatus::no_symbol:
      n->error = fmt::format("{} does not export ncclGetVersion: not an NCCL library", n->path);
      return;
    case VersionCallStatus::loaded:
      break;
  }
  if (c.rc != 0) {
    n->error = fmt::format("ncclGetVersion in {} returned {}", n->path, c.rc);
    return;
  }
  n->version_code = c.value;
  n->version = nccl_version_from_code(n->version_code);
  n->status = NcclStatus::ok;
  // The literal may carry a suffix ("2.21.5a") the code cannot; keep the richer spelling when
  // both agree on the number.
  if (!n->static_version.empty() && n->static_version.rfind(n->version, 0) == 0)
    n->version = n->static_version;
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
        ctx.nccl_literals.read(host_path(ctx.loader.fs, a.real_path), &version, &cuda_build))
      n.depends_on_cpu[i] += " (NCCL " + version + ")";
  }
  LibraryProbe lp = probe_library(ctx, res, "ncclGetVersion", untrusted);
  switch (lp.step) {
    case LibraryStep::not_found:
      nccl_not_found(res, &n);
      return n;
    case LibraryStep::fatal:
      n.status = NcclStatus::unloadable;
      n.path = res.path;
      n.error = fmt::format("{}: {}", res.path, res.error);
      return n;
    case LibraryStep::not_loaded:
    case LibraryStep::isolation_failed:
    case LibraryStep::called:
      break;
  }
  n.path = lp.path;
  n.method = "dlopen";
  ctx.nccl_literals.read(lp.host, &n.static_version, &n.cuda_build);
  if (lp.step == LibraryStep::not_loaded) {
    nccl_read_statically(lp, &n);
  } else if (lp.step == LibraryStep::isolation_failed) {
    n.status = NcclStatus::unloadable;
    n.error = fmt::format("loading {} {}", n.path, lp.error);
  } else {
    nccl_from_call(lp.call, &n);
  }
  return n;
}

NcclInfo probe_system_nccl(const ProbeContext& ctx, std::vector<std::string>* untrusted) {
  Resolution res = resolve_library(ctx.loader, "libnccl.so.2", Requester{});
  return inspect_nccl(ctx, res, untrusted);
}

}  // namespace denpex
