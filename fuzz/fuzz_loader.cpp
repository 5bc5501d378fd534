// libFuzzer target: the loader's resolution (probe/loader.h resolve_library), as the probe runs
// it under --root: an image tree the input builds (libraries as arbitrary bytes, symlinks to
// anywhere, an etc/ld.so.cache and etc/ld.so.conf of any content), LD_PRELOAD, LD_LIBRARY_PATH and
// a requester's RPATH/RUNPATH from the input. A found library must lie inside the image.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "probe/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static denpex_fuzz::FuzzTree tree;
  FuzzedDataProvider in(data, size);
  std::string preload = in.ConsumeRandomLengthString(128);
  std::string llp = in.ConsumeRandomLengthString(128);
  std::string rpath = in.ConsumeRandomLengthString(128);
  bool runpath = in.ConsumeBool();
  std::string name = in.ConsumeBool() ? "libnccl.so.2" : in.ConsumeRandomLengthString(64);
  tree.build(&in);
  denpex::FsView fs{tree.root()};
  denpex::LoaderEnv env = denpex::make_loader_env(fs, preload, llp);
  denpex::ElfInfo elf;
  elf.status = denpex::ElfStatus::ok;
  (runpath ? elf.runpath : elf.rpath) = {rpath};
  elf.has_runpath = runpath;
  denpex::Resolution r =
      denpex::resolve_library(env, name, denpex::Requester{"/usr/lib/libtorch_cuda.so", &elf, {}, {}});
  if (r.status == denpex::LoadStatus::found &&
      !denpex_fuzz::really_inside(tree.root(), denpex::host_path(fs, r.real_path)))
    __builtin_trap();
  (void)denpex::resolve_library(env, name, denpex::Requester{});
  return 0;
}
