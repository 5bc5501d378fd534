// The diagnosis of a failed job from what the room read (evidence/log_reader.h): findings with
// evidence, fix and verify; the initiating rank, the collateral ranks and the launcher's claim;
// the verdict and exit code; and the reports (JSON per the contract's "diagnose
// additions", and text for a person). No files: the caller reads, this judges.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compare/finding.h"
#include "compare/group.h"
#include "compare/shell_command.h"
#include "diagnose/blame.h"
#include "diagnose/facts_judge.h"

namespace denpex::diag {

struct DxFinding {
  Finding f;
  std::vector<Evidence> evidence;   // file, line, text; text may be empty for a collective call
                                    // line (not kept in memory): fill_evidence_text() fetches it
  ShellCommand verify;              // a command that confirms the fix (compare/shell_command.h)
  ShellCommand verify_or;           // another form of it (srun for mpirun); text empty when none
  std::string verify_note;          // prose on its own line beside verify: when and where to run it
                                    // (after the job's rerun, on a saved copy of standard input); or ""
};

struct Diagnosis {
  std::vector<DxFinding> findings;  // most severe first
  BlameResult blame;
  int nranks = 0;                   // ranks (or processes) that appear in the evidence
  int nhosts = 0;
  std::string verdict;              // "reject" or "inconclusive"
  int exit_code = 2;                // 1 reject, 2 could not judge (never 0: see diagnose())
  std::string inconclusive;         // the one sentence naming what to add, when exit_code == 2
};

// Judges everything `r` read (after r.finish()). A diagnosis never passes: with no error finding
// the answer is exit 2 and a diagnose-inconclusive finding saying what to add. Never throws for
// input the readers accepted.
Diagnosis diagnose(const LogReader& r);

// Adds findings judged elsewhere (saved rank records given among the logs) and settles the
// verdict again: an error finding turns "inconclusive" into "reject" and drops the
// diagnose-inconclusive finding. Never throws.
void add_findings(Diagnosis* d, std::vector<DxFinding> more);

// Saved rank records given among the logs (read by the caller), judged by the live gate's
// rules as `compare` would, as findings whose evidence names the files. Never throws.
std::vector<DxFinding> judge_saved_records(const std::vector<ConfigGroup>& groups, const std::vector<std::string>& paths);

// Every host the input names (facts, failures, watchdog lines, launcher entries, call sequences),
// each once, in the order first met.
std::vector<std::string> input_hosts(const LogReader& r);

// The gate on the hosts a finding names, as its `verify` command (mpirun) and the same under
// srun. A host name that cannot be quoted safely into a command gives constant text with argv
// empty instead: nothing from the input is printed as a command.
struct GateVerify {
  ShellCommand verify, verify_or;
};
// `known` is every host the input names: one of them that the finding does not name (a host that
// agreed) runs the gate beside the odd ones, since a gate on the odd hosts alone compares nothing
// and would pass whether or not the fix worked. Without such a host the gate runs on the job's
// whole allocation (srun/mpirun, one task per node).
GateVerify gate_verify(const std::vector<std::string>& hosts, const std::vector<std::string>& known);
void set_gate_verify(DxFinding* x, const std::vector<std::string>& hosts, const std::vector<std::string>& known);

// The cluster report with the contract's diagnose additions, plus "inputs" (files, lines,
// records, unreadable lines with samples, notes).
nlohmann::json diagnosis_json(const Diagnosis& d, const LogReader& r);

// The human report: two lines first (who started it and what it was; who followed and how),
// the launcher's claim, then the findings with evidence, fix and verify, then the input summary.
std::string render_diagnosis(const Diagnosis& d, const LogReader& r);

}  // namespace denpex::diag
