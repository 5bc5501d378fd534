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

TEST_CASE("a torchrun worker is told by the env:// variables") {
  const std::map<std::string, std::string> env = {
      {"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"GROUP_RANK", "1"},
      {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}, {"TORCHELASTIC_RUN_ID", "abc"},
      {"TORCHELASTIC_RESTART_COUNT", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
  TorchrunWorker w = detect_torchrun(env);
  CHECK(w.present);
  CHECK(w.error.empty());
  CHECK(w.rank == 3);
  CHECK(w.group_rank == 1);
  CHECK(w.master_port == 29500);
  CHECK(w.restart_count == 2);
  CHECK(w.agent_store == "True");
  CHECK(job_id(env) == "abc.r2");
  CHECK(run_identity(env) == "torchrun:abc:2:10.0.0.1:29500");
  // The case: RANK and WORLD_SIZE without a store to gather through.
  const std::map<std::string, std::string> alone = {
      {"RANK", "1"}, {"WORLD_SIZE", "16"}, {"TORCHELASTIC_RUN_ID", "abc"}};
  CHECK_FALSE(detect_torchrun(alone).present);
  AnnouncedWorld a = announced_world(alone);
  CHECK(a.size == 16);
  CHECK(a.rank == 1);
  CHECK(a.size_evidence == "WORLD_SIZE=16");
  auto bad = env;
  bad["RANK"] = "4";
  CHECK(detect_torchrun(bad).error.find("RANK=4") != std::string::npos);
  bad = env;
  bad["MASTER_PORT"] = "http";
  CHECK(detect_torchrun(bad).error.find("MASTER_PORT=http is not a TCP port") != std::string::npos);
}

TEST_CASE("the world other launchers announce") {
  CHECK(announced_world({}).size == -1);
  CHECK(announced_world({{"WORLD_SIZE", "1"}, {"RANK", "0"}}).size == 1);
  CHECK(announced_world({{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_RANK", "5"}}).rank == 5);
  CHECK(announced_world({{"MV2_COMM_WORLD_SIZE", "2"}}).size == 2);
  // A size of 1 from one variable does not hide a larger one from another.
  AnnouncedWorld w = announced_world({{"WORLD_SIZE", "1"}, {"SLURM_STEP_NUM_TASKS", "4"},
                                      {"SLURM_PROCID", "2"}});
  CHECK(w.size == 4);
  CHECK(w.rank == 2);
  CHECK(job_id({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "0"}}) == "77.0");
  CHECK(job_id({{"TORCHELASTIC_RUN_ID", "none"}, {"TORCHELASTIC_RESTART_COUNT", "0"}}) == "none");
  CHECK(job_id({}).empty());
  CHECK(run_identity({}).empty());
}

TEST_CASE("no silent singletons: every launcher's variables announce a world") {
  // The size variables of launchers the probe cannot gather through.
  struct Case { const char* size; const char* rank; };
  for (const Case& c : {Case{"FLUX_JOB_SIZE", "FLUX_TASK_RANK"}, Case{"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"},
                        Case{"HOROVOD_SIZE", "HOROVOD_RANK"}, Case{"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"}}) {
    INFO(c.size);
    AnnouncedWorld w = announced_world({{c.size, "4"}, {c.rank, "3"}});
    CHECK(w.size == 4);
    CHECK(w.rank == 3);
    CHECK_FALSE(w.at_least);
    CHECK(w.size_evidence == std::string(c.size) + "=4");
  }
  // torchrun's node share is a floor.
  AnnouncedWorld local = announced_world({{"LOCAL_WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}});
  CHECK(local.size == 8);
  CHECK(local.at_least);
  // A rank above 0 with no size: at least rank + 1.
  for (const char* v : {"RANK", "PMIX_RANK", "PALS_RANKID", "ALPS_APP_PE", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK"}) {
    INFO(v);
    AnnouncedWorld w = announced_world({{v, "5"}});
    CHECK(w.size == 6);
    CHECK(w.rank == 5);
    CHECK(w.at_least);
    CHECK(w.size_evidence == std::string(v) + "=5");
  }
  // Rank 0 alone, or a world of one, announces nothing more: such a process may pass alone.
  CHECK(announced_world({{"PMIX_RANK", "0"}}).size == -1);
  CHECK(announced_world({{"FLUX_JOB_SIZE", "1"}, {"FLUX_TASK_RANK", "0"}}).size == 1);
  CHECK(announced_world({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}).size == -1);
  // The rank variable of a launcher that decided, for the message about a world of one.
  LauncherInfo l = detect_launcher({{"PMI_FD", "3"}, {"PMI_RANK", "2"}});
  CHECK(l.rank_hint == 2);
  CHECK(l.rank_variable == "PMI_RANK");
}
