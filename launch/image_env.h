// An image's declared environment (its config's `Env`), read from a file as data: what
// `denpex-probe --root DIR --image-env FILE` probes instead of its own process environment, so
// nothing an image declares (LD_AUDIT, LD_PRELOAD, LD_LIBRARY_PATH, LD_DEBUG_OUTPUT) ever
// reaches the environment of the process that reads the image.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace denpex {

// An environment larger than this could not be a process's (the kernel's ARG_MAX is 2 MiB with
// the default 8 MiB stack); the file is JSON, so escaping gets some room.
constexpr size_t kMaxImageEnvBytes = 4u << 20;
// One "NAME=VALUE" longer than this is refused by execve (MAX_ARG_STRLEN): no container could
// start with it, so it is not part of any process's environment.
constexpr size_t kMaxImageEnvEntryBytes = 128u << 10;

// ok          `env` holds the entries (possibly none); `notes` lists entries ignored
// unreadable  the file cannot be opened or read, or is not a regular file
// too_large   the file is larger than kMaxImageEnvBytes
// malformed   not a JSON array (of at most one level: entries are strings)
enum class ImageEnvStatus { ok, unreadable, too_large, malformed };

struct ImageEnv {
  ImageEnvStatus status = ImageEnvStatus::malformed;
  std::map<std::string, std::string> env;  // a later entry of a name wins, as with env(1)
  std::vector<std::string> notes;          // one line per ignored entry, at most a few, then a count
  std::string error;                       // one line when status != ok
};

// Parses the file's text: a JSON array of "NAME=VALUE" strings, as an image config's `Env` holds
// them. Entries that are not strings, have no '=' or an empty name, hold a NUL, or are longer
// than kMaxImageEnvEntryBytes are ignored with a note. Never throws.
ImageEnv parse_image_env(const std::string& text);

// Reads and parses the file at `path` (opened without blocking: a FIFO is refused, not waited
// on). Never throws; failures are the status and `error`.
ImageEnv read_image_env(const std::string& path);

}  // namespace denpex
