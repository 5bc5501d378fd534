// From Flight Recorder dumps (evidence/fr_dump.h) to the judgement of compare/fr_judge.h: each
// dump compacted into its rank's calls per process group as it is added, so a 1,000-rank job is
// judged without holding 1,000 dumps.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "compare/fr_judge.h"
#include "evidence/fr_dump.h"

namespace denpex::evidence {

class FrJobBuilder {
 public:
  // Adds one rank's dump (status ok). Returns false with *why set (one line naming the file)
  // when it cannot be placed: its name gives no rank, or that rank was added already.
  bool add(const FrDump& dump, std::string* why);
  // The job, each rank's calls in seq order. The builder is empty afterwards.
  FrJobDumps finish();

 private:
  uint32_t stack_id(const FrDump& d, const FrEntry& e, std::unordered_map<std::string, uint32_t>* cache);
  std::string key_;  // reused for each entry's stack key
  FrJobDumps job_;
  std::unordered_map<std::string, size_t> group_index_;
  std::vector<int> world_;
};

struct FrAnalysis {
  FrJudgement judgement;
  std::vector<std::string> problems;  // one line per dump not read (unreadable, refused, no rank...)
  std::vector<std::string> warnings;  // from dumps that were read (unknown versions...)
  std::vector<InputCut> cuts;         // dumps not read because their input ended early
  long long unreadable = 0;           // records of read dumps refused (a number out of range)
  std::vector<FrEvidence> unreadable_samples;  // {file, -1, "entry 3: ..."}, the first few
  size_t dumps = 0;                   // dumps read
  uint64_t entries = 0;
  uint64_t bytes = 0;                 // bytes of dump read (decoded)
};

// Opens each path (evidence/input_source.h: compressed dumps too, within `decode`), reads it as
// a dump, and judges them together. `threads` workers read and parse the files, at most 8 dumps
// and, past the next one to add, kHeldDumpBytes of read dumps ahead of the one being added; the
// dumps are added in path order, so the result does not depend on them. Memory is then the job
// (a few dozen bytes per call) plus at most `threads` dumps being read, kHeldDumpBytes held and
// the one being added, each within fr_dump.h's bound of its own size. Never throws; a file that
// cannot be read is a problem (and a cut, when its input ended early), the rest still judged.
constexpr uint64_t kHeldDumpBytes = uint64_t{256} << 20;
FrAnalysis analyse_fr_dumps(const std::vector<std::string>& paths,
                            const PickleLimits& limits = PickleLimits{}, unsigned threads = 2,
                            const DecodeLimits& decode = DecodeLimits{});

// The same on dumps already read (tests, and callers that classified the inputs first).
FrAnalysis analyse_fr_dumps(const std::vector<FrDump>& dumps);

}  // namespace denpex::evidence
