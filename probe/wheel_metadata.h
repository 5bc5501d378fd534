// What pip recorded about the distributions in a site-packages directory, read from their
// .dist-info directories (the wheel format, PEP 427/491; core metadata, PEP 566; PEP 508
// requirements; PEP 440 versions): which distributions are installed at which version, what
// they require, and what files their RECORD says they own. Files only; nothing is imported.
#pragma once

#include <string>
#include <vector>

#include "probe/fs_view.h"

namespace denpex {

// A project name in PEP 503 normal form: lower case, every run of '-', '_' and '.' one '-'
// ("NVIDIA_NCCL.cu12" -> "nvidia-nccl-cu12").
std::string normalize_project(const std::string& name);

struct DistInfo {
  std::string dir;       // view path of the <name>-<version>.dist-info directory
  std::string project;   // normalized project name ("nvidia-nccl-cu12")
  std::string version;   // "2.20.5"
};

// The .dist-info directories in `site` whose normalized project name starts with `prefix`
// (normalized too; "" for all), sorted by directory name. A name that does not split into
// name-version is left out. Empty when the directory cannot be read.
std::vector<DistInfo> list_dist_infos(const FsView& fs, const std::string& site,
                                      const std::string& prefix);

// One Requires-Dist line of METADATA: "nvidia-nccl-cu12 (==2.20.5) ; platform_system ==
// \"Linux\"" or "nvidia-nccl-cu12==2.26.2; platform_machine == \"x86_64\"".
struct Requirement {
  std::string project;   // normalized
  std::string spec;      // "==2.20.5", ">=2.18.1,<3" ("" when any version will do)
  std::string marker;    // after ';', trimmed ("" when none)
  std::string text;      // the line's value as written, for messages
};

// Parses one Requires-Dist value. Returns false for a value without a project name.
bool parse_requirement(const std::string& value, Requirement* out);

// The Requires-Dist lines of <dist_info>/METADATA (headers only: the body after the first blank
// line is the long description). Returns false with *error when METADATA cannot be read or is
// larger than 1 MiB; lines that do not parse are skipped.
bool read_requirements(const FsView& fs, const std::string& dist_info,
                       std::vector<Requirement>* out, std::string* error);

// Whether a requirement's marker holds on a Linux machine `machine` ("x86_64", "aarch64") when
// no extra is requested. Clauses on platform_system, sys_platform, platform_machine and extra
// are evaluated; any other clause (python_version, ...) is taken to hold. "and"/"or" without
// parentheses are honoured; a marker with parentheses is taken to hold.
bool marker_applies(const std::string& marker, const std::string& machine);

enum class SpecMatch { yes, no, unknown };

// Whether `version` satisfies a PEP 440 specifier list ("==2.20.5", ">=2.16.5,<3", "==2.20.*").
// Release segments are compared numerically; a pre/post/local part is ignored. unknown for an
// operator it does not know (~=, ===) or a version that does not start with a number.
SpecMatch spec_matches(const std::string& version, const std::string& spec);

// The size RECORD gives `file` (a path relative to the site directory, "nvidia/nccl/lib/
// libnccl.so.2"). -1 when RECORD cannot be read, is larger than 4 MiB, or does not list the file
// with a size.
long long record_size(const FsView& fs, const std::string& dist_info, const std::string& file);

}  // namespace denpex
