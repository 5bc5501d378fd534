// The "NCCL version" literals one probe has read, by file. A probe meets the same libnccl up to
// four times (the NCCL the loader resolves, PyTorch's wheel and its record, the node's
// candidates), and each read scans the library's .rodata (160-220 KB: 0.1-0.3 ms), with every
// rank of a node probing at once.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <map>
#include <string>

namespace denpex {

class NcclLiterals {
 public:
  // What read_nccl_literal(host, ...) returns (probe/nccl_probe.h), reading the file only the
  // first time it is asked for with the same identity (device, inode, size, modification
  // time); a file that cannot be stat'ed is read every time.
  bool read(const std::string& host, std::string* version, std::string* cuda_build);

 private:
  struct Seen {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec mtime{};
    bool found = false;
    std::string version;
    std::string cuda_build;
  };
  std::map<std::string, Seen> seen_;
};

}  // namespace denpex
