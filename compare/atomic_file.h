// Writing an output file (a report, a baseline, metrics) so that a reader never sees half of
// it: the one file writer of the project (with baseline.*, the only file access in compare/).
// The program runs as root on paths others may control (a Slurm prolog's job directory, a
// report template): a writer never follows a symbolic link at the last component, never
// replaces a device or a FIFO, and its temporary files have names no one can guess.
#pragma once

#include <cstdio>
#include <string>

namespace denpex {

// What write_file_atomically does with `path`, decided from lstat() (and the name itself for
// the descriptor paths).
enum class OutputTarget {
  standard_stream,  // "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to
                    // the descriptor already open, whatever it is (a terminal, a pipe, a file
                    // the shell opened for `> out.txt`), never opened or renamed
  replace,          // a regular file, or nothing yet: replaced atomically
  write_through,    // a character device (/dev/null, /dev/tty) or a FIFO: opened and written
  refused,          // a symbolic link, a directory, a socket, a block device: left alone
};

// Which descriptor a standard-stream name stands for ("-" is 1); -1 for any other path.
int standard_stream_fd(const std::string& path);

// Writes `text` to `path`:
//   - a regular file, or a name not there yet: through a temporary file in the same directory
//     (".NAME.XXXXXX", random, created O_EXCL|O_NOFOLLOW, mode 0644 less the umask, or the
//     replaced file's permission bits), fsync'd, then renamed over `path`;
//   - a character device or a FIFO: opened without O_CREAT/O_TRUNC and written (a FIFO with
//     no reader is an error, not a wait);
//   - "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to that descriptor
//     (stdout and stderr through their stdio streams, flushed);
//   - anything else (a symbolic link, a directory, a socket, a block device): refused.
// Returns false and sets *error to one line, "<path>: <what it is or what failed>: <why or
// what to do>" ("cannot write to standard output: <why>" for the standard streams), and
// removes the temporary file. Never throws.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

// Writes all of `text` to `stream` (stdout or stderr) and flushes it. Returns false and sets
// *error to "cannot write to standard output: <why>" (or "standard error") on failure.
bool write_standard_stream(std::FILE* stream, const std::string& text, std::string* error);

enum class NewFileStatus {
  written,   // `path` did not exist and now holds `text`, whole
  exists,    // `path` existed (or another writer made it first): left as it was
  failed,    // could not write; *error says why
};

// Writes `text` to `path` only if no file is there, never replacing one (a symbolic link there,
// even a dangling one, counts as a file): a temporary file named as above is hard-linked into
// place (link() fails when the name exists, atomically, even between hosts on NFS, and never
// follows a link at the new name); on a filesystem without hard links, an O_EXCL|O_NOFOLLOW
// create written in place. Two writers racing for one name: exactly one gets `written`.
// *error is set for `exists` too ("<path>: exists"). Never throws.
NewFileStatus write_new_file(const std::string& path, const std::string& text, std::string* error);

}  // namespace denpex
