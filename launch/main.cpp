// denpex-probe: picks the run mode from the command line and the launcher variables, and turns
// its result into the process exit code. Everything else lives in probe/, collect/, compare/.
#include <unistd.h>

#include <string>

#include "collect/launcher.h"
#include "launch/collectives_cmd.h"
#include "launch/diagnose_cmd.h"
#include "launch/explain_cmd.h"
#include "launch/options.h"
#include "launch/run_modes.h"
#include "launch/standard_output.h"
#include "probe/probe.h"

namespace {

// The program's name in the last line about standard output: "denpex-probe diagnose", ...
std::string tool_name(denpex::RunMode mode) {
  using denpex::RunMode;
  switch (mode) {
    case RunMode::compare: return "denpex-probe compare";
    case RunMode::collectives: return "denpex-probe collectives";
    case RunMode::diagnose: return "denpex-probe diagnose";
    case RunMode::explain: return "denpex-probe explain";
    case RunMode::root:
    case RunMode::probe: break;
  }
  return "denpex-probe";
}

int run(const denpex::Options& o, int* argc, char*** argv) {
  using namespace denpex;
  switch (o.mode) {
    case RunMode::compare: return run_compare(o);
    case RunMode::collectives: {
      CollectivesOptions c;
      c.paths = o.paths;
      c.json_path = o.json_path;
      c.quiet = o.quiet;
      c.strict = o.strict;
      c.decode = decode_limits_of(o);
      c.output = report_output_of(o);
      return run_collectives(c);
    }
    case RunMode::diagnose: {
      DiagnoseOptions d;
      d.paths = o.paths;
      d.json_path = o.json_path;
      d.quiet = o.quiet;
      d.decode = decode_limits_of(o);
      d.output = report_output_of(o);
      return run_diagnose(d);
    }
    case RunMode::explain: return run_explain({o.explain_name, o.explain_json});
    case RunMode::root: return run_single(o);
    case RunMode::probe: break;
  }
  const auto env = current_environment();
  // torchrun first: its workers inherit the variables of whatever started torchrun itself
  // (srun's task of the agent, an mpirun around it), which describe the agents, not them.
  const TorchrunWorker worker = detect_torchrun(env);
  if (worker.present) return run_torchrun(o, worker);
  const LauncherInfo launcher = detect_launcher(env);
  if (launcher.kind != Launcher::none) return run_mpi(o, launcher, argc, argv);
  const SlurmTask task = detect_slurm_task(env);
  if (task.multi_task) return run_slurm_task(o, task);
  const AnnouncedWorld world = announced_world(env);
  if (world.size > 1) return run_announced_task(o, world);
  return run_single(o);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace denpex;
  Options o;
  switch (parse_options(argc, argv, &o)) {
    // --help and --version print too.
    case ParseStatus::exit_ok: return close_standard_output("denpex-probe", 0);
    case ParseStatus::usage: return close_standard_output("denpex-probe", 2);
    case ParseStatus::parsed: break;
  }
  // MPI ranks reach this after MPI_Finalize (or never, when the job ends in MPI_Abort): rank 0's
  // report was checked where it was written (launch/report_output.cpp) and its failure is the
  // code every rank agreed on.
  return close_standard_output(tool_name(o.mode), run(o, &argc, &argv));
}
