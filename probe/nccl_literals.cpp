#include "probe/nccl_literals.h"

#include <sys/stat.h>

#include "probe/nccl_probe.h"

namespace denpex {

bool NcclLiterals::read(const std::string& host, std::string* version, std::string* cuda_build) {
  struct stat st {};
  if (::stat(host.c_str(), &st) != 0) return read_nccl_literal(host, version, cuda_build);
  auto it = seen_.find(host);
  const bool same = it != seen_.end() && it->second.dev == st.st_dev &&
                    it->second.ino == st.st_ino && it->second.size == st.st_size &&
                    it->second.mtime.tv_sec == st.st_mtim.tv_sec &&
                    it->second.mtime.tv_nsec == st.st_mtim.tv_nsec;
  if (!same) {
    Seen s;
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
    s.found = read_nccl_literal(host, &s.version, &s.cuda_build);
    it = seen_.insert_or_assign(host, std::move(s)).first;
  }
  if (!it->second.found) return false;
  *version = it->second.version;
  *cuda_build = it->second.cuda_build;
  return true;
}

}  // namespace denpex
