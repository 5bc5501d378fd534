// What the simulated-job benchmarks (5: judge_sim, 7: mpi_root_sim) start from, in one place so
// both measure the same job: a real rank record as the template, the same three configurations
// made from it, and the process's memory read the same way.
#pragma once

#include <vector>

#include "probe/record.h"

namespace denpex_bench {

// Reads the rank record at `path` (denpex-probe --rank-report). Prints one line to stderr and
// returns false when it cannot be read or is not a rank record.
bool load_template(const char* path, denpex::RankRecord* out);

// The K = 3 configurations: 0 the template (the majority), 1 NCCL_PROTO=Simple, 2 NCCL 2.27.3.
std::vector<denpex::RankRecord> three_configurations(const denpex::RankRecord& base);

// Resident set size now (/proc/self/statm), and its peak so far (getrusage), in KiB; 0 when
// unreadable.
long rss_kb();
long peak_rss_kb();

}  // namespace denpex_bench
