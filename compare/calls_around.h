// The calls each rank made around a collective divergence, for the report's grid of ranks x
// positions (the JSON key findings[].calls_around, docs/reports.md): ranks that made the same
// calls over the window share a row, so a 1,000-rank communicator is a handful of rows.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compare/collectives.h"

namespace denpex {

struct CallsAroundRow {
  std::vector<int> ranks;              // job-wide ranks where known, else communicator ranks; sorted
  std::vector<std::string> hosts;      // sorted, no duplicates
  std::vector<std::string> calls;      // describe() of each position; "" where the rank made none
};

struct CallsAround {
  std::string comm;
  long long seq = -1;                  // the divergence's position (as in the finding)
  long long first = 0;                 // the position of calls[0]
  std::vector<CallsAroundRow> rows;    // most ranks first; at most max_rows (the rest dropped)
  std::size_t rows_dropped = 0;
};

// The collectives (Send/Recv left out, aligned by recorder collective number where every call
// has one, as analyse_sequences aligns them) of communicator `comm` from position seq - radius to
// seq + radius. No rows when the communicator is not in `sequences` or seq < 0. Never fails.
CallsAround calls_around(const std::vector<CommSequence>& sequences, const std::string& comm, long long seq,
                         int radius = 3, std::size_t max_rows = 16);

// {"comm", "seq", "first", "rows": [{"ranks", "hosts", "calls": [string|null]}], "rows_dropped"}.
nlohmann::json calls_around_json(const CallsAround& around);

// Adds calls_around to every finding of `report` (a collectives JSON report) that names a
// communicator and a position of a collective divergence (collective-mismatch,
// collective-args-mismatch, collective-missing). Never fails; leaves other findings alone.
void attach_calls_around(const std::vector<CommSequence>& sequences, nlohmann::json* report);

}  // namespace denpex
