// Telling what an input is by its first bytes, and undoing its compression: what open_input
// (input_source.h) does to every file and to standard input, here behind a function that takes
// any ByteSource so that tests and fuzz targets can drive it from memory.
//
// By content, never by name: gzip (1f 8b), zstd (28 b5 2f fd, and skippable frames), xz
// (fd 37 7a 58 5a 00) are decoded through zlib, libzstd and liblzma; the first decoded block
// (64 KiB) is then looked at: NUL bytes, or more than 1 byte in 20 a control character that text
// does not use, make it binary, named with what it looks like (an ELF file, a zip or bzip2
// archive...) and what to give instead. Two binary contents that readers behind the room know
// pass through: a pickle (a PyTorch Flight Recorder dump, encoding "pickle") and a
// libdenpex-trace.so v2 trace (encoding "denpex-trace").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "evidence/input_source.h"

namespace denpex::evidence {

// Sniffs `raw` (named `name` in messages: the path, or "standard input") and returns it decoded.
// Never throws. Statuses: ok (encoding "text", "gzip", "zstd", "xz", or for the binary contents
// let through "pickle" / "denpex-trace", prefixed "gzip+" etc. when they were compressed);
// binary (not text and not a format we decode: the message names the file, what it looks like
// and what to give instead); corrupt (compressed, but damaged before any byte of text decoded:
// the message says why, `cut` where); unreadable (the first read failed). A compressed stream
// that is damaged later, or passes a limit of `limits`, reads to that point and then ends (read
// returns 0); its source's cut() then says why, where, and what to do. A raw read that fails
// (an I/O error) still returns -1 with its message.
OpenedInput open_decoded(std::unique_ptr<ByteSource> raw, const std::string& name,
                         const DecodeLimits& limits = DecodeLimits{});

// A source that first returns `head`, then reads on from `rest` (nullptr: nothing more). Lets a
// reader look at the start of an input and hand the whole of it on.
std::unique_ptr<ByteSource> prefixed_source(std::string head, std::unique_ptr<ByteSource> rest);

}  // namespace denpex::evidence
