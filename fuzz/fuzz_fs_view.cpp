// libFuzzer target: paths seen from a root (probe/fs_view.h), on a tree the input builds (files,
// directories, symlinks to anywhere). Beyond not crashing, what fs_view promises is checked: a
// resolved path never leaves the root, whatever the links say.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz/fuzz_util.h"
#include "probe/fs_view.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static denpex_fuzz::FuzzTree tree;
  FuzzedDataProvider in(data, size);
  std::string view_path = "/" + in.ConsumeRandomLengthString(256);
  tree.build(&in);
  denpex::FsView fs{tree.root()};
  denpex::Resolved r = denpex::resolve(fs, view_path);
  if (r.status == denpex::ResolveStatus::ok) {
    if (r.path.empty() || r.path[0] != '/') __builtin_trap();
    if (!denpex_fuzz::really_inside(tree.root(), denpex::host_path(fs, r.path))) {
      std::fprintf(stderr, "fuzz_fs_view: %s resolved to %s, host %s: outside %s\n", view_path.c_str(),
                   r.path.c_str(), denpex::host_path(fs, r.path).c_str(), tree.root().c_str());
      __builtin_trap();
    }
  }
  bool truncated = false;
  (void)denpex::list_dir(fs, view_path, 64, &truncated);
  std::string text;
  (void)denpex::read_small_file(fs, view_path, 4096, &text, &truncated);
  if (text.size() > 4096) __builtin_trap();
  return 0;
}
