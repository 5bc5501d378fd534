// The paths a reading mode was given (diagnose, collectives) as the files to read: a directory
// becomes the regular files in it, "-" stays standard input. One function, so both modes say the
// same thing about a path they cannot use.
#pragma once

#include <string>
#include <vector>

namespace denpex {

enum class DirectoryWalk {
  top,        // a directory's own regular files
  recursive,  // and those of every directory below it
};

// The files to read, in the order given (a directory's files sorted). Returns an empty list and
// sets *error to one line naming the path when one does not exist, cannot be looked up (a link
// loop, a directory on the way that cannot be searched), is a directory that cannot be read (or
// holds one that cannot: a file skipped without a word could be the one that matters), or is a
// directory with no files. Entries of a directory that are not read are named in *skipped, one
// line each: FIFOs, sockets, devices and dangling links (never opened: a FIFO would block), a
// folder reached again through a link (a loop; a linked folder is otherwise followed once), and
// with DirectoryWalk::top the folders inside. Never throws.
std::vector<std::string> input_files(const std::vector<std::string>& paths, DirectoryWalk walk, std::string* error,
                                     std::vector<std::string>* skipped);

}  // namespace denpex
