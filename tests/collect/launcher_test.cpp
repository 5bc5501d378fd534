#include <catch2/catch.hpp>

#include "collect/launcher.h"

using namespace denpex;

TEST_CASE("MPI mode only under a launcher") {
  CHECK(detect_launcher({}).kind == Launcher::none);
  // A Slurm prolog sees SLURM_* but no PMI: it must run alone.
  CHECK(detect_launcher({{"SLURM_JOB_ID", "12"}, {"SLURM_PROCID", "0"}}).kind == Launcher::none);
  LauncherInfo o = detect_launcher({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "3"}});
  CHECK(o.kind == Launcher::open_mpi);
  CHECK(o.rank_hint == 3);
  CHECK(detect_launcher({{"PMIX_RANK", "7"}}).kind == Launcher::pmix);
  CHECK(detect_launcher({{"PMIX_RANK", "7"}}).rank_hint == 7);
  CHECK(detect_launcher({{"PMI_FD", "5"}}).kind == Launcher::pmi);
  CHECK(detect_launcher({{"PMI_RANK", "x"}}).rank_hint == -1);
}

TEST_CASE("mpiexec.hydra is recognised by its proxy's variables") {
  // What Debian 12's mpiexec.hydra (MPICH 4.0.2) sets for rank 1 of 3.
  LauncherInfo h = detect_launcher({{"PMI_FD", "8"}, {"PMI_RANK", "1"}, {"PMI_SIZE", "3"},
                                    {"MPI_LOCALNRANKS", "3"}, {"MPI_LOCALRANKID", "1"}});
  CHECK(h.kind == Launcher::hydra);
  CHECK(h.rank_hint == 1);
  CHECK(h.announced_size == 3);
  CHECK(h.size_evidence == "PMI_SIZE");
  CHECK(detect_launcher({{"PMI_PORT", "node1:4242"}, {"PMI_ID", "0"}}).kind == Launcher::hydra);
  // srun --mpi=pmi2: PMI variables without hydra's.
  LauncherInfo s = detect_launcher({{"PMI_FD", "12"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "4"},
                                    {"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "4"}});
  CHECK(s.kind == Launcher::pmi);
  CHECK(s.announced_size == 4);
}

TEST_CASE("the size the launcher announced, from the launcher's own variable first") {
  CHECK(detect_launcher({{"OMPI_COMM_WORLD_SIZE", "8"}}).announced_size == 8);
  // mpirun inside a Slurm allocation: its ranks inherit the daemons' step (one task per node).
  LauncherInfo m = detect_launcher({{"OMPI_COMM_WORLD_SIZE", "16"}, {"SLURM_PROCID", "0"},
                                    {"SLURM_STEP_NUM_TASKS", "2"}});
  CHECK(m.announced_size == 16);
  CHECK(m.size_evidence == "OMPI_COMM_WORLD_SIZE");
  // srun --mpi=pmix sets no size of PMIx's own: the step's task count is the job's size.
  LauncherInfo p = detect_launcher({{"PMIX_RANK", "2"}, {"SLURM_PROCID", "2"},
                                    {"SLURM_STEP_NUM_TASKS", "4"}});
  CHECK(p.announced_size == 4);
  CHECK(p.size_evidence == "SLURM_STEP_NUM_TASKS");
  // A PMIx launcher outside Slurm (prterun without Open MPI's variables) announces nothing.
  CHECK(detect_launcher({{"PMIX_RANK", "0"}}).announced_size == -1);
  CHECK(detect_launcher({{"PMI_RANK", "0"}, {"PMI_SIZE", "zero"}}).announced_size == -1);
}

TEST_CASE("a task of a multi-task Slurm step, not a prolog or a one-task step") {
  SlurmTask t = detect_slurm_task({{"SLURM_JOB_ID", "17"}, {"SLURM_STEP_ID", "0"},
                                   {"SLURM_PROCID", "2"}, {"SLURM_STEP_NUM_TASKS", "4"}});
  CHECK(t.multi_task);
  CHECK(t.procid == 2);
  CHECK(t.ntasks == 4);
  CHECK(t.step == "17.0");
  // The prolog: job variables, no task.
  CHECK_FALSE(detect_slurm_task({{"SLURM_JOB_ID", "17"}, {"SLURM_JOB_NODELIST", "n1"}}).multi_task);
  CHECK_FALSE(detect_slurm_task({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "1"}}).multi_task);
  CHECK_FALSE(detect_slurm_task({{"SLURM_STEP_NUM_TASKS", "4"}}).multi_task);
}
