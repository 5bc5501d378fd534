// The ways denpex-probe runs, each returning the contract's exit code (0 pass, 1 reject,
// 2 could not judge). main() picks one.
#pragma once

#include "launch/options.h"

namespace denpex {

// This process alone (no launcher), or --root DIR (static, nothing loaded).
int run_single(const Options& o);

// Every rank of an MPI job: probe (in a child forked before MPI_Init), gather to rank 0, judge,
// agree on the exit code. REQUIRES: started by a launcher (collect/launcher.h).
int run_mpi(const Options& o, int* argc, char*** argv);

// compare PATH...: saved rank records judged as one job.
int run_compare(const Options& o);

// Seconds one isolated step (a dlopen, a driver call) may take within a --timeout budget:
// there are at most a handful of such steps per probe, so each gets a fraction.
double step_timeout_for(double timeout);

}  // namespace denpex
