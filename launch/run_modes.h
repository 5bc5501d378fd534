// The ways denpex-probe runs, each returning the contract's exit code (0 pass, 1 reject,
// 2 could not judge). main() picks one.
#pragma once

#include "collect/launcher.h"
#include "launch/options.h"

namespace denpex {

// This process alone (no launcher), or --root DIR (static, nothing loaded).
int run_single(const Options& o);

// Every rank of an MPI job: probe (in a child forked before MPI_Init), gather to rank 0, judge,
// agree on the exit code. REQUIRES: started by a launcher (collect/launcher.h). Returns 2 (one
// line on stderr) when no MPI library resolves or its transport plugin is missing
// (collect/mpi_plugin_loader.h), and when MPI_Comm_size is smaller than the size the launcher
// announced: N singletons never pass.
int run_mpi(const Options& o, const LauncherInfo& launcher, int* argc, char*** argv);

// A task of a multi-task Slurm step started without an MPI launcher (srun -n 4 without
// --mpi=pmix): it cannot see the other tasks. Without --rank-report: 2, and one line saying to
// use srun --mpi=pmix or --mpi=pmi2. With --rank-report: writes this task's record (rank =
// SLURM_PROCID) and judges nothing (denpex-probe compare judges the records together): 0 when
// the record was written, 2 when it could not be, or when --json, --baseline, --write-baseline
// or --prometheus ask for a judgement here.
int run_slurm_task(const Options& o, const SlurmTask& task);

// Every worker of a torchrun job (collect/launcher.h's TorchrunWorker): probe in a child,
// gather through the c10d store torchrun's agent serves on MASTER_ADDR:MASTER_PORT
// (collect/store_job.h), rank 0 judges, every rank exits with its verdict. Returns 2 (one
// line naming MASTER_ADDR:MASTER_PORT and what to do) when the store cannot be reached or
// speaks a protocol this probe does not know, when the agent serves no store for its workers
// (torch <= 2.3 with the c10d rendezvous), and when a variable is malformed.
int run_torchrun(const Options& o, const TorchrunWorker& w);

// A process whose environment announces a world of more than one rank (collect/launcher.h's
// AnnouncedWorld) but that no launcher joined to the others: never judged alone. Without
// --rank-report: 2 and one line saying how to gather. With it: as run_slurm_task.
int run_announced_task(const Options& o, const AnnouncedWorld& world);

// compare PATH...: saved rank records judged as one job.
int run_compare(const Options& o);

// Seconds one isolated step (a dlopen, a driver call) may take within a --timeout budget:
// there are at most a handful of such steps per probe, so each gets a fraction.
double step_timeout_for(double timeout);

}  // namespace denpex
