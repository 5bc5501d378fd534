// The recorders' evidence of one job, read together: every Flight Recorder dump (judged as one
// set, compare/fr_judge.h), every NCCL RAS JSON output (evidence/ras_json.h) and every NCCL
// Inspector file (call sequences for compare/collectives' analyser). What `diagnose` and
// `collectives` call for the inputs classify() names as recorders.
#pragma once

#include <string>
#include <vector>

#include "compare/collectives.h"
#include "compare/fr_judge.h"
#include "evidence/classify.h"

namespace denpex::evidence {

struct RecorderEvidence {
  std::vector<FrFinding> findings;       // Flight Recorder and RAS findings, with their evidence
  std::vector<FrRankPosition> positions;  // where each rank's Flight Recorder calls end
  std::vector<CommSequence> sequences;   // from Inspector records
  std::vector<std::string> problems;     // one line per input not read (names the file, what to do)
  std::vector<std::string> warnings;     // unknown dump versions, skipped lines
  std::vector<InputCut> cuts;            // inputs not read because they ended early (also a problem)
  long long unreadable = 0;              // records refused (a number out of range), in inputs read
  std::vector<FrEvidence> unreadable_samples;  // {file, -1, "entry 3: ..."}, the first few
  size_t fr_dumps = 0, ras_reports = 0, inspector_files = 0;
  uint64_t bytes = 0;                    // Flight Recorder bytes read
};

// Reads the inputs whose kind is_recorder(), decoding within `decode`; others are ignored.
// Never throws.
RecorderEvidence read_recorders(const std::vector<ClassifiedInput>& inputs,
                                const DecodeLimits& decode = DecodeLimits{});

// "rank 3 is in flight in collective #1201 (nccl:all_reduce) of process group 0, at step
// (train.py:42)": one line per rank position, for reports. At most `max_lines`, then "... N more".
std::vector<std::string> describe_positions(const std::vector<FrRankPosition>& positions, size_t max_lines);

}  // namespace denpex::evidence
