#include "probe/library_probe.h"

#include <sstream>

#include <fmt/format.h>

#include "probe/isolated_call.h"
#include "probe/trust.h"

namespace denpex {

std::string encode_version_call(const VersionCall& call) {
  // "<status> <rc> <value> <path bytes>\n" + path + error: lengths, not separators, so a path
  // or a dlerror() text with newlines in it cannot shift the fields.
  return fmt::format("{} {} {} {}\n", static_cast<int>(call.status), call.rc, call.value,
                     call.loaded_path.size()) +
         call.loaded_path + call.error;
}

bool decode_version_call(const std::string& text, VersionCall* call) {
  const size_t eol = text.find('\n');
  if (eol == std::string::npos) return false;
  std::istringstream head(text.substr(0, eol));
  int status = -1;
  VersionCall c;
  size_t path_bytes = 0;
  if (!(head >> status >> c.rc >> c.value >> path_bytes)) return false;
  std::string rest;
  if (head >> rest) return false;  // more fields than encode writes
  if (status < static_cast<int>(VersionCallStatus::loaded) ||
      status > static_cast<int>(VersionCallStatus::no_symbol))
    return false;
  if (path_bytes > text.size() - eol - 1) return false;
  c.status = static_cast<VersionCallStatus>(status);
  c.loaded_path = text.substr(eol + 1, path_bytes);
  c.error = text.substr(eol + 1 + path_bytes);
  *call = std::move(c);
  return true;
}

bool prepare_library_call(const ProbeContext& ctx, const Resolution& res,
                          const char* version_symbol, std::vector<std::string>* untrusted,
                          LibraryProbe* lp) {
  if (res.status == LoadStatus::not_found) return false;
  if (res.status == LoadStatus::fatal) {
    lp->step = LibraryStep::fatal;
    return false;
  }
  lp->path = res.real_path;
  lp->host = host_path(ctx.loader.fs, lp->path);
  lp->step = LibraryStep::not_loaded;
  if (version_symbol == nullptr) {
    lp->not_loaded = NotLoaded::no_call;
    return false;
  }
  // Under --root nothing is loaded: the tree's host path is no trust question.
  TrustCheck trust =
      check_trusted_with_needed(ctx.loader, lp->path, ctx.running_as_root && ctx.allow_load);
  if (!trust.trusted) {
    if (untrusted) untrusted->push_back(fmt::format("{} ({})", lp->path, trust.reason));
    lp->not_loaded = NotLoaded::untrusted;
    return false;
  }
  if (!ctx.allow_load) {
    lp->not_loaded = NotLoaded::image;
    return false;
  }
  return true;
}

void take_version_answer(const IsolatedResult& r, double timeout_seconds, LibraryProbe* lp) {
  if (r.status != IsolatedStatus::ok) {
    lp->step = LibraryStep::isolation_failed;
    lp->error = describe(r, timeout_seconds);
  } else if (!decode_version_call(r.output, &lp->call)) {
    lp->step = LibraryStep::isolation_failed;
    lp->error = "gave no answer";
  } else {
    lp->step = LibraryStep::called;
  }
}

LibraryProbe probe_library(const ProbeContext& ctx, const Resolution& res,
                           const char* version_symbol, std::vector<std::string>* untrusted) {
  LibraryProbe lp;
  // A call made already was prepared the same way (found, trusted, loadable): its answer is
  // taken without checking the file again.
  if (res.status == LoadStatus::found && version_symbol != nullptr) {
    const std::string host = host_path(ctx.loader.fs, res.real_path);
    for (const PrefetchedCall& p : ctx.prefetched) {
      if (p.host != host || p.symbol != version_symbol) continue;
      lp.path = res.real_path;
      lp.host = host;
      take_version_answer(p.answer, ctx.step_timeout, &lp);
      return lp;
    }
  }
  if (!prepare_library_call(ctx, res, version_symbol, untrusted, &lp)) return lp;
  const std::string host = lp.host;
  IsolatedResult r = run_isolated(
      [&host, version_symbol] {
        return encode_version_call(call_version_function(host, version_symbol));
      },
      ctx.step_timeout);
  take_version_answer(r, ctx.step_timeout, &lp);
  return lp;
}

}  // namespace denpex
