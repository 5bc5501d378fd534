// The verdict of `denpex-probe collectives` over what the room read from each input
// (evidence/collective_input.h): the findings (divergence, calls in flight, watchdog states, what
// could not be used), the summary, and the JSON and human reports (contract: collectives mode).
// No files: the caller reads, this judges.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/finding.h"
#include "evidence/collective_input.h"

namespace denpex {

struct CollectivesInputs {
  std::vector<CollectiveInput> files;
  // What the recorders' readers (evidence/recorders.h) gave for the other inputs: Inspector call
  // sequences, and Flight Recorder and RAS findings, judged beside the logs and traces.
  std::vector<CommSequence> recorded_sequences;
  std::vector<Finding> recorded_findings;
  size_t recorded_files = 0;
  // Recorder outputs not read because their input ended early (damaged, or past a decoding
  // limit), and records of those read that were refused (a number out of range).
  std::vector<evidence::InputCut> recorded_cuts;
  long long recorded_unreadable = 0;
  std::vector<std::string> recorded_unreadable_samples;  // "FILE: entry 3: ..."
  std::string error;  // one line, set when the inputs cannot be judged
};

struct CollectivesSummary {
  int nranks = 0;
  int nhosts = 0;
  long long unreadable = 0;
  long long unattributed = 0;
  size_t communicators = 0;
};

struct CollectivesVerdict {
  std::vector<Finding> findings;
  CollectivesSummary summary;
  bool reject = false;
  std::string nothing;  // set when no input holds a call or watchdog record: the one-line reason
  std::vector<CommSequence> sequences;  // every input's calls, moved here (the report shows calls around a finding)
};

// Two inputs claiming the same rank of a communicator; "" when none do.
std::string find_duplicate(const CollectivesInputs& inputs);
// Judges the inputs (their sequences are moved out). Never fails.
CollectivesVerdict judge_collectives(CollectivesInputs* inputs, bool strict);
nlohmann::json collectives_json(const CollectivesInputs& inputs, const CollectivesVerdict& v);
// The report for a person.
std::string collectives_text(const CollectivesVerdict& v);

}  // namespace denpex
