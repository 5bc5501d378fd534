// NCCL RAS's text report (what `ncclras` prints by default, STATUS and VERBOSE STATUS) read into
// the same RasReport the JSON reader fills (evidence/ras_json.h), so that one situation gives the
// same findings in either form. The layout is NCCL's src/ras/client_support.cc
// (rasClientRunInit, rasClientRunComms, rasClientBreakDownErrors):
//
//   NCCL version 2.26.2 compiled with CUDA 12.6
//   Job summary / Nodes Processes GPUs table
//   Group  Comms  Nodes  Ranks  Ranks  Ranks  Status  Errors      (one row per group of comms)
//   Errors:   INCOMPLETE (processes not answering), DEAD (processes considered dead),
//             "#g-i (hash) INCOMPLETE" with the comm's missing ranks, "#g-i (hash) ERROR" with
//             "Initialization/Asynchronous errors on N ranks" and "Rank R reported <error>"
//   Warnings: TIMEOUT, "#g-i (hash) MISMATCH" with "different status" and "different <op>
//             operation counts" blocks
//
// RAS lists ranks one by one only when they are outliers (a single rank, or at most 10 and at
// most a quarter of the communicator; VERBOSE: below half). A group it does not list is rebuilt
// from the communicator's size (the table's "Ranks per comm") when it is the only one unlisted;
// otherwise the counts block is judged as RAS printed it (Reported::Kind::ras_counts).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evidence/events.h"
#include "evidence/ras_json.h"

namespace denpex::evidence {

// One "Communicator ranks have different <op> operation counts" block.
struct RasTextCounts {
  std::string op;
  std::map<long long, long long> groups;       // operation count -> ranks RAS says are at it
  std::vector<std::pair<int, long long>> listed;  // rank -> count, the ranks printed one by one
  Reported legacy;                             // the block as Reported, when it cannot be rebuilt
};

struct RasTextComm {
  std::string hash;  // "0xfa93daea854b060b", as the JSON writes it
  int group = -1;    // the table's group number ("#0-0": group 0)
  std::map<int, RasRank> ranks;          // ranks named anywhere in the comm's blocks
  std::map<int, RasMissingRank> missing; // INCOMPLETE ranks and ranks with status NOCOMM
  std::vector<RasTextCounts> counts;
};

struct RasDeadProcess {
  long long pid = -1;
  std::string host;
};

// What one text report said, complete once its last line is read.
struct RasTextReport {
  std::string nccl_version, cuda;
  int nodes = -1, processes = -1, gpus = -1;  // the job summary's totals
  int missing_processes = -1, dead_processes = -1;
  std::vector<RasDeadProcess> dead;  // the DEAD section's processes
  std::map<int, int> group_size;     // table group -> ranks per communicator
  std::vector<RasTextComm> comms;
  std::vector<Evidence> evidence;    // the version line and each communicator's header
  Who who;
};

// The parser's place inside a report.
struct RasTextState {
  bool open = false;
  std::string section;  // "summary", "table", "errors", "warnings"
  std::string sub;      // "incomplete", "dead", "comm-incomplete", "init", "async", "status", "counts"
  long long value = 0;  // the group line's value (count, status or error) for the "Rank R --" lines
  bool value_known = false;
  int comm = -1;        // the communicator whose block is being read (index into report.comms)
  RasTextReport report;
};

// A finding of a text report, with the report's lines that show it.
struct RasTextFinding {
  Finding finding;
  std::vector<Evidence> evidence;
};

// The report as RasReport (what judge_ras reads): the counts rebuilt where RAS's listing allows;
// `legacy` gets the counts blocks that cannot be rebuilt. Never fails.
RasReport ras_text_report(const RasTextReport& t, std::vector<Reported>* legacy);

// judge_ras on ras_text_report, plus dead processes RAS names without their ranks
// (`ras-rank-dead` with the hosts). Never fails.
std::vector<Finding> judge_ras_text(const RasTextReport& t, std::vector<Reported>* legacy);

// "Remote process error" -> 6 (ncclRemoteError); -1 for a string RAS does not print.
int ras_error_code(std::string_view text);

}  // namespace denpex::evidence
