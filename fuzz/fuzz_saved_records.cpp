// libFuzzer target: a saved rank record given to `diagnose` beside a well-formed one of another
// NCCL version (collect/saved_reports.h, diagnose/diagnosis.h judge_saved_records). Whatever the
// record holds (host names, paths), every verify command made from it is its own words to a shell
// reader and holds no byte a terminal acts on; one that cannot be is prose without a command.
#include <cstddef>
#include <cstdint>
#include <string>

#include "collect/saved_reports.h"
#include "compare/shell_command.h"
#include "compare/terminal_text.h"
#include "diagnose/diagnosis.h"
#include "fuzz/fuzz_util.h"

namespace {

const char kOther[] =
    R"({"rank": 0, "host": "node01", "pid": 1000, "probe_version": "0.1.0", "arch": "x86_64",
        "container": false, "mode": "live",
        "nccl": {"status": "ok", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9", "version": "2.28.9",
                 "version_code": 22809, "cuda_build": "12.4", "method": "dlopen", "origin": "ld.so.cache"}})";

void check(const denpex::ShellCommand& c) {
  if (c.argv.empty()) return;
  if (!denpex::terminal_safe_word(c.text)) __builtin_trap();
  auto back = denpex::shell_words(c.text);
  if (!back || *back != c.argv) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  denpex_fuzz::MemFile f(data, size);
  denpex_fuzz::MemFile other(reinterpret_cast<const uint8_t*>(kOther), sizeof kOther - 1);
  if (!f.ok() || !other.ok()) return 0;
  denpex::SavedJob job = denpex::load_saved_job({other.path(), f.path()}, 2);
  if (job.status != denpex::SavedStatus::ok) return 0;
  for (const auto& x : denpex::diag::judge_saved_records(job.groups, {other.path(), f.path()})) {
    check(x.verify);
    check(x.verify_or);
  }
  return 0;
}
