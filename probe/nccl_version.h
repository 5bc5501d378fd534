// NCCL version strings and codes, as NCCL itself writes them.
#pragma once

#include <string>
#include <vector>

namespace denpex {

struct NcclVersion {
  bool ok = false;
  std::string version;     // "2.28.9" (a suffix such as "a" or "-1" is kept: "2.21.5a")
  int major = 0, minor = 0, patch = 0;
  std::string cuda_build;  // "13.0" from "+cuda13.0" or "compiled with CUDA 13.0"; may be ""
};

// Parses one literal NCCL embeds in every build since 2.3: "NCCL version 2.28.9+cuda13.0"
// (init.cc's VERSION_STRING) or "NCCL version 2.28.9 compiled with CUDA 13.0". Returns ok=false
// for anything else, including format strings ("NCCL version %d.%d.%d").
NcclVersion parse_nccl_literal(const std::string& literal);

// Picks the version from all "NCCL version ..." strings found in a file: the first one that
// parses, preferring one that carries a CUDA build. ok=false when none parses.
NcclVersion pick_nccl_literal(const std::vector<std::string>& literals);

// NCCL_VERSION_CODE of a version: major*10000+minor*100+patch from 2.9 on, major*1000+minor*100+
// patch before (nccl.h's NCCL_VERSION macro changed in 2.9). 0 when !v.ok, or when minor or
// patch have more than two digits (no encoding holds them).
int nccl_version_code(const NcclVersion& v);

}  // namespace denpex
