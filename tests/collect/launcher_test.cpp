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
