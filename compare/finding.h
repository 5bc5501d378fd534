// A finding: one thing wrong (or worth knowing) about a job, the ranks and hosts it blames, and
// how to fix it. Codes: compare/finding_codes.h; JSON shape: the contract's "Finding codes".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compare/finding_code.h"
#include "compare/shell_command.h"

namespace denpex {

enum class Severity { warning, error };

// How many ranks, and how many ranges of them, a finding lists at most (see Finding::ranks_total).
constexpr int kListedRanks = 1024;
constexpr int kListedRanges = 256;

const char* to_string(Severity s);

struct Finding {
  FindingCode code = FindingCode::internal_error;  // every emitter sets it; its text: code_name
  Severity severity = Severity::error;
  std::vector<int> ranks;    // blamed ranks, sorted ascending, no duplicates
  std::vector<std::string> hosts;  // hosts of the blamed ranks, sorted, no duplicates
  std::string message;       // one sentence naming ranks, hosts and what differs
  std::string expected;      // the majority / baseline value ("" when not applicable)
  std::string found;         // the blamed ranks' value
  std::string fix;           // what a person does about it

  // A finding about more ranks than kListedRanks (the absent ranks of a communicator whose size
  // a line states: a log may rightly say `nranks 16384`, or falsely 2^31-1) lists only the first
  // kListedRanks in `ranks`; these then say the whole set. Nothing is sized by a count read from
  // an input.
  long long ranks_total = -1;                     // every blamed rank, counted; -1: `ranks` is all
  std::vector<std::pair<int, int>> rank_ranges;   // the set as inclusive ranges (the first
                                                  // kListedRanges; ranks_total counts them all)

  // No side is the reference (a tie: "no majority for ..."): every holder is named, and none is
  // the odd one. Not in the JSON: the message says it.
  bool tied = false;

  // Collectives mode only (comm.empty() elsewhere).
  std::string comm;          // communicator identity
  long long seq = -1;        // 0-based position in that communicator's sequence

  // A command that shows the fix took (made by compare/shell_command.h, never by pasting text);
  // empty text when the rule has none. In JSON as "verify" and "verify_argv", as diagnose's.
  ShellCommand verify;
};

void to_json(nlohmann::json& j, const Finding& f);

// "ranks 0-3,7", or for a set too large to list "2147483646 ranks (1-2147483646)"; "ranks -"
// when the finding blames none.
std::string ranks_subject(const Finding& f);

// Findings ordered most severe first, then by code, then by first blamed rank; stable.
void sort_findings(std::vector<Finding>* findings);

// True when a finding of this severity rejects the job (`strict`: warnings reject too).
bool rejects(const std::vector<Finding>& findings, bool strict);

}  // namespace denpex
