// Waiting for a launcher to take this process's output off its pipes before the job is ended.
//
// Launchers read a rank's stdout and stderr from pipes and forward them. When rank 0 ends the
// job with MPI_Abort, MPICH's mpiexec.hydra exits as soon as the abort reaches it, and reads no
// more output: a report still in the pipe (its proxy had not been scheduled to read it) is lost,
// and the job script sees the exit code with no report. The proxy sends what it has read up the
// same connection that later carries the abort, so once the pipe is empty the output travels
// ahead of the abort. A file or a terminal holds nothing back: there is nothing to wait for.
#pragma once

namespace denpex {

enum class DrainStatus {
  drained,    // a pipe, and its reader has taken every byte written to it
  not_a_pipe, // a file, a terminal, a socket: nothing waits in a pipe buffer
  timed_out,  // bytes were still unread at the deadline (a reader that is stopped, or gone)
  error,      // the descriptor is closed or cannot be asked (fstat or FIONREAD failed)
};

// Waits, polling every few milliseconds, until the pipe on `fd` holds no unread byte or
// `deadline` (monotonic_seconds) passes. Never blocks past the deadline; never reads the pipe.
// Returns how it ended (above).
DrainStatus wait_until_read(int fd, double deadline);

}  // namespace denpex
